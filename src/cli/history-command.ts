/**
 * `kreload history <kind>/<name> [-n ns] [-o table|wide|json|yaml] [--show-values]`: the revisions of a
 * Deployment, StatefulSet or DaemonSet with the config snapshots each runs (docs/config-revisions.md
 * "History"). Read-only, with the user's kubeconfig; no controller options are needed.
 */
import { parseArgs } from 'node:util';
import { dumpYaml } from '@kubernetes/client-node';
import type { WorkloadKind } from '../core/types.ts';
import type { OutputFormat } from '../explain/render.ts';
import { OUTPUT_FORMATS } from '../explain/render.ts';
import { explainTargetOf } from '../explain/targets.ts';
import { renderHistory } from '../history/render.ts';
import type { KubeConfig } from '../kube/client-node.ts';
import type { KubeTransport } from '../kube/transport.ts';
import { createKubeTransport } from '../kube/transport.ts';
import { BUILT_IN_KIND_TABLE, findKindRow } from '../rollout/kinds.ts';
import { HistoryTargetError, KubeHistoryReads, gatherHistory } from './history/gather.ts';
import { namespaceProblem, objectArgument } from './object-argument.ts';
import { KubeconfigError, contextNamespace, loadUserKubeConfig } from './user-kubeconfig.ts';

/** docs/config-revisions.md "Exit codes". */
export const HISTORY_EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  targetNotFound: 3,
  /** The workload or its revisions may not be read, or some snapshot may not (shown as such). */
  forbidden: 4,
} as const;

export interface HistoryCommandIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly fileExists: (path: string) => boolean;
  /** Tests connect to their own API server; by default the kubeconfig's cluster. */
  readonly connect?: (kubeConfig: KubeConfig) => KubeTransport;
}

const USAGE = [
  'Usage: kreload history <kind>/<name> [-n <namespace>] [-o table|wide|json|yaml] [--show-values]',
  '       kreload history <kind> <name> …',
  '                       [--kubeconfig <path>] [--context <name>]',
  '  <kind>: deployment, statefulset or daemonset',
  '  --show-values: print the values of changed ConfigMap keys (never of Secrets)',
].join('\n');

interface HistoryArgs {
  readonly kind: WorkloadKind;
  readonly name: string;
  readonly namespace: string | undefined;
  readonly output: OutputFormat;
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
  readonly showValues: boolean;
}

const OPTIONS = {
  namespace: { type: 'string', short: 'n' },
  output: { type: 'string', short: 'o' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  'show-values': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function isOutputFormat(value: string): value is OutputFormat {
  return (OUTPUT_FORMATS as readonly string[]).includes(value);
}

function targetProblem(
  positionals: readonly string[],
): string | { kind: WorkloadKind; name: string; rest: readonly string[] } {
  const split = objectArgument(positionals);
  if (typeof split === 'string') return split;
  const { word, name, rest } = split;
  // Only built-in kinds keep revisions: a configured kind is never a history target.
  const target = explainTargetOf(word, BUILT_IN_KIND_TABLE);
  if (target?.what !== 'workload') return `unknown kind "${word}"`;
  const row = findKindRow(target.kind);
  if (row?.revisionKind === undefined) {
    return `a ${target.kind} keeps no revision history: history needs a deployment, statefulset or daemonset`;
  }
  return { kind: row.kind, name, rest };
}

/** The arguments, 'help', or the usage problems. */
function parseHistoryArgs(argv: readonly string[]): HistoryArgs | 'help' | string[] {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    return [error instanceof Error ? error.message : String(error)];
  }
  const { values, positionals } = parsed;
  if (values.help === true) return 'help';
  const target = targetProblem(positionals);
  const output = values.output ?? 'table';
  const problems = [
    ...(typeof target === 'string' ? [target] : []),
    ...(typeof target === 'string' ? [] : target.rest).map(
      (extra) => `unexpected argument "${extra}"`,
    ),
    ...[namespaceProblem(values.namespace)].filter((problem) => problem !== undefined),
    ...(isOutputFormat(output)
      ? []
      : [`-o must be one of ${OUTPUT_FORMATS.join(', ')}, got "${output}"`]),
  ];
  if (problems.length > 0 || typeof target === 'string' || !isOutputFormat(output)) return problems;
  return {
    kind: target.kind,
    name: target.name,
    namespace: values.namespace,
    output,
    kubeconfig: values.kubeconfig,
    context: values.context,
    showValues: values['show-values'] === true,
  };
}

function causeText(error: Error): string {
  return error.cause instanceof Error ? `: ${error.cause.message}` : '';
}

async function history(args: HistoryArgs, io: HistoryCommandIo): Promise<number> {
  const kc = loadUserKubeConfig(args, io);
  const transport = (io.connect ?? ((kubeConfig) => createKubeTransport({ kubeConfig })))(kc);
  const report = await gatherHistory(
    new KubeHistoryReads({ transport }),
    { kind: args.kind, namespace: args.namespace ?? contextNamespace(kc), name: args.name },
    args.showValues,
  );
  io.stdout.write(renderHistory(report, args.output, (value) => dumpYaml(value)));
  return report.incomplete ? HISTORY_EXIT.forbidden : HISTORY_EXIT.ok;
}

/** Exit codes: docs/config-revisions.md. */
export async function runHistoryCommand(
  argv: readonly string[],
  io: HistoryCommandIo,
): Promise<number> {
  const args = parseHistoryArgs(argv);
  if (args === 'help') {
    io.stdout.write(`${USAGE}\n`);
    return HISTORY_EXIT.ok;
  }
  if (Array.isArray(args)) {
    for (const problem of args) io.stderr.write(`kreload history: ${problem}\n`);
    io.stderr.write(`${USAGE}\n`);
    return HISTORY_EXIT.usage;
  }
  try {
    return await history(args, io);
  } catch (error) {
    if (error instanceof KubeconfigError) {
      io.stderr.write(`kreload history: ${error.message}${causeText(error)}\n`);
      return HISTORY_EXIT.usage;
    }
    if (error instanceof HistoryTargetError) {
      io.stderr.write(`kreload history: ${error.message}\n`);
      return error.reason === 'not-found' ? HISTORY_EXIT.targetNotFound : HISTORY_EXIT.forbidden;
    }
    const message = error instanceof Error ? `${error.message}${causeText(error)}` : String(error);
    io.stderr.write(`kreload history: ${message}\n`);
    return HISTORY_EXIT.failure;
  }
}
