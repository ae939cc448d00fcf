/**
 * The parts of `@kubernetes/client-node` kreload uses, imported from the modules that define them
 * rather than the package root: the root's `index.js` loads the whole generated API (every model and
 * `*Api` class) for names kreload never calls. With main.ts's hook (narrow-client-node.ts) the
 * controller then loads about 20 of client-node's 870 modules (ADR 0032). Types may still come from
 * the root: type imports are erased.
 */
export { KubeConfig } from '@kubernetes/client-node/dist/config.js';
export { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
export { HttpMethod, RequestContext } from '@kubernetes/client-node/dist/gen/http/http.js';
export { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
