// `npm run chaos` arguments. Pure: parsing and validation only.
import { parseArgs } from 'node:util';
import type { FaultRow } from './fault-types.ts';
import { FAULTS, faultById } from './faults.ts';
import { FULL_FLEET, SMALL_FLEET, type FleetShape } from './fleet.ts';
import { STRATEGIES, type ReloadStrategy } from './suite.ts';

export const USAGE = `npm run chaos -- [--fault ID[,ID…]|all] [--iterations N] [--seed N] [--fleet full|small]
                     [--strategy env-vars|annotations|both] [--out FILE]

Boots a control plane of its own with toxiproxy in front of kube-apiserver, then per fault and
iteration: a fresh namespace with the fleet, a ConfigMap change before, during and after the fault,
and the counts from the objects and the audit log. Prints one table row per fault; exits 1 unless
every count is 0 and every window converged.

  --fault       faults to run (default all): ${FAULTS.map((f) => f.id).join(', ')}
  --iterations  iterations per fault (default: per fault, 20 for kreload-kill)
  --seed        seed of the fault timing (default 1); iteration i of fault f uses a seed derived from it
  --fleet       full: 40 Deployments, 5 StatefulSets, 5 DaemonSets, 10 CronJobs, 5 Jobs (default);
                small: 4, 1, 1, 2, 2
  --strategy    reload strategy; both (default) alternates per iteration, starting with env-vars
  --out         also write every iteration's result as JSON to FILE
`;

export interface ChaosOptions {
  readonly help: boolean;
  readonly faults: readonly FaultRow[];
  readonly iterations: number | undefined;
  readonly seed: number;
  readonly shape: FleetShape;
  readonly strategies: readonly ReloadStrategy[];
  readonly out: string | undefined;
}

export class ChaosOptionError extends Error {
  override readonly name = 'ChaosOptionError';
}

function positiveInteger(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new ChaosOptionError(`${flag} must be a positive integer, got "${raw}"`);
  }
  return value;
}

const FLEETS: Readonly<Record<string, FleetShape>> = { full: FULL_FLEET, small: SMALL_FLEET };

export function parseChaosArgs(argv: readonly string[]): ChaosOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      help: { type: 'boolean' },
      fault: { type: 'string' },
      iterations: { type: 'string' },
      seed: { type: 'string' },
      fleet: { type: 'string' },
      strategy: { type: 'string' },
      out: { type: 'string' },
    },
    strict: true,
  });
  const faultList = values.fault ?? 'all';
  let faults: FaultRow[];
  try {
    faults =
      faultList === 'all' ? [...FAULTS] : faultList.split(',').map((id) => faultById(id.trim()));
  } catch (error) {
    throw new ChaosOptionError(`--fault: ${(error as Error).message}`, { cause: error });
  }
  const shape = FLEETS[values.fleet ?? 'full'];
  if (shape === undefined)
    throw new ChaosOptionError(`--fleet must be full or small, got "${values.fleet ?? ''}"`);
  const strategy = values.strategy ?? 'both';
  const strategies =
    strategy === 'both' ? STRATEGIES : STRATEGIES.filter((candidate) => candidate === strategy);
  if (strategies.length === 0) {
    throw new ChaosOptionError(
      `--strategy must be env-vars, annotations or both, got "${strategy}"`,
    );
  }
  return {
    help: values.help === true,
    faults,
    iterations: positiveInteger('--iterations', values.iterations),
    seed: positiveInteger('--seed', values.seed) ?? 1,
    shape,
    strategies,
    out: values.out,
  };
}

/** A distinct, reproducible seed per fault (its row in FAULTS) and iteration. */
export function iterationSeed(seed: number, faultIndex: number, iteration: number): number {
  return (seed * 1_000_003 + faultIndex * 10_007 + iteration) >>> 0;
}
