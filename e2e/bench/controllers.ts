/**
 * The controllers under test are command lines. `label=command` names one; the label also picks
 * its profile (which scenario flags it gets): `kreload…` adds `--sync-delay=0` where the scenario
 * compares like-for-like, `ideal…` is the bench's own reactor, anything else is Reloader-compatible.
 */
import path from 'node:path';

export type ControllerProfile = 'kreload' | 'ideal' | 'reloader';

export interface ControllerSpec {
  readonly label: string;
  /** argv with placeholders: `{node}` (this Node binary), `{port}` (a free loopback port). */
  readonly argv: readonly string[];
  readonly profile: ControllerProfile;
  /**
   * Processes of this command run side by side (`--replicas label=N`), each with its own
   * `POD_NAME` (see replicaIdentities) and `{port}`: 1 unless set.
   */
  readonly replicas: number;
}

export const KRELOAD_DEFAULT_COMMAND = 'kreload={node} dist/main.js --metrics-port={port}';
export const IDEAL_REACTOR_COMMAND = 'ideal={node} e2e/bench/ideal-reactor.ts';

export class ControllerSpecError extends Error {
  override readonly name = 'ControllerSpecError';
}

/** POSIX-shell-like splitting: whitespace separates, '…' and "…" quote, \ escapes outside '…'. */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let current: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let index = 0; index < line.length; index += 1) {
    const char = line.charAt(index);
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else if (char === '\\' && quote === '"' && index + 1 < line.length) {
        index += 1;
        current = (current ?? '') + line.charAt(index);
      } else current = (current ?? '') + char;
    } else if (char === '"' || char === "'") {
      quote = char;
      current ??= '';
    } else if (char === '\\' && index + 1 < line.length) {
      index += 1;
      current = (current ?? '') + line.charAt(index);
    } else if (/\s/.test(char)) {
      if (current !== undefined) words.push(current);
      current = undefined;
    } else current = (current ?? '') + char;
  }
  if (quote !== undefined) throw new ControllerSpecError(`unterminated ${quote} in: ${line}`);
  if (current !== undefined) words.push(current);
  return words;
}

const LABEL = /^([A-Za-z0-9][A-Za-z0-9._-]*)=(.*)$/s;

function profileOf(label: string): ControllerProfile {
  if (label.startsWith('kreload')) return 'kreload';
  if (label.startsWith('ideal')) return 'ideal';
  return 'reloader';
}

function defaultLabel(argv: readonly string[]): string {
  const program = argv[0] ?? 'controller';
  // `node script.js`: the script names the controller better than the interpreter.
  const named = /(^|\/)node$|^\{node\}$/.test(program) && argv[1] !== undefined ? argv[1] : program;
  return path.basename(named).replace(/\.(m?[jt]s)$/, '');
}

/** `[label=]command line`; a command without a label is named after its program. */
export function parseControllerSpec(text: string): ControllerSpec {
  const trimmed = text.trim();
  const labelled = LABEL.exec(trimmed);
  const command = labelled?.[2]?.trim() ?? trimmed;
  const argv = splitCommandLine(command);
  if (argv.length === 0) throw new ControllerSpecError(`empty controller command: "${text}"`);
  const label = labelled?.[1] ?? defaultLabel(argv);
  return { label, argv, profile: profileOf(label), replicas: 1 };
}

export interface ReplicaCount {
  readonly label: string;
  readonly replicas: number;
}

/** `label=N`: the controller entry `label` runs N processes side by side. */
export function parseReplicaCount(text: string): ReplicaCount {
  const match = /^([A-Za-z0-9][A-Za-z0-9._#-]*)=(\d+)$/.exec(text.trim());
  const replicas = Number(match?.[2]);
  if (match?.[1] === undefined || !Number.isInteger(replicas) || replicas < 1) {
    throw new ControllerSpecError(`--replicas wants label=N (N ≥ 1), got "${text}"`);
  }
  return { label: match[1], replicas };
}

/** Applies `--replicas` counts to the entries they name; naming no entry is an error. */
export function withReplicas(
  specs: readonly ControllerSpec[],
  counts: readonly ReplicaCount[],
): ControllerSpec[] {
  for (const count of counts) {
    if (!specs.some((spec) => spec.label === count.label)) {
      throw new ControllerSpecError(
        `--replicas names no controller: ${count.label} (controllers: ${specs.map((s) => s.label).join(', ')})`,
      );
    }
  }
  return specs.map((spec) => {
    const count = counts.findLast((candidate) => candidate.label === spec.label);
    return count === undefined ? spec : { ...spec, replicas: count.replicas };
  });
}

/**
 * The `POD_NAME` of each replica of an entry with more than one: `<label>-<i>`, lower-cased and
 * with anything a Lease name cannot hold replaced by `-` (kreload names its member Lease after it).
 * Stable across runs, so a run's members find the Leases the previous run's released.
 */
export function replicaIdentities(spec: ControllerSpec): string[] {
  const base = spec.label
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return Array.from({ length: spec.replicas }, (_, index) => `${base || 'replica'}-${index}`);
}

/** Makes labels unique (`ideal`, `ideal#2`) so that repeated controllers stay apart in reports. */
export function uniqueLabels(specs: readonly ControllerSpec[]): ControllerSpec[] {
  const seen = new Map<string, number>();
  return specs.map((spec) => {
    const count = (seen.get(spec.label) ?? 0) + 1;
    seen.set(spec.label, count);
    return count === 1 ? spec : { ...spec, label: `${spec.label}#${count}` };
  });
}

export function resolvePlaceholders(
  argv: readonly string[],
  values: { node: string; port: number },
): string[] {
  return argv.map((word) =>
    word.replaceAll('{node}', values.node).replaceAll('{port}', String(values.port)),
  );
}

export interface ScenarioFlags {
  /** Watched namespaces (`--namespaces`); undefined: cluster-wide, no flag. */
  readonly namespaces: readonly string[] | undefined;
  readonly strategy: 'env-vars' | 'annotations';
  /** kreload only: keep its default debounce (K2) instead of `--sync-delay=0`. */
  readonly kreloadDefaults: boolean;
}

/** The flags the scenario table prescribes, appended to the controller's own command line. */
export function controllerFlags(profile: ControllerProfile, scenario: ScenarioFlags): string[] {
  return [
    ...(scenario.namespaces === undefined ? [] : [`--namespaces=${scenario.namespaces.join(',')}`]),
    '--log-format=json',
    ...(scenario.strategy === 'annotations' ? ['--reload-strategy=annotations'] : []),
    ...(profile === 'kreload' && !scenario.kreloadDefaults ? ['--sync-delay=0'] : []),
  ];
}

const ROLLOUT_BUDGET_FLAG = '--max-concurrent-rollouts';

/**
 * The cluster-wide rollout budget a controller command line sets (`--max-concurrent-rollouts=N`
 * or `… N`), so the report can check the rollouts in flight against it; undefined when unset or
 * 0 (no limit).
 */
export function rolloutBudgetOf(argv: readonly string[]): number | undefined {
  let value: string | undefined;
  argv.forEach((word, index) => {
    if (word.startsWith(`${ROLLOUT_BUDGET_FLAG}=`))
      value = word.slice(ROLLOUT_BUDGET_FLAG.length + 1);
    else if (word === ROLLOUT_BUDGET_FLAG) value = argv[index + 1];
  });
  const budget = Number(value);
  return Number.isInteger(budget) && budget > 0 ? budget : undefined;
}
