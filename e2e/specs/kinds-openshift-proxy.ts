// A plain-HTTP front for kube-apiserver that plays openshift-apiserver's part for the two
// DeploymentConfig requests a CRD cannot serve (§7.6):
// - a strategic merge patch: kube-apiserver answers 415 for custom resources. The proxy merges
//   with kube-apiserver's own strategic-merge code by patching a throw-away PodTemplate (same pod
//   template schema and merge keys), then writes the result to the DeploymentConfig with a JSON
//   patch under the caller's identity, keeping the caller's resourceVersion precondition, field
//   manager and RBAC;
// - POST deploymentconfigs/<name>/instantiate: CRDs have no such subresource. The proxy checks the
//   caller's RBAC with a SelfSubjectAccessReview, records the request and answers 201 with the
//   DeploymentConfig, as openshift-apiserver does; no deployment follows (no OpenShift controller).
// Everything else (lists, watches, other writes) passes through unchanged.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import path from 'node:path';
import type { ClusterClient } from '../harness/cluster.ts';
import {
  isRecord,
  KubeJson,
  recordAt,
  stringAt,
  STRATEGIC_MERGE_PATCH,
  type JsonRecord,
} from '../harness/crds.ts';

const DEPLOYMENT_CONFIG_PATH =
  /^\/apis\/apps\.openshift\.io\/v1\/namespaces\/([^/]+)\/deploymentconfigs\/([^/]+?)(\/instantiate)?$/;
const JSON_PATCH = 'application/json-patch+json';

/** A request the proxy answered itself, as it arrived, with the status it got. */
export interface InterceptedRequest {
  readonly method: string;
  readonly namespace: string;
  readonly name: string;
  readonly subresource: 'instantiate' | undefined;
  readonly query: Readonly<Record<string, string>>;
  readonly contentType: string;
  readonly body: unknown;
  readonly status: number;
}

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

interface UpstreamReply {
  readonly status: number;
  readonly text: string;
}

interface Target {
  readonly namespace: string;
  readonly name: string;
  readonly pathname: string;
  readonly search: string;
  readonly authorization: string | undefined;
}

export class OpenShiftProxyError extends Error {
  override readonly name = 'OpenShiftProxyError';
}

function status(code: number, reason: string, message: string): Answer {
  return {
    status: code,
    body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code },
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

/** Only what kreload writes to a DeploymentConfig: W annotations, resourceVersion, the template. */
function unsupportedField(patch: JsonRecord): string | undefined {
  const allowed: Readonly<Record<string, readonly string[]>> = {
    metadata: ['resourceVersion', 'annotations'],
    spec: ['template'],
  };
  for (const [top, value] of Object.entries(patch)) {
    const keys = allowed[top];
    if (keys === undefined) return top;
    const extra = Object.keys(isRecord(value) ? value : {}).find((key) => !keys.includes(key));
    if (extra !== undefined) return `${top}.${extra}`;
  }
  return undefined;
}

export class OpenShiftProxy {
  readonly #cluster: ClusterClient;
  readonly #admin: KubeJson;
  readonly #intercepted: InterceptedRequest[] = [];
  #server: Server | undefined;
  #ca: Buffer | undefined;

  constructor(deps: { cluster: ClusterClient }) {
    this.#cluster = deps.cluster;
    this.#admin = new KubeJson({ kc: deps.cluster.kc });
  }

  get url(): string {
    const address = this.#server?.address();
    if (address === null || address === undefined || typeof address === 'string') {
      throw new OpenShiftProxyError('the proxy is not listening');
    }
    return `http://127.0.0.1:${address.port}`;
  }

  /** Requests answered by the proxy itself, oldest first. */
  get intercepted(): readonly InterceptedRequest[] {
    return [...this.#intercepted];
  }

  async start(): Promise<void> {
    this.#ca = await readFile(this.#cluster.caPath);
    const server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'text/plain' });
        res.end(`kinds-openshift-proxy: ${String(error)}`);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    this.#server = server;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });
  }

  /** A kubeconfig that reaches the cluster through this proxy with `token`. */
  async kubeconfig(token: string): Promise<string> {
    const file = path.join(
      this.#cluster.info.scratchDir,
      `openshift-proxy-${randomBytes(3).toString('hex')}.kubeconfig`,
    );
    const config = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'proxy', cluster: { server: this.url, 'insecure-skip-tls-verify': true } },
      ],
      users: [{ name: 'proxy', user: { token } }],
      contexts: [{ name: 'proxy', context: { cluster: 'proxy', user: 'proxy' } }],
      'current-context': 'proxy',
    };
    await mkdir(this.#cluster.info.scratchDir, { recursive: true, mode: 0o700 });
    await writeFile(file, JSON.stringify(config), { mode: 0o600 });
    return file;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const match = DEPLOYMENT_CONFIG_PATH.exec(url.pathname);
    const contentType = req.headers['content-type'] ?? '';
    const strategic = req.method === 'PATCH' && contentType.startsWith(STRATEGIC_MERGE_PATCH);
    const instantiate = req.method === 'POST' && match?.[3] !== undefined;
    if (match === null || !(strategic || instantiate)) {
      this.#passThrough(req, res);
      return;
    }
    const body: unknown = JSON.parse((await readBody(req)).toString('utf8'));
    const target: Target = {
      namespace: match[1] ?? '',
      name: match[2] ?? '',
      pathname: url.pathname.replace(/\/instantiate$/, ''),
      search: url.search,
      authorization: req.headers.authorization,
    };
    const answer = instantiate
      ? await this.#instantiate(target, body)
      : await this.#strategicMerge(target, body);
    this.#intercepted.push({
      method: req.method ?? '',
      namespace: target.namespace,
      name: target.name,
      subresource: instantiate ? 'instantiate' : undefined,
      query: Object.fromEntries(url.searchParams),
      contentType,
      body,
      status: answer.status,
    });
    res.writeHead(answer.status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  }

  #passThrough(req: IncomingMessage, res: ServerResponse): void {
    const upstream = this.#upstreamRequest(req.method ?? 'GET', req.url ?? '/', req.headers);
    upstream.on('response', (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    });
    upstream.on('error', (error) => {
      if (res.headersSent) res.destroy(error);
      else {
        res.writeHead(502, { 'Content-Type': 'text/plain' });
        res.end(`kinds-openshift-proxy: ${error.message}`);
      }
    });
    // A watch ends when its client goes away.
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  }

  #upstreamRequest(method: string, pathWithQuery: string, headers: IncomingHttpHeaders) {
    const server = new URL(this.#cluster.server);
    return httpsRequest({
      method,
      hostname: server.hostname,
      port: server.port,
      path: pathWithQuery,
      headers: { ...headers, host: server.host },
      ...(this.#ca === undefined ? {} : { ca: this.#ca }),
    });
  }

  /** One JSON request as the caller (its bearer token), for the emulated operations. */
  async #asCaller(
    target: Target,
    req: { method: string; path: string; body?: unknown; contentType?: string },
  ): Promise<UpstreamReply> {
    const payload = req.body === undefined ? undefined : JSON.stringify(req.body);
    const headers: IncomingHttpHeaders = {
      accept: 'application/json',
      ...(target.authorization === undefined ? {} : { authorization: target.authorization }),
      ...(payload === undefined ? {} : { 'content-type': req.contentType ?? 'application/json' }),
    };
    const upstream = this.#upstreamRequest(req.method, req.path, headers);
    return new Promise((resolve, reject) => {
      upstream.on('response', (reply) => {
        readBody(reply).then((buffer) => {
          resolve({ status: reply.statusCode ?? 0, text: buffer.toString('utf8') });
        }, reject);
      });
      upstream.on('error', reject);
      upstream.end(payload);
    });
  }

  async #read(target: Target): Promise<Answer> {
    const reply = await this.#asCaller(target, { method: 'GET', path: target.pathname });
    return { status: reply.status, body: JSON.parse(reply.text) as unknown };
  }

  async #strategicMerge(target: Target, patch: unknown): Promise<Answer> {
    if (!isRecord(patch)) return status(400, 'BadRequest', 'the patch is not a JSON object');
    const unsupported = unsupportedField(patch);
    if (unsupported !== undefined) {
      return status(422, 'Invalid', `kinds-openshift-proxy cannot merge field ${unsupported}`);
    }
    const current = await this.#read(target);
    if (current.status !== 200) return current;
    const resourceVersion = stringAt(current.body, ['metadata', 'resourceVersion']) ?? '';
    const wanted = stringAt(patch, ['metadata', 'resourceVersion']);
    if (wanted !== undefined && wanted !== resourceVersion) {
      return status(
        409,
        'Conflict',
        `Operation cannot be fulfilled on deploymentconfigs.apps.openshift.io "${target.name}": ` +
          'the object has been modified; please apply your changes to the latest version and try again',
      );
    }
    const merged = await this.#mergeLikeApiServer(target.namespace, current.body, patch);
    const operations: JsonRecord[] = [
      { op: 'replace', path: '/metadata/resourceVersion', value: resourceVersion },
      { op: 'add', path: '/metadata/annotations', value: merged.annotations },
    ];
    if (isRecord(recordAt(patch, ['spec']).template)) {
      operations.push({ op: 'add', path: '/spec/template', value: merged.template });
    }
    const reply = await this.#asCaller(target, {
      method: 'PATCH',
      path: `${target.pathname}${target.search}`,
      body: operations,
      contentType: JSON_PATCH,
    });
    return { status: reply.status, body: JSON.parse(reply.text) as unknown };
  }

  /** kube-apiserver's strategic merge of `patch` into the DeploymentConfig's annotations and template. */
  async #mergeLikeApiServer(
    namespace: string,
    current: unknown,
    patch: JsonRecord,
  ): Promise<{ annotations: JsonRecord; template: JsonRecord }> {
    const collection = `/api/v1/namespaces/${namespace}/podtemplates`;
    const created = await this.#admin.request({
      method: 'POST',
      path: collection,
      body: {
        apiVersion: 'v1',
        kind: 'PodTemplate',
        metadata: {
          generateName: 'openshift-proxy-merge-',
          annotations: recordAt(current, ['metadata', 'annotations']),
        },
        template: recordAt(current, ['spec', 'template']),
      },
    });
    const name = stringAt(created, ['metadata', 'name']) ?? '';
    try {
      const template = recordAt(patch, ['spec']).template;
      const merged = await this.#admin.request({
        method: 'PATCH',
        path: `${collection}/${name}`,
        body: {
          metadata: { annotations: recordAt(patch, ['metadata']).annotations ?? {} },
          ...(isRecord(template) ? { template } : {}),
        },
        contentType: STRATEGIC_MERGE_PATCH,
      });
      return {
        annotations: recordAt(merged, ['metadata', 'annotations']),
        template: recordAt(merged, ['template']),
      };
    } finally {
      await this.#admin.request({ method: 'DELETE', path: `${collection}/${name}` });
    }
  }

  async #instantiate(target: Target, body: unknown): Promise<Answer> {
    const review = await this.#asCaller(target, {
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: {
          resourceAttributes: {
            group: 'apps.openshift.io',
            resource: 'deploymentconfigs',
            subresource: 'instantiate',
            verb: 'create',
            namespace: target.namespace,
            name: target.name,
          },
        },
      },
    });
    const allowed = recordAt(JSON.parse(review.text) as unknown, ['status']).allowed === true;
    if (!allowed) {
      return status(
        403,
        'Forbidden',
        `deploymentconfigs.apps.openshift.io "${target.name}" is forbidden: cannot create resource "deploymentconfigs/instantiate"`,
      );
    }
    if (stringAt(body, ['name']) !== target.name) {
      return status(400, 'BadRequest', 'DeploymentRequest name does not match the URL');
    }
    const current = await this.#read(target);
    return current.status === 200 ? { status: 201, body: current.body } : current;
  }
}
