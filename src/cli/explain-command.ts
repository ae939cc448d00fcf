/**
 * `kreload explain <kind>/<name> [-n ns] [-o table|wide|json|yaml] [--from ns/name] [-- <flags>]`:
 * "why did (or didn't) it reload?" (docs/explain.md). Read-only, with the user's kubeconfig. The
 * controller's options come from the running kreload's Deployment (`--from`, default
 * kreload-system/kreload), or from the controller flags after `--`; the report says which.
 */
import { dumpYaml } from '@kubernetes/client-node';
import type { KubeConfig } from '../kube/client-node.ts';
import { ConfigError, formatConfigProblems } from '../config/config-error.ts';
import { checkDnsSubdomain } from '../config/k8s-names.ts';
import type { Options } from '../config/parse-options.ts';
import { parseOptions } from '../config/parse-options.ts';
import { ApiError } from '../core/api-error.ts';
import { workloadKey } from '../core/keys.ts';
import type { SourceType, WorkloadKey, WorkloadKindName, WorkloadView } from '../core/types.ts';
import type { KindTable, WorkloadKindRow } from '../rollout/kinds.ts';
import { BUILT_IN_KIND_TABLE, kindTable, rollsByRecreation } from '../rollout/kinds.ts';
import { JOURNAL_NAME, parseEntry, readJournalData } from '../kube/recreation-journal.ts';
import { controllerCommandLine, optionsOfCommandLine } from './explain/controller-config.ts';
import type { JournalledRecreation } from './explain/gather.ts';
import { ExplainTargetError, gatherSource, gatherWorkload } from './explain/gather.ts';
import type { ConfigOrigin, ExplainReport } from '../explain/model.ts';
import { ASSUMPTIONS } from '../explain/model.ts';
import type { BaselineStoreList } from './explain/reader.ts';
import { ExplainReader } from './explain/reader.ts';
import { BaselineRecords } from '../kube/baseline-records.ts';
import type { StoredBaselineFact } from '../explain/explain-workload.ts';
import type { ControllerReply } from './explain/via-controller.ts';
import { controllerReply, debugExplainUrl } from './explain/via-controller.ts';
import type { OutputFormat } from '../explain/render.ts';
import { OUTPUT_FORMATS, renderReport } from '../explain/render.ts';
import { explainTargetOf } from '../explain/targets.ts';
import type { KubeTransport } from '../kube/transport.ts';
import { createKubeTransport } from '../kube/transport.ts';
import { namespaceProblem, objectArgument } from './object-argument.ts';
import { KubeconfigError, contextNamespace, loadUserKubeConfig } from './user-kubeconfig.ts';

/** docs/explain.md "Exit codes". */
export const EXPLAIN_EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  targetNotFound: 3,
  cannotTell: 4,
} as const;

export interface ExplainCommandIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly fileExists: (path: string) => boolean;
  readonly now?: () => Date;
  /** Tests connect to their own API server; by default the kubeconfig's cluster. */
  readonly connect?: (kubeConfig: KubeConfig) => KubeTransport;
  /** `--via-controller`'s HTTP client; default the global fetch. */
  readonly fetch?: typeof fetch;
}

export const DEFAULT_FROM = 'kreload-system/kreload';

const USAGE = [
  'Usage: kreload explain <kind>/<name> [-n <namespace>] [-o table|wide|json|yaml]',
  '       kreload explain <kind> <name> …',
  '                       [--kubeconfig <path>] [--context <name>]',
  '                       [--from <namespace>/<deployment>] [-- <kreload flags>]',
  '                       [--via-controller <url of its metrics port>]',
  '  <kind>: deployment, daemonset, statefulset, cronjob, job, rollout, deploymentconfig',
  '          or a kind the controller is configured with (a workload),',
  '          or configmap, secret, secretproviderclass (a source)',
].join('\n');

type Target =
  | { readonly what: 'workload'; readonly kind: WorkloadKindName; readonly name: string }
  | { readonly what: 'source'; readonly type: SourceType; readonly name: string };

function targetOf(
  positionals: readonly string[],
): { target: Target; rest: readonly string[] } | string {
  const split = objectArgument(positionals);
  if (typeof split === 'string') return split;
  const { word, name, rest } = split;
  // A word no built-in kind or source type has may name a kind the controller is configured with:
  // it is looked up again once the controller's options are known (`workloadRowOf`).
  const target = explainTargetOf(word, BUILT_IN_KIND_TABLE) ?? { what: 'workload', kind: word };
  return { target: { ...target, name }, rest };
}

interface ExplainArgs {
  readonly target: Target;
  readonly namespace: string | undefined;
  readonly output: OutputFormat;
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
  readonly from: string | undefined;
  readonly viaController: string | undefined;
  readonly controllerArgs: readonly string[] | undefined;
}

const VALUE_FLAGS: Readonly<Record<string, ValueField>> = {
  '-n': 'namespace',
  '--namespace': 'namespace',
  '-o': 'output',
  '--output': 'output',
  '--kubeconfig': 'kubeconfig',
  '--context': 'context',
  '--from': 'from',
  '--via-controller': 'viaController',
};

function splitFlag(token: string): { flag: string; value: string | undefined } {
  const equals = token.indexOf('=');
  if (!token.startsWith('-') || equals < 0) return { flag: token, value: undefined };
  return { flag: token.slice(0, equals), value: token.slice(equals + 1) };
}

type ValueField = 'namespace' | 'output' | 'kubeconfig' | 'context' | 'from' | 'viaController';

interface Tokens {
  readonly values: Partial<Record<ValueField, string>>;
  readonly positional: readonly string[];
  readonly problems: readonly string[];
  readonly controllerArgs: readonly string[] | undefined;
  readonly help: boolean;
}

function tokenize(argv: readonly string[]): Tokens {
  const values: Partial<Record<ValueField, string>> = {};
  const positional: string[] = [];
  const problems: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index] ?? '';
    if (token === '--') {
      return { values, positional, problems, controllerArgs: argv.slice(index + 1), help: false };
    }
    if (token === '-h' || token === '--help') {
      return { values, positional, problems, controllerArgs: undefined, help: true };
    }
    const { flag, value } = splitFlag(token);
    const field = VALUE_FLAGS[flag];
    if (field === undefined) {
      if (token.startsWith('-'))
        problems.push(`unknown flag "${token}" (controller flags go after --)`);
      else positional.push(token);
      continue;
    }
    const given = value ?? argv[index + 1];
    if (value === undefined) index += 1;
    if (given === undefined || given === '') problems.push(`${flag} needs a value`);
    else values[field] = given;
  }
  return { values, positional, problems, controllerArgs: undefined, help: false };
}

function isOutputFormat(value: string): value is OutputFormat {
  return (OUTPUT_FORMATS as readonly string[]).includes(value);
}

function isNamespacedName(text: string): boolean {
  const [namespace = '', name = '', ...rest] = text.split('/');
  return (
    rest.length === 0 &&
    namespaceProblem(namespace) === undefined &&
    checkDnsSubdomain(name) === undefined
  );
}

function crossChecks(tokens: Tokens): string[] {
  const { values, controllerArgs } = tokens;
  const problems: string[] = [];
  if (values.from !== undefined && controllerArgs !== undefined) {
    problems.push('--from and controller flags after -- are alternatives: give one');
  }
  if (values.from !== undefined && !isNamespacedName(values.from)) {
    problems.push(`--from must be <namespace>/<deployment>, got "${values.from}"`);
  }
  const namespace = namespaceProblem(values.namespace);
  if (namespace !== undefined) problems.push(namespace);
  const via = values.viaController;
  if (via !== undefined && (values.from !== undefined || controllerArgs !== undefined)) {
    problems.push('--via-controller asks the controller for its own options: no --from or --');
  }
  if (via !== undefined && !/^https?:\/\/./.test(via)) {
    problems.push(`--via-controller must be an http:// or https:// URL, got "${via}"`);
  }
  return problems;
}

/** The usage problems, or the arguments; `help` when asked. */
function parseArgs(argv: readonly string[]): ExplainArgs | 'help' | string[] {
  const tokens = tokenize(argv);
  if (tokens.help) return 'help';
  const target = targetOf(tokens.positional);
  const output = tokens.values.output ?? 'table';
  const problems = [
    ...tokens.problems,
    ...(typeof target === 'string' ? [target] : []),
    ...(typeof target === 'string' ? [] : target.rest).map(
      (extra) => `unexpected argument "${extra}"`,
    ),
    ...(isOutputFormat(output)
      ? []
      : [`-o must be one of ${OUTPUT_FORMATS.join(', ')}, got "${output}"`]),
    ...crossChecks(tokens),
  ];
  if (problems.length > 0 || typeof target === 'string' || !isOutputFormat(output)) return problems;
  return {
    target: target.target,
    namespace: tokens.values.namespace,
    output,
    kubeconfig: tokens.values.kubeconfig,
    context: tokens.values.context,
    from: tokens.values.from,
    viaController: tokens.values.viaController,
    controllerArgs: tokens.controllerArgs,
  };
}

class ExplainUsageError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ExplainUsageError';
  }
}

interface ResolvedOptions {
  readonly options: Options;
  readonly origin: ConfigOrigin;
  readonly notes: readonly string[];
  /**
   * kreload's namespace when its options do not say (no POD_NAMESPACE): that of `--from`, default
   * the chart's kreload-system.
   */
  readonly fromNamespace: string;
}

function namespaceOf(namespacedName: string): string {
  return namespacedName.split('/')[0] ?? '';
}

async function resolveOptions(args: ExplainArgs, reader: ExplainReader): Promise<ResolvedOptions> {
  if (args.controllerArgs !== undefined) {
    return {
      options: await parseOptions(args.controllerArgs, {}),
      origin: { kind: 'flags', args: args.controllerArgs },
      notes: [],
      fromNamespace: namespaceOf(DEFAULT_FROM),
    };
  }
  const from = args.from ?? DEFAULT_FROM;
  const [namespace = '', name = ''] = from.split('/');
  const read = await reader.readDeployment(namespace, name);
  if (read.state !== 'found') {
    const why = read.state === 'forbidden' ? 'may not be read' : 'not found';
    if (args.from !== undefined) throw new ExplainUsageError(`--from: Deployment ${from} ${why}`);
    return {
      options: await parseOptions([], {}),
      origin: { kind: 'defaults', note: `Deployment ${from} ${why}; pass --from or -- <flags>` },
      notes: [],
      fromNamespace: namespace,
    };
  }
  const commandLine = controllerCommandLine(read.object);
  return {
    options: await optionsOfCommandLine(commandLine),
    origin: { kind: 'deployment', namespace, name },
    fromNamespace: namespace,
    notes: commandLine.unresolved.map(
      (variable) => `env var ${variable} of the controller comes from its pod and was left unset`,
    ),
  };
}

interface JournalRead {
  readonly recreations: ReadonlyMap<WorkloadKey, JournalledRecreation>;
  readonly notes: readonly string[];
}

/** The Job recreation journal in the controller's namespace (ADR 0019), read-only. */
async function readJournal(
  transport: KubeTransport,
  namespace: string | undefined,
): Promise<JournalRead> {
  if (namespace === undefined) return { recreations: new Map(), notes: [] };
  const where = `ConfigMap ${namespace}/${JOURNAL_NAME}`;
  try {
    // Read as the user, who need not hold kreload's signing key: entries are shown unverified.
    const data = await readJournalData(transport, namespace);
    const recreations = new Map<WorkloadKey, JournalledRecreation>();
    const invalid: string[] = [];
    for (const [key, text] of data) {
      const stored = typeof text === 'string' ? parseEntry(key, text) : undefined;
      if (stored === undefined || !('entry' in stored)) invalid.push(key);
      else {
        const { entry } = stored;
        recreations.set(workloadKey(entry.ref), {
          deletedUid: entry.deletedUid,
          since: entry.since,
        });
      }
    }
    return {
      recreations,
      notes: invalid.map(
        (key) => `the Job recreation journal ${where} has an invalid entry ${key}`,
      ),
    };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return {
      recreations: new Map(),
      notes: [
        `a pending Job recreation is not shown: the journal ${where} could not be read (${error.message})`,
      ],
    };
  }
}

interface StoreRead {
  readonly storedBaseline: ((view: WorkloadView) => StoredBaselineFact) | undefined;
  readonly notes: readonly string[];
}

/**
 * The baseline store (docs/adr/0046) in the controller's namespace, read-only: where the baselines
 * of workloads kreload never rolled are. Records are hashes, never source content.
 */
async function readBaselineStore(
  reader: ExplainReader,
  resolved: ResolvedOptions,
): Promise<StoreRead> {
  const { options } = resolved;
  if (options.baselineStore !== 'namespace') return { storedBaseline: undefined, notes: [] };
  const namespace = options.podNamespace ?? resolved.fromNamespace;
  const unread = (why: string) => ({
    storedBaseline: undefined,
    notes: [
      `the baseline store (ConfigMaps in ${namespace}) could not be read (${why}): a workload ` +
        'kreload never rolled shows no baseline; --via-controller asks the controller',
    ],
  });
  let listed: BaselineStoreList;
  try {
    listed = await reader.baselineStore(namespace);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return unread(error.message);
  }
  if (listed.state === 'forbidden') return unread('forbidden');
  const records = new BaselineRecords();
  records.replace(listed.objects);
  return {
    storedBaseline: (view) => {
      const object = records.objectOf(view);
      return {
        raw: records.recordOf(view),
        object: object === undefined ? undefined : `${namespace}/${object}`,
      };
    },
    notes: [],
  };
}

function cannotTell(report: ExplainReport): boolean {
  const sources = [
    ...(report.workload?.sources ?? []),
    ...(report.source?.rolls ?? []).map((usage) => usage.source),
    ...(report.source?.doesNotRoll ?? []).map((usage) => usage.source),
  ];
  return sources.some((source) => source.verdict === 'cannot-tell');
}

/** The row of the kind a workload target names, among the controller's kinds; else a usage error. */
function workloadRowOf(word: string, kinds: KindTable): WorkloadKindRow {
  const named = explainTargetOf(word, kinds);
  if (named?.what !== 'workload') throw new ExplainUsageError(`unknown kind "${word}"`);
  return kinds.row(named.kind);
}

async function explain(args: ExplainArgs, io: ExplainCommandIo): Promise<number> {
  const kc = loadUserKubeConfig(args, io);
  const transport = (io.connect ?? ((kubeConfig) => createKubeTransport({ kubeConfig })))(kc);
  const reader = new ExplainReader({ transport });
  const resolved = await resolveOptions(args, reader);
  const namespace = args.namespace ?? contextNamespace(kc);
  const kinds = kindTable(resolved.options.customWorkloadKinds);
  const { target } = args;
  const row = target.what === 'workload' ? workloadRowOf(target.kind, kinds) : undefined;
  const journal = await readJournal(
    transport,
    row === undefined || rollsByRecreation(row) ? resolved.options.podNamespace : undefined,
  );
  const store = await readBaselineStore(reader, resolved);
  const context = {
    reader,
    options: resolved.options,
    kinds,
    now: (io.now?.() ?? new Date()).getTime(),
    recreations: journal.recreations,
    storedBaseline: store.storedBaseline,
  };
  const gathered: ExplainReport = {
    config: resolved.origin,
    assumptions: [...ASSUMPTIONS, ...resolved.notes, ...journal.notes, ...store.notes],
    ...(target.what === 'workload'
      ? {
          workload: await gatherWorkload(context, {
            kind: row?.kind ?? target.kind,
            namespace,
            name: target.name,
          }),
        }
      : {
          source: await gatherSource(context, { type: target.type, namespace, name: target.name }),
        }),
  };
  const report = { ...gathered, assumptions: [...gathered.assumptions, ...policyNotes(gathered)] };
  io.stdout.write(renderReport(report, args.output, (value) => dumpYaml(value)));
  return cannotTell(report) ? EXPLAIN_EXIT.cannotTell : EXPLAIN_EXIT.ok;
}

/** Unlisted ReloadPolicies, said once under "explain assumes" (the source form has no facts). */
function policyNotes(report: ExplainReport): string[] {
  const unread =
    report.workload?.facts.policy?.state === 'unknown' ||
    [...(report.source?.rolls ?? []), ...(report.source?.doesNotRoll ?? [])].some(
      (usage) => usage.source.because === 'policies-unreadable',
    );
  return unread
    ? [
        'ReloadPolicies could not be listed: which sources a policy binds is not known (cannot tell)',
      ]
    : [];
}

const EXIT_OF_REPLY = {
  usage: EXPLAIN_EXIT.usage,
  'not-found': EXPLAIN_EXIT.targetNotFound,
  failure: EXPLAIN_EXIT.failure,
} as const;

/** No kubeconfig is read: `-n` defaults to `default`. */
async function explainViaController(args: ExplainArgs, io: ExplainCommandIo): Promise<number> {
  const { target } = args;
  const url = debugExplainUrl(args.viaController ?? '', {
    kind: target.what === 'workload' ? target.kind : target.type.toLowerCase(),
    namespace: args.namespace ?? 'default',
    name: target.name,
    o: 'json',
  });
  let reply: ControllerReply;
  try {
    const response = await (io.fetch ?? fetch)(url, { signal: AbortSignal.timeout(30_000) });
    reply = controllerReply(response.status, await response.text());
  } catch (error) {
    throw new Error(`cannot reach the controller at ${url.origin}`, { cause: error });
  }
  if (reply.outcome !== 'explained') {
    io.stderr.write(`kreload explain: ${reply.message}\n`);
    return EXIT_OF_REPLY[reply.outcome];
  }
  io.stdout.write(renderReport(reply.report, args.output, (value) => dumpYaml(value)));
  return cannotTell(reply.report) ? EXPLAIN_EXIT.cannotTell : EXPLAIN_EXIT.ok;
}

function causeText(error: Error): string {
  return error.cause instanceof Error ? `: ${error.cause.message}` : '';
}

/** Exit codes: docs/explain.md. */
export async function runExplainCommand(
  argv: readonly string[],
  io: ExplainCommandIo,
): Promise<number> {
  const args = parseArgs(argv);
  if (args === 'help') {
    io.stdout.write(`${USAGE}\n`);
    return EXPLAIN_EXIT.ok;
  }
  if (Array.isArray(args)) {
    for (const problem of args) io.stderr.write(`kreload explain: ${problem}\n`);
    io.stderr.write(`${USAGE}\n`);
    return EXPLAIN_EXIT.usage;
  }
  try {
    if (args.viaController !== undefined) return await explainViaController(args, io);
    return await explain(args, io);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr.write('kreload explain: the controller options are invalid:\n');
      for (const line of formatConfigProblems(error)) io.stderr.write(`${line}\n`);
      return EXPLAIN_EXIT.usage;
    }
    if (error instanceof ExplainUsageError || error instanceof KubeconfigError) {
      io.stderr.write(`kreload explain: ${error.message}${causeText(error)}\n`);
      return EXPLAIN_EXIT.usage;
    }
    if (error instanceof ExplainTargetError) {
      io.stderr.write(`kreload explain: ${error.message}\n`);
      return EXPLAIN_EXIT.targetNotFound;
    }
    const message = error instanceof Error ? `${error.message}${causeText(error)}` : String(error);
    io.stderr.write(`kreload explain: ${message}\n`);
    return EXPLAIN_EXIT.failure;
  }
}
