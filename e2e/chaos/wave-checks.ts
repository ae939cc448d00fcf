// Whether a change rolled in waves, judged from outside kreload: the admission order of the
// Deployments, the time kube-apiserver received kreload's first PATCH of each (audit log) and
// samples of every Deployment's rollout state taken every 200 ms. Pure: the suite reads the
// cluster, this file only judges.

/** Where a Deployment stands for the change: not rolled, rolled and not complete, complete. */
export type RollState = 'pending' | 'progressing' | 'complete';

export interface RollSample {
  /** When the LIST was sent (ms since the epoch): the state it saw held at that time or later. */
  readonly at: number;
  /** Deployment name → state. */
  readonly states: ReadonlyMap<string, RollState>;
}

/** The status fields `kubectl rollout status` reads. */
export interface DeploymentProgress {
  readonly generation: number;
  readonly observedGeneration: number;
  readonly replicas: number;
  readonly updatedReplicas: number;
  readonly statusReplicas: number;
  readonly availableReplicas: number;
}

/** `kubectl rollout status`'s rule: the controller observed the template, every replica updated and available. */
export function deploymentComplete(progress: DeploymentProgress): boolean {
  return (
    progress.observedGeneration >= progress.generation &&
    progress.updatedReplicas >= progress.replicas &&
    progress.statusReplicas <= progress.updatedReplicas &&
    progress.availableReplicas >= progress.updatedReplicas
  );
}

/**
 * Each name's wave in the admission order of a change whose members differ only by name (same
 * priority, namespace and kind): wave 0 the first `canary`, then waves of `size`.
 */
export function wavesByName(
  names: readonly string[],
  canary: number,
  size: number,
): Map<string, number> {
  const ordered = [...names].sort((a, b) => (a === b ? 0 : a < b ? -1 : 1));
  return new Map(
    ordered.map((name, index) => [
      name,
      index < canary ? 0 : 1 + Math.floor((index - canary) / size),
    ]),
  );
}

export interface WaveVerdict {
  /** One line per violation of the wave order or of a health gate. */
  readonly violations: readonly string[];
  /** Most Deployments seen rolled and not complete in one sample. */
  readonly maxInFlight: number;
  /** Deployments with a PATCH, out of the change's members. */
  readonly patched: number;
}

export interface WaveInput {
  /** Member name → its wave (wavesByName). */
  readonly waves: ReadonlyMap<string, number>;
  /** Member name → when kube-apiserver received kreload's first PATCH of it for the change. */
  readonly firstPatchAt: ReadonlyMap<string, number>;
  readonly samples: readonly RollSample[];
}

function at(ms: number, origin: number): string {
  return `+${((ms - origin) / 1000).toFixed(2)} s`;
}

/**
 * Two sound checks (no false alarm whatever the sampling rate):
 * - order: sorted by first PATCH, the members' waves never go down;
 * - gate: no member of wave w was PATCHed before a sample that still saw a member of a wave < w
 *   pending or progressing (the sample was sent after the PATCH, so the earlier member was not
 *   complete when kreload wrote it).
 */
export function judgeWaves(input: WaveInput): WaveVerdict {
  const violations: string[] = [];
  const patches = [...input.firstPatchAt].sort(([, a], [, b]) => a - b);
  const origin = Math.min(
    patches[0]?.[1] ?? Number.POSITIVE_INFINITY,
    input.samples[0]?.at ?? Number.POSITIVE_INFINITY,
  );
  const waveOf = (name: string): number => input.waves.get(name) ?? Number.NaN;
  let highest: { name: string; wave: number } | undefined;
  for (const [name] of patches) {
    const wave = waveOf(name);
    if (Number.isNaN(wave)) {
      violations.push(`${name}: PATCHed but not a member of the change`);
      continue;
    }
    if (highest !== undefined && wave < highest.wave) {
      violations.push(
        `${name} (wave ${String(wave)}) PATCHed after ${highest.name} (wave ${String(highest.wave)})`,
      );
    }
    if (highest === undefined || wave > highest.wave) highest = { name, wave };
  }
  for (const [name, patchedAt] of patches) {
    const wave = waveOf(name);
    const later = input.samples.find((sample) =>
      [...sample.states].some(
        ([other, state]) => state !== 'complete' && waveOf(other) < wave && sample.at > patchedAt,
      ),
    );
    if (later === undefined) continue;
    const [other, state] =
      [...later.states].find(([each, s]) => s !== 'complete' && waveOf(each) < wave) ?? [];
    violations.push(
      `${name} (wave ${String(wave)}) PATCHed at ${at(patchedAt, origin)} while ${other ?? '?'} (wave ${String(waveOf(other ?? ''))}) was still ${state ?? '?'} at ${at(later.at, origin)}`,
    );
  }
  const maxInFlight = Math.max(
    0,
    ...input.samples.map(
      (sample) => [...sample.states.values()].filter((state) => state === 'progressing').length,
    ),
  );
  return { violations, maxInFlight, patched: patches.length };
}
