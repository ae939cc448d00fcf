import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { WorkloadKey } from '../core/types.ts';
import { createMetrics } from '../metrics/metrics.ts';
import type { PendingEntry } from '../queue/debouncer.ts';
import type { WorkContext } from '../queue/work-queue.ts';
import type { Continuation, ReconcileResult } from './attempt.ts';
import { aWorkload } from '../testing/builders.ts';
import type { ReconcileResume } from './work-runner.ts';
import { WorkRunner } from './work-runner.ts';

const KEY: WorkloadKey = 'Deployment/team-a/api';
const ENTRY: PendingEntry = { firstAt: 0, dueAt: 0, changes: [] };
const CONTINUATION: Continuation = {
  startedAt: 1_000,
  attempts: 1,
  memo: {},
  basis: { view: aWorkload('Deployment', 'team-a', 'api').build(), fetched: false },
  conflict: false,
};

function setup(results: ReconcileResult[]) {
  const registry = new Registry();
  const metrics = createMetrics(registry, { countByNamespace: false });
  let now = 1_000;
  const resumes: (Continuation | undefined)[] = [];
  const runner = new WorkRunner({
    reconcile: (_key, _trigger, resume) => {
      resumes.push(resume);
      now += 100;
      const result = results.shift();
      if (result === undefined) throw new Error('no more results');
      return Promise.resolve(result);
    },
    metrics,
    onFanoutFinish: () => undefined,
    now: () => now,
  });
  const reconciles = async () => {
    const samples = (await registry.getSingleMetric('reloader_reconcile_duration_seconds')?.get())
      ?.values;
    const pick = (suffix: string) =>
      (samples ?? [])
        .filter(
          (s) =>
            'metricName' in s && s.metricName === `reloader_reconcile_duration_seconds_${suffix}`,
        )
        .reduce((sum, s) => sum + s.value, 0);
    return { count: pick('count'), sum: pick('sum') };
  };
  const triggeredAt: number[] = [];
  const run = (context: Partial<WorkContext<ReconcileResume>> = {}) => {
    const full: WorkContext<ReconcileResume> = {
      attempt: 1,
      signal: new AbortController().signal,
      retriggered: false,
      triggerAt: (at) => triggeredAt.push(at),
      ...context,
    };
    return runner.handle(KEY, ENTRY, full);
  };
  return { run, reconciles, resumes, triggeredAt, advance: (ms: number) => (now += ms) };
}

describe('WorkRunner: one attempt per run (docs/adr/0023)', () => {
  it('hands a retrying attempt back to the queue and reports the reconcile once, at its end', async () => {
    const retrying: ReconcileResult = {
      outcome: 'retrying',
      attempts: 1,
      retry: { afterMs: 5_000, resume: CONTINUATION },
    };
    const t = setup([retrying, { outcome: 'rolled', attempts: 2 }]);
    const first = await t.run();
    expect(first).toEqual({
      kind: 'requeue',
      afterMs: 5_000,
      wakeEarly: undefined,
      resume: { startedAt: 1_000, continuation: CONTINUATION },
    });
    expect(await t.reconciles()).toEqual({ count: 0, sum: 0 });
    t.advance(5_000);
    const resume = first.kind === 'requeue' ? first.resume : undefined;
    expect(await t.run({ attempt: 2, resume })).toEqual({ kind: 'done', rerun: false });
    expect(t.resumes).toEqual([undefined, CONTINUATION]);
    // one reconcile, from the first attempt's start to the end of the second
    expect(await t.reconciles()).toEqual({ count: 1, sum: 5.2 });
  });

  it('a rerun asks the queue for a fresh run of the key', async () => {
    const t = setup([{ outcome: 'rolled', attempts: 1, rerun: true }]);
    expect(await t.run({ retriggered: true })).toEqual({ kind: 'done', rerun: true });
    expect((await t.reconciles()).count).toBe(1);
  });

  it('asks the queue to trigger the key again when a pause period ends (§7.2)', async () => {
    const t = setup([{ outcome: 'skipped', attempts: 1, resumeAt: 90_000 }]);
    expect(await t.run()).toEqual({ kind: 'done', rerun: false });
    expect(t.triggeredAt).toEqual([90_000]);
  });
});

describe('WorkRunner between reconciles', () => {
  it('lets the event loop run pending I/O before each attempt', async () => {
    const order: string[] = [];
    const runner = new WorkRunner({
      reconcile: () => {
        order.push('reconcile');
        return Promise.resolve({ outcome: 'unchanged' } as ReconcileResult);
      },
      metrics: createMetrics(new Registry(), { countByNamespace: false }),
      onFanoutFinish: () => undefined,
      now: () => 0,
      pause: async () => {
        order.push('pause');
        await new Promise<void>((resolve) => {
          setImmediate(resolve);
        });
        order.push('resumed');
      },
    });
    let probeAnswered = false;
    setImmediate(() => {
      probeAnswered = true;
      order.push('probe');
    });
    const context: WorkContext<ReconcileResume> = {
      attempt: 1,
      signal: new AbortController().signal,
      retriggered: false,
      triggerAt: () => undefined,
    };
    await runner.handle(KEY, ENTRY, context);
    expect(probeAnswered).toBe(true);
    expect(order).toEqual(['pause', 'probe', 'resumed', 'reconcile']);
  });
});
