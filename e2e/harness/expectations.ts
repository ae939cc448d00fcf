// Waits and expected values that several reload specs share.
import { BASELINE, stateJson } from './annotations.ts';
import type { EventReader, InvolvedObject } from './kube-events.ts';
import { PollTimeoutError, pollUntil } from './poll.ts';
import type { SourceSpec } from './sources.ts';
import type { WorkloadClient, WorkloadRef, WorkloadView } from './workloads.ts';

const WAIT_MS = 30_000;

/** Polls until the workload's view satisfies `accept`; returns that view. */
export function waitForView(
  workloads: WorkloadClient,
  ref: WorkloadRef,
  accept: (view: WorkloadView) => boolean,
  describe: string,
): Promise<WorkloadView> {
  return pollUntil(
    async () => {
      const view = await workloads.read(ref);
      return accept(view) ? view : undefined;
    },
    { timeoutMs: WAIT_MS, describe: `${ref.kind} ${ref.namespace}/${ref.name}: ${describe}` },
  );
}

/**
 * Waits for the workload's baseline to be exactly this map, wherever the running kreload keeps it
 * (W `kreload.io/baseline`, else its record in the baseline store, as the planner reads it), and
 * for kube-controller-manager to have made the workload's first revision. A test changes a source
 * next; a roll that overtook a busy controller would leave it one revision short, which would read
 * as a missing roll (seen under load: the ReplicaSet created 2.7 s after its Deployment, from the
 * already rolled template).
 */
export async function waitForBaseline(
  workloads: WorkloadClient,
  ref: WorkloadRef,
  map: Readonly<Record<string, string>>,
): Promise<WorkloadView> {
  const expected = stateJson(map);
  const store = workloads.baselines;
  const view = await pollUntil(
    async () => {
      const candidate = await workloads.read(ref);
      return (await store.baselineOf(ref, candidate)) === expected ? candidate : undefined;
    },
    {
      timeoutMs: WAIT_MS,
      describe: `${ref.kind} ${ref.namespace}/${ref.name}: baseline ${expected}`,
    },
  );
  await workloads.settledRevisions(ref, 1);
  return view;
}

/**
 * Waits until kreload holds a baseline for each workload, wherever it keeps it (W, else the store);
 * a timeout is left for the caller's own assertions to report when `lenient`.
 */
export async function waitForBaselines(
  workloads: WorkloadClient,
  refs: readonly WorkloadRef[],
  options: { readonly timeoutMs?: number; readonly lenient?: boolean } = {},
): Promise<void> {
  const store = workloads.baselines;
  try {
    await pollUntil(
      async () => {
        const views = await Promise.all(
          refs.map(async (ref) => ({ ref, view: await workloads.read(ref) })),
        );
        const unbaselined = views.filter(({ view }) => view.annotations[BASELINE] === undefined);
        const namespaces = [...new Set(unbaselined.map(({ ref }) => ref.namespace))];
        const records = new Map(
          await Promise.all(
            namespaces.map(
              async (namespace) =>
                [namespace, [...(await store.recordsOf(namespace)).keys()]] as const,
            ),
          ),
        );
        return unbaselined.every(({ ref, view }) =>
          (records.get(ref.namespace) ?? []).some(
            (key) => key.startsWith(`${ref.kind}.`) && key.endsWith(`.${view.uid}`),
          ),
        );
      },
      {
        timeoutMs: options.timeoutMs ?? 60_000,
        intervalMs: 500,
        describe: 'a baseline for every tracking workload',
      },
    );
  } catch (error) {
    if (!(options.lenient ?? false) || !(error instanceof PollTimeoutError)) throw error;
  }
}

/**
 * Waits until the baseline store's record of the workload object is exactly this map, or, for
 * `undefined`, until it has none (a roll moved B into W, or B is empty).
 */
export async function waitForRecord(
  workloads: WorkloadClient,
  ref: WorkloadRef,
  view: Pick<WorkloadView, 'uid'>,
  map: Readonly<Record<string, string>> | undefined,
): Promise<void> {
  const expected = map === undefined ? undefined : stateJson(map);
  await pollUntil(async () => (await workloads.baselines.recordOf(ref, view.uid)) === expected, {
    timeoutMs: WAIT_MS,
    describe: `${ref.kind} ${ref.namespace}/${ref.name}: store record ${expected ?? 'none'}`,
  });
}

/** Waits until `container` carries env var `name` = `value`. */
export function waitForEnv(
  workloads: WorkloadClient,
  ref: WorkloadRef,
  expected: { readonly container: string; readonly name: string; readonly value: string },
): Promise<WorkloadView> {
  return waitForView(
    workloads,
    ref,
    (view) =>
      view.containers.find((c) => c.name === expected.container)?.env[expected.name] ===
      expected.value,
    `${expected.container} env ${expected.name}=${expected.value}`,
  );
}

function uniqueSorted(values: readonly string[]): string[] {
  return [...new Set(values)].sort();
}

/**
 * kreload's Event reasons about an object once the expected ones are all there (or whatever is
 * there after the wait), unique and sorted: compare the result with toEqual for a readable diff.
 */
export async function eventReasonsEventually(
  events: EventReader,
  object: InvolvedObject,
  expected: readonly string[],
): Promise<string[]> {
  let last: string[] = [];
  try {
    return await pollUntil(
      async () => {
        last = uniqueSorted(await events.reasonsAbout(object));
        return expected.every((reason) => last.includes(reason)) ? last : undefined;
      },
      { timeoutMs: 15_000, describe: `Events ${expected.join(', ')} about ${object.name}` },
    );
  } catch {
    return last;
  }
}

/** Spec §13.3 `Reloaded` message for a roll caused by one source. */
export function reloadedMessage(source: SourceSpec, workload: WorkloadRef): string {
  return (
    `Changes detected in '${source.name}' of type '${source.type}' in namespace '${workload.namespace}', ` +
    `Updated '${workload.name}' of type '${workload.kind}' in namespace '${workload.namespace}'`
  );
}

/** Spec §13.3 `WorkloadsReloaded` message for a change that rolled the given workloads. */
export function workloadsReloadedMessage(
  source: SourceSpec & { readonly hash: string },
  rolled: readonly WorkloadRef[],
): string {
  const kind = source.type === 'CONFIGMAP' ? 'ConfigMap' : 'Secret';
  const names = rolled.map((ref) => `${ref.kind}/${ref.name}`).join(', ');
  return `Change to ${kind} '${source.name}' (hash ${source.hash.slice(0, 12)}) rolled ${rolled.length} workload(s): ${names}`;
}

/**
 * Spec §6.2 `last-reloaded-from`: exact fields in exact order; `observedAt` is returned for a
 * range check (undefined when the value does not have that shape).
 */
export function parseLastReloadedFrom(
  value: string | undefined,
  expected: {
    readonly type: string;
    readonly name: string;
    readonly namespace: string;
    readonly hash: string;
    readonly container: string;
  },
): number | undefined {
  const prefix =
    `{"type":"${expected.type}","name":"${expected.name}","namespace":"${expected.namespace}",` +
    `"hash":"${expected.hash}","containerRefs":["${expected.container}"],"observedAt":`;
  if (value?.startsWith(prefix) !== true) return undefined;
  const rest = /^(\d+)\}$/.exec(value.slice(prefix.length));
  return rest?.[1] === undefined ? undefined : Number(rest[1]);
}
