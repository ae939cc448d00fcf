/**
 * `kreload explain … --via-controller <url>`: asks a running controller's `GET /debug/explain`
 * (ADR 0031) instead of reading the cluster, e.g. through `kubectl port-forward` or a
 * `kubectl proxy` path to the pod. The JSON answer is rendered here, so every -o works and the exit
 * codes are those of the CLI.
 */
import type { ExplainReport } from '../../explain/model.ts';
import { isJsonObject } from '../../core/json.ts';
import type { JsonValue } from '../../core/json.ts';

/** The controller's answer, or why there is none, with the exit code class it maps to. */
export type ControllerReply =
  | { readonly outcome: 'explained'; readonly report: ExplainReport }
  | {
      readonly outcome: 'usage' | 'not-found' | 'failure';
      readonly message: string;
    };

/** `<base>/debug/explain`, keeping a path prefix such as kubectl proxy's `/api/v1/…/proxy/`. */
export function debugExplainUrl(base: string, query: Readonly<Record<string, string>>): URL {
  const url = new URL('debug/explain', base.endsWith('/') ? base : `${base}/`);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  return url;
}

function parsed(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

/** Maps the endpoint's statuses (docs/explain.md "From the running controller") to the CLI's. */
export function controllerReply(status: number, body: string): ControllerReply {
  const json = parsed(body);
  if (status === 200 && isJsonObject(json) && isJsonObject(json.config)) {
    return { outcome: 'explained', report: json as unknown as ExplainReport };
  }
  const error = isJsonObject(json) && typeof json.error === 'string' ? json.error : undefined;
  if (error === undefined) {
    const hint = status === 404 ? ' (is the controller running with --enable-debug-explain?)' : '';
    return {
      outcome: status === 404 ? 'usage' : 'failure',
      message: `the controller answered ${status} without an explanation${hint}`,
    };
  }
  const outcome = status === 400 ? 'usage' : status === 404 ? 'not-found' : 'failure';
  return { outcome, message: `the controller answered ${status}: ${error}` };
}
