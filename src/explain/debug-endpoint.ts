/**
 * `GET /debug/explain?kind=…&namespace=…&name=…[&o=json|yaml|table]` on the metrics listener
 * (docs/explain.md "From the running controller", ADR 0031): the query checked, the controller's
 * answer rendered. Every bad query is a 4xx with a JSON `{"error": …}` naming the parameter.
 */
import type { ControllerAnswer, ControllerQuery } from './controller-explain.ts';
import type { OutputFormat, YamlDumper } from './render.ts';
import { OUTPUT_FORMATS, renderReport } from './render.ts';
import { explainTargetOf } from './targets.ts';
import type { KindTable } from '../rollout/kinds.ts';

export interface DebugReply {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

const JSON_TYPE = 'application/json';
const CONTENT_TYPES: Readonly<Record<OutputFormat, string>> = {
  json: JSON_TYPE,
  yaml: 'application/yaml',
  table: 'text/plain; charset=utf-8',
  wide: 'text/plain; charset=utf-8',
};
const PARAMETERS = ['kind', 'namespace', 'name', 'o'] as const;

function failure(status: number, error: string): DebugReply {
  return { status, contentType: JSON_TYPE, body: `${JSON.stringify({ error })}\n` };
}

function isOutputFormat(value: string): value is OutputFormat {
  return (OUTPUT_FORMATS as readonly string[]).includes(value);
}

type Parsed = { readonly query: ControllerQuery; readonly format: OutputFormat } | string;

/** The query, or the message of a 400. */
function parseQuery(params: URLSearchParams, kinds: KindTable): Parsed {
  const unknown = [...new Set(params.keys())].filter(
    (key) => !(PARAMETERS as readonly string[]).includes(key),
  );
  if (unknown.length > 0) {
    return `unknown parameter ${unknown.map((key) => `"${key}"`).join(', ')}; expected ${PARAMETERS.join(', ')}`;
  }
  const repeated = PARAMETERS.filter((key) => params.getAll(key).length > 1);
  if (repeated.length > 0) return `parameter "${repeated.join('", "')}" given more than once`;
  const missing = (['kind', 'namespace', 'name'] as const).filter(
    (key) => (params.get(key) ?? '') === '',
  );
  if (missing.length > 0) return `missing parameter ${missing.map((key) => `"${key}"`).join(', ')}`;
  const kind = params.get('kind') ?? '';
  const target = explainTargetOf(kind, kinds);
  if (target === undefined) {
    return `unknown kind "${kind}": a workload kind (Deployment, CronJob, …) or ConfigMap, Secret, SecretProviderClass`;
  }
  const format = params.get('o') ?? 'json';
  if (!isOutputFormat(format))
    return `o must be one of ${OUTPUT_FORMATS.join(', ')}, got "${format}"`;
  const namespace = params.get('namespace') ?? '';
  const name = params.get('name') ?? '';
  return { query: { ...target, namespace, name }, format };
}

const STATUS_OF: Readonly<Record<Exclude<ControllerAnswer['outcome'], 'explained'>, number>> = {
  'not-found': 404,
  'not-synced': 503,
};

export async function debugExplainReply(
  params: URLSearchParams,
  kinds: KindTable,
  answer: (query: ControllerQuery) => ControllerAnswer | Promise<ControllerAnswer>,
  dumpYaml: YamlDumper,
): Promise<DebugReply> {
  const parsed = parseQuery(params, kinds);
  if (typeof parsed === 'string') return failure(400, parsed);
  const result = await answer(parsed.query);
  if (result.outcome !== 'explained') return failure(STATUS_OF[result.outcome], result.message);
  return {
    status: 200,
    contentType: CONTENT_TYPES[parsed.format],
    body: renderReport(result.report, parsed.format, dumpYaml),
  };
}
