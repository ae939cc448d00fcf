// `kreload explain` as the e2e specs run it: the real CLI (dist/main.js) with the cluster's admin
// kubeconfig, and GET /debug/explain on a running kreload's metrics port. The JSON shapes are the
// parts of docs/explain.md's report the specs assert on.
import { expect } from 'vitest';
import type { KreloadProcess } from './kreload-process.ts';
import { runKreloadToExit, type FinishedRun } from './kreload-runs.ts';

export interface ExplainedSource {
  readonly key: string;
  readonly decision: { readonly rule: string };
  readonly currentHash?: string;
  readonly verdict: string;
  readonly because: string;
  readonly stateRule?: string;
  /** B's hash for the source, from W or the baseline store. */
  readonly baseline?: string;
  /** The ReloadPolicies that bind the source. */
  readonly policies?: readonly string[];
  readonly predicts: { readonly change: string; readonly delete: string; readonly create: string };
}

export interface ExplainJson {
  readonly config: { readonly kind: string };
  readonly assumptions: readonly string[];
  readonly workload?: {
    readonly gate?: string;
    readonly sources: readonly ExplainedSource[];
    readonly problems: readonly { readonly key: string }[];
    readonly facts: {
      readonly paused: boolean;
      /** Where B lives: `workload`, or the baseline store's `<namespace>/<ConfigMap>`. */
      readonly baselineIn?: string;
      readonly resumesAt?: string;
      readonly controller?: {
        readonly leading: boolean;
        readonly marks: readonly { readonly kind: string; readonly source: string }[];
        readonly queue: { readonly state: string; readonly dueAt?: string };
      };
      readonly policy?: { readonly state: string; readonly policies?: readonly string[] };
      readonly rollout?: {
        readonly of: 'kreload' | 'current';
        readonly generation?: number;
        /** Found in progress when the controller started, not seen being started. */
        readonly adopted?: boolean;
        readonly state: string;
        readonly reason?: string;
        readonly result?: string;
      };
      /** Halted changes this workload is held by (`--rollout-waves`). */
      readonly halts?: readonly {
        readonly source: string;
        readonly hash: string;
        readonly by: { readonly kind: string; readonly namespace: string; readonly name: string };
        readonly reason: string;
        readonly self: boolean;
        readonly resume: string;
      }[];
    };
  };
  readonly source?: {
    readonly rolls: readonly { readonly name: string }[];
    readonly doesNotRoll: readonly { readonly name: string; readonly source: ExplainedSource }[];
  };
}

/** Explain's own flags go before `--`: everything after it is the controller's. */
export function runExplain(kubeconfig: string, args: readonly string[]): Promise<FinishedRun> {
  return runKreloadToExit({
    args: ['explain', `--kubeconfig=${kubeconfig}`, ...args],
    timeoutMs: 60_000,
  });
}

/** The CLI's JSON report for `target`; the run must exit 0. */
export async function explainJson(
  kubeconfig: string,
  target: string,
  namespace: string,
  tail: readonly string[] = [],
): Promise<ExplainJson> {
  const run = await runExplain(kubeconfig, [target, '-n', namespace, '-o', 'json', ...tail]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as ExplainJson;
}

export interface EndpointReply {
  readonly status: number;
  readonly contentType: string | null;
  readonly body: string;
}

/** GET /debug/explain?<query> on the controller's metrics port. */
export async function askController(
  kreload: KreloadProcess,
  query: Readonly<Record<string, string>>,
): Promise<EndpointReply> {
  const response = await fetch(
    kreload.url(`/debug/explain?${new URLSearchParams(query).toString()}`),
  );
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    body: await response.text(),
  };
}

/** What the CLI and the controller must agree on for one source. */
export function comparable(source: ExplainedSource) {
  const { key, decision, currentHash, verdict, because, stateRule, predicts } = source;
  return { key, rule: decision.rule, currentHash, verdict, because, stateRule, predicts };
}
