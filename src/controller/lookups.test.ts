import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { workloadKey } from '../core/keys.ts';
import { DEFAULT_ANNOTATION_KEYS as K, type WorkloadView } from '../core/types.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';
import { aContainer, aWorkload } from '../testing/builders.ts';
import { WorkloadStore } from '../watch/workload-store.ts';
import { StoreWorkloadLookup } from './lookups.ts';

const api = aWorkload('Deployment', 'ns', 'api')
  .withAnnotation(K.auto, 'true')
  .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'));
const KEY = workloadKey(api.build().ref);

function setup() {
  const store = new WorkloadStore({ clock: { now: () => 0 }, keys: K, notify: () => undefined });
  store.replace('Deployment', [api.withResourceVersion('10').build()]);
  const lookup = new StoreWorkloadLookup({ store, timers: SYSTEM_TIMERS });
  const outcome: { value?: WorkloadView | undefined; settled: boolean } = { settled: false };
  const wait = (resourceVersion: string, timeoutMs = 1_000): void => {
    void lookup.newerThan(KEY, resourceVersion, timeoutMs).then((value) => {
      outcome.value = value;
      outcome.settled = true;
    });
  };
  return { store, outcome, wait };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('StoreWorkloadLookup.newerThan (docs/adr/0015)', () => {
  it('resolves at once with the cached view when it already differs', async () => {
    const { outcome, wait } = setup();
    wait('9');
    await vi.advanceTimersByTimeAsync(0);
    expect(outcome).toMatchObject({ settled: true, value: { resourceVersion: '10' } });
  });

  it('waits for the watch to deliver another version', async () => {
    const { store, outcome, wait } = setup();
    wait('10');
    await vi.advanceTimersByTimeAsync(500);
    expect(outcome.settled).toBe(false);
    store.upsert(api.withResourceVersion('10').build()); // the same version again: keeps waiting
    await vi.advanceTimersByTimeAsync(0);
    expect(outcome.settled).toBe(false);
    store.upsert(api.withResourceVersion('11').build());
    await vi.advanceTimersByTimeAsync(0);
    expect(outcome).toMatchObject({ settled: true, value: { resourceVersion: '11' } });
  });

  it('gives up after the timeout, so the caller GETs', async () => {
    const { outcome, wait } = setup();
    wait('10', 1_000);
    await vi.advanceTimersByTimeAsync(999);
    expect(outcome.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome).toEqual({ settled: true, value: undefined });
  });

  it('resolves undefined when the workload leaves the cache', async () => {
    const { store, outcome, wait } = setup();
    wait('10');
    store.remove(api.build().ref);
    await vi.advanceTimersByTimeAsync(0);
    expect(outcome).toEqual({ settled: true, value: undefined });
  });
});
