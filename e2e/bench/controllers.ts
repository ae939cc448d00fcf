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
  return { label, argv, profile: profileOf(label) };
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
  readonly namespaces: readonly string[];
  readonly strategy: 'env-vars' | 'annotations';
  /** kreload only: keep its default debounce (K2) instead of `--sync-delay=0`. */
  readonly kreloadDefaults: boolean;
}

/** The flags the scenario table prescribes, appended to the controller's own command line. */
export function controllerFlags(profile: ControllerProfile, scenario: ScenarioFlags): string[] {
  return [
    `--namespaces=${scenario.namespaces.join(',')}`,
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
