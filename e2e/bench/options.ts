/** Command-line options of `npm run bench`. Pure: argv in, options or a usage error out. */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../cluster/paths.ts';
import {
  IDEAL_REACTOR_COMMAND,
  KRELOAD_DEFAULT_COMMAND,
  ControllerSpecError,
  parseControllerSpec,
  parseReplicaCount,
  uniqueLabels,
  withReplicas,
  type ControllerSpec,
} from './controllers.ts';
import { SCENARIOS, findScenario, type ScenarioDefinition } from './scenarios.ts';
import { BenchOptionError, type ParamOverride } from './suite.ts';

export interface BenchOptions {
  readonly help: boolean;
  readonly list: boolean;
  readonly scenarios: readonly ScenarioDefinition[];
  readonly controllers: readonly ControllerSpec[];
  readonly overrides: readonly ParamOverride[];
  readonly durationSec: number | undefined;
  readonly repeat: number;
  readonly seed: number;
  readonly compare: boolean;
  readonly baseline: string | undefined;
  readonly outDir: string;
}

export const USAGE = `usage: npm run bench -- [options]

  --scenario S1,S2,…|all   scenarios to run (repeatable; default all, K1 and K5 last)
  --controller "<cmd>"     a controller command line, optionally "label=<cmd>" (repeatable;
                           default: "${KRELOAD_DEFAULT_COMMAND}").
                           {node} is this Node binary, {port} a free port. A label starting
                           with "kreload" gets --sync-delay=0 where the scenario compares
                           like-for-like; any other label gets only the scenario's flags.
  --replicas label=N       run N processes of the controller "label" side by side (repeatable;
                           default 1), each with its own {port} and POD_NAME=<label>-<i>,
                           POD_NAMESPACE=kreload-system (for --shard-mode=active-active)
  --no-ideal               do not add the ideal reactor ("${IDEAL_REACTOR_COMMAND}")
  --duration N             load duration in seconds for every scenario that has one
  --param [S1.]name=value  override a scenario parameter (repeatable; see --list)
  --repeat N               run every scenario × controller N times (noise margin; default 1)
  --seed N                 seed of the random source choice (default 1)
  --compare                add ratios against the first controller
  --baseline FILE          a previous summary.json: flag regressions beyond the noise margin
  --out DIR                results folder (default .cache/bench-results/<date>)
  --list                   list the scenarios and their parameters
  --help
`;

function positiveInteger(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    throw new BenchOptionError(`${flag} needs a positive integer, got "${text}"`);
  }
  return value;
}

/** `S1.configMaps=2` or `configMaps=2`. */
export function parseOverride(text: string): ParamOverride {
  const match = /^(?:([A-Za-z]\d+)\.)?([A-Za-z][A-Za-z0-9]*)=(-?\d+(?:\.\d+)?)$/.exec(text.trim());
  if (match?.[2] === undefined || match[3] === undefined) {
    throw new BenchOptionError(`--param wants [S1.]name=number, got "${text}"`);
  }
  const scenario = match[1];
  if (scenario !== undefined && findScenario(scenario) === undefined) {
    throw new BenchOptionError(`--param names an unknown scenario: ${scenario}`);
  }
  return { scenario: scenario?.toUpperCase(), name: match[2], value: Number(match[3]) };
}

/** Scenarios of tens of thousands of objects, run last (in this order) so that the small ones do not share their cluster. */
const LARGE_SCENARIOS = ['K1', 'K5'];
const largeRank = (scenario: ScenarioDefinition): number => LARGE_SCENARIOS.indexOf(scenario.id);

function selectScenarios(values: readonly string[]): ScenarioDefinition[] {
  const ids = values
    .flatMap((value) => value.split(','))
    .map((id) => id.trim())
    .filter(Boolean);
  if (ids.length === 0 || ids.some((id) => id.toLowerCase() === 'all')) {
    return [...SCENARIOS].sort((a, b) => largeRank(a) - largeRank(b));
  }
  return ids.map((id) => {
    const scenario = findScenario(id);
    if (scenario === undefined) {
      throw new BenchOptionError(
        `unknown scenario ${id} (known: ${SCENARIOS.map((s) => s.id).join(', ')})`,
      );
    }
    return scenario;
  });
}

export function defaultOutDir(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return path.join(REPO_ROOT, '.cache', 'bench-results', stamp);
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: false,
    options: {
      scenario: { type: 'string', multiple: true },
      controller: { type: 'string', multiple: true },
      replicas: { type: 'string', multiple: true },
      'no-ideal': { type: 'boolean', default: false },
      duration: { type: 'string' },
      param: { type: 'string', multiple: true },
      repeat: { type: 'string' },
      seed: { type: 'string' },
      compare: { type: 'boolean', default: false },
      baseline: { type: 'string' },
      out: { type: 'string' },
      list: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
}

function replicated(specs: readonly ControllerSpec[], texts: readonly string[]): ControllerSpec[] {
  try {
    return withReplicas(specs, texts.map(parseReplicaCount));
  } catch (error) {
    if (!(error instanceof ControllerSpecError)) throw error;
    throw new BenchOptionError(error.message, { cause: error });
  }
}

export function parseBenchArgs(argv: readonly string[], now = new Date()): BenchOptions {
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse(argv).values;
  } catch (error) {
    throw new BenchOptionError(error instanceof Error ? error.message : String(error), {
      cause: error,
    });
  }
  const given = (values.controller ?? []).map(parseControllerSpec);
  const controllers = given.length > 0 ? given : [parseControllerSpec(KRELOAD_DEFAULT_COMMAND)];
  const hasIdeal = controllers.some((spec) => spec.profile === 'ideal');
  if (!values['no-ideal'] && !hasIdeal)
    controllers.push(parseControllerSpec(IDEAL_REACTOR_COMMAND));
  return {
    help: values.help,
    list: values.list,
    scenarios: selectScenarios(values.scenario ?? []),
    controllers: replicated(uniqueLabels(controllers), values.replicas ?? []),
    overrides: (values.param ?? []).map(parseOverride),
    durationSec: positiveInteger('--duration', values.duration),
    repeat: positiveInteger('--repeat', values.repeat) ?? 1,
    seed: positiveInteger('--seed', values.seed) ?? 1,
    compare: values.compare,
    baseline: values.baseline,
    outDir: path.resolve(values.out ?? defaultOutDir(now)),
  };
}

export function scenarioList(): string {
  return SCENARIOS.map((scenario) => {
    const params = Object.entries(scenario.defaults)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ');
    return `${scenario.id.padEnd(4)} ${scenario.title}: ${scenario.expectation}\n     ${params}`;
  }).join('\n');
}
