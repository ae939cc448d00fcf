import { describe, expect, it } from 'vitest';
import { EventRecorder } from './event-recorder.ts';
import type { EventRecordError, EventRequest } from './event-recorder.ts';
import type { EventDraft, EventName, EventSink } from './ports.ts';

type SinkCall =
  | { op: 'create'; event: EventDraft }
  | { op: 'patchCount'; ref: EventName; count: number; lastTimestamp: Date };

class RecordingSink implements EventSink {
  readonly calls: SinkCall[] = [];
  readonly existing = new Set<string>();
  failCreate: Error | undefined;

  create(event: EventDraft): Promise<void> {
    if (this.failCreate) return Promise.reject(this.failCreate);
    this.calls.push({ op: 'create', event });
    this.existing.add(`${event.namespace}/${event.name}`);
    return Promise.resolve();
  }

  patchCount(ref: EventName, count: number, lastTimestamp: Date): Promise<'patched' | 'not-found'> {
    this.calls.push({ op: 'patchCount', ref, count, lastTimestamp });
    return Promise.resolve(
      this.existing.has(`${ref.namespace}/${ref.name}`) ? 'patched' : 'not-found',
    );
  }
}

const T0 = new Date('2026-01-02T03:04:05.000Z');

function setup(
  overrides: {
    canWrite?: () => boolean;
    maxRemembered?: number;
    concurrency?: number;
    yieldTo?: () => Promise<void>;
    sink?: RecordingSink;
  } = {},
) {
  let now = T0.getTime();
  const due: { at: number; fire: () => void; cancelled: boolean }[] = [];
  const timers = {
    now: () => now,
    schedule: (delayMs: number, fire: () => void) => {
      const timer = { at: now + delayMs, fire, cancelled: false };
      due.push(timer);
      return () => {
        timer.cancelled = true;
      };
    },
  };
  const sink = overrides.sink ?? new RecordingSink();
  const errors: EventRecordError[] = [];
  const recorder = new EventRecorder({
    sink,
    clock: { now: () => now },
    component: 'kreload',
    instance: 'kreload-7d9f-abcde',
    onError: (error) => errors.push(error),
    timers,
    ...overrides,
  });
  return {
    sink,
    recorder,
    errors,
    advance: (ms: number) => {
      now += ms;
    },
    /** Moves the clock to `at` ms after T0, firing the timers due on the way. */
    runTo: async (at: number) => {
      for (const timer of due.sort((a, b) => a.at - b.at)) {
        if (timer.cancelled || timer.at > T0.getTime() + at) continue;
        now = timer.at;
        timer.cancelled = true;
        timer.fire();
        await settle();
      }
      now = T0.getTime() + at;
    },
    liveTimers: () => due.filter((timer) => !timer.cancelled).map((timer) => timer.at - now),
  };
}

const RELOADED: EventRequest = {
  object: {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: 'team-a',
    name: 'api',
    uid: 'uid-1',
  },
  reason: 'Reloaded',
  type: 'Normal',
  message:
    "Changes detected in 'app' of type 'CONFIGMAP' in namespace 'team-a', Updated 'api' of type 'Deployment' in namespace 'team-a'",
};

describe('EventRecorder', () => {
  it('creates a core/v1 Event with kreload as component and POD_NAME as instance', async () => {
    const { sink, recorder } = setup();
    recorder.record(RELOADED);
    await recorder.idle();
    expect(sink.calls).toEqual([
      {
        op: 'create',
        event: {
          name: `api.${(BigInt(T0.getTime()) * 1_000_000n + 1n).toString(16)}`,
          namespace: 'team-a',
          involvedObject: RELOADED.object,
          type: 'Normal',
          reason: 'Reloaded',
          message: RELOADED.message,
          count: 1,
          firstTimestamp: T0,
          lastTimestamp: T0,
          sourceComponent: 'kreload',
          reportingController: 'kreload',
          reportingInstance: 'kreload-7d9f-abcde',
        },
      },
    ]);
  });

  it('folds identical Events within 10 minutes into a count patch', async () => {
    const { sink, recorder, advance } = setup();
    recorder.record(RELOADED);
    await recorder.idle();
    advance(60_000);
    recorder.record(RELOADED);
    await recorder.idle();
    advance(9 * 60_000);
    recorder.record(RELOADED);
    await recorder.idle();
    const created = sink.calls[0];
    if (created?.op !== 'create') throw new Error('expected a create first');
    const ref = { namespace: 'team-a', name: created.event.name };
    expect(sink.calls.slice(1)).toEqual([
      { op: 'patchCount', ref, count: 2, lastTimestamp: new Date(T0.getTime() + 60_000) },
      { op: 'patchCount', ref, count: 3, lastTimestamp: new Date(T0.getTime() + 600_000) },
    ]);
  });

  it('creates a new Event once 10 minutes have passed since the last occurrence', async () => {
    const { sink, recorder, advance } = setup();
    recorder.record(RELOADED);
    await recorder.idle();
    advance(10 * 60_000);
    recorder.record(RELOADED);
    await recorder.idle();
    expect(sink.calls.map((c) => c.op)).toEqual(['create', 'create']);
  });

  it.each<[string, Partial<EventRequest>]>([
    ['another message', { message: 'other' }],
    ['another reason', { reason: 'ReloadFail', type: 'Warning' }],
    ['another object', { object: { ...RELOADED.object, name: 'web', uid: 'uid-2' } }],
    ['a recreated object (new uid)', { object: { ...RELOADED.object, uid: 'uid-9' } }],
  ])('does not fold an Event with %s', async (_case, change) => {
    const { sink, recorder } = setup();
    recorder.record(RELOADED);
    recorder.record({ ...RELOADED, ...change });
    await recorder.idle();
    expect(sink.calls.map((c) => c.op)).toEqual(['create', 'create']);
  });

  it('adds repeats within the count interval up into one count write, so counts do not race', async () => {
    const { sink, recorder } = setup();
    recorder.record(RELOADED);
    recorder.record(RELOADED);
    recorder.record(RELOADED);
    await recorder.idle();
    expect(sink.calls.map((c) => (c.op === 'create' ? 'create' : `patch ${c.count}`))).toEqual([
      'create',
      'patch 3',
    ]);
  });

  it('creates a fresh Event when the folded one no longer exists', async () => {
    const { sink, recorder } = setup();
    recorder.record(RELOADED);
    await recorder.idle();
    sink.existing.clear();
    recorder.record(RELOADED);
    await recorder.idle();
    expect(sink.calls.map((c) => c.op)).toEqual(['create', 'patchCount', 'create']);
    const second = sink.calls[2];
    expect(second?.op === 'create' && second.event.count).toBe(1);
  });

  it('never throws to the caller; failures go to onError and the next record retries', async () => {
    const { sink, recorder, errors } = setup();
    sink.failCreate = new Error('403 forbidden');
    expect(() => {
      recorder.record(RELOADED);
    }).not.toThrow();
    await recorder.idle();
    expect(errors.map((e) => [e.message, e.cause])).toEqual([
      ['cannot write Reloaded Event for Deployment team-a/api', sink.failCreate],
    ]);
    sink.failCreate = undefined;
    recorder.record(RELOADED);
    await recorder.idle();
    expect(sink.calls.map((c) => c.op)).toEqual(['create']);
  });

  it('writes nothing while it may not write (follower or past the renew deadline)', async () => {
    let leading = false;
    const { sink, recorder } = setup({ canWrite: () => leading });
    recorder.record(RELOADED);
    await recorder.idle();
    expect(sink.calls).toEqual([]);
    leading = true;
    recorder.record(RELOADED);
    await recorder.idle();
    expect(sink.calls.map((c) => c.op)).toEqual(['create']);
  });

  it('drops a queued write when leadership ends before it starts', async () => {
    let leading = true;
    const { sink, recorder } = setup({ canWrite: () => leading });
    recorder.record(RELOADED);
    recorder.record(RELOADED);
    leading = false;
    await recorder.idle();
    expect(sink.calls).toEqual([]);
  });

  it('forgets the least recently seen Event beyond its bound', async () => {
    const { sink, recorder } = setup({ maxRemembered: 1 });
    recorder.record(RELOADED);
    recorder.record({ ...RELOADED, message: 'other' });
    await recorder.idle();
    recorder.record(RELOADED);
    await recorder.idle();
    expect(sink.calls.map((c) => c.op)).toEqual(['create', 'create', 'create']);
  });

  it('keeps Event names within 253 characters and unique within a millisecond', async () => {
    const { sink, recorder } = setup();
    const long = 'x'.repeat(253);
    recorder.record({ ...RELOADED, object: { ...RELOADED.object, name: long } });
    recorder.record({ ...RELOADED, message: 'second' });
    await recorder.idle();
    const names = sink.calls.map((c) => (c.op === 'create' ? c.event.name : ''));
    expect(names[0]?.length).toBeLessThanOrEqual(253);
    expect(new Set(names.map((n) => n.split('.').at(-1))).size).toBe(2);
  });

  it('writes at most `concurrency` Events at once', async () => {
    let open = 0;
    let maxOpen = 0;
    const releases: (() => void)[] = [];
    class SlowSink extends RecordingSink {
      override async create(event: EventDraft): Promise<void> {
        open += 1;
        maxOpen = Math.max(maxOpen, open);
        await new Promise<void>((resolve) => releases.push(resolve));
        open -= 1;
        return super.create(event);
      }
    }
    const { sink, recorder } = setup({ concurrency: 2, sink: new SlowSink() });
    for (const name of ['a', 'b', 'c', 'd', 'e']) {
      recorder.record({ ...RELOADED, object: { ...RELOADED.object, name, uid: name } });
    }
    while (sink.calls.length < 5) {
      await new Promise((resolve) => setImmediate(resolve));
      releases.shift()?.();
    }
    await recorder.idle();
    expect(maxOpen).toBe(2);
    expect(sink.calls.map((c) => (c.op === 'create' ? c.event.involvedObject.name : ''))).toEqual([
      'a',
      'b',
      'c',
      'd',
      'e',
    ]);
  });

  it('waits for `yieldTo` before each write', async () => {
    let letThrough: (() => void) | undefined;
    const { sink, recorder } = setup({
      yieldTo: () =>
        new Promise<void>((resolve) => {
          letThrough = resolve;
        }),
    });
    recorder.record(RELOADED);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sink.calls).toEqual([]);
    letThrough?.();
    await recorder.idle();
    expect(sink.calls.map((c) => c.op)).toEqual(['create']);
  });
});

/** Lets the per-key chains and the writers' queue run (the sink answers at once). */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
}

describe('EventRecorder count interval (§13.3)', () => {
  /** What the sink saw: `create <count>@<s after T0>` or `patch <count>@<lastTimestamp s>`. */
  function summary(calls: readonly SinkCall[]): string[] {
    const at = (date: Date): number => (date.getTime() - T0.getTime()) / 1000;
    return calls.map((call) =>
      call.op === 'create'
        ? `create ${String(call.event.count)}@${String(at(call.event.lastTimestamp))}`
        : `patch ${String(call.count)}@${String(at(call.lastTimestamp))}`,
    );
  }

  it.each<[string, readonly number[], readonly string[]]>([
    ['one occurrence', [0], ['create 1@0']],
    ['a repeat after the interval, written at once', [0, 31], ['create 1@0', 'patch 2@31']],
    ['a repeat 29 s after the last write waits', [0, 29], ['create 1@0', 'patch 2@29']],
    ['repeats within it, added up when it has passed', [0, 1, 2], ['create 1@0', 'patch 3@2']],
    [
      'a roll every 5 s: one count write per 30 s',
      [0, 5, 10, 15, 20, 25, 30, 35, 40],
      ['create 1@0', 'patch 6@25', 'patch 9@40'],
    ],
    [
      'repeats over two intervals, one write each',
      [0, 1, 31, 32],
      ['create 1@0', 'patch 2@1', 'patch 4@32'],
    ],
    [
      'a quiet gap: the next repeat is written at once',
      [0, 3, 100, 101],
      ['create 1@0', 'patch 2@3', 'patch 3@100', 'patch 4@101'],
    ],
  ])('%s', async (_name, seconds, expected) => {
    const { sink, recorder, runTo } = setup();
    for (const second of seconds) {
      await runTo(second * 1000);
      recorder.record(RELOADED);
      await settle();
    }
    await runTo(300_000);
    await settle();
    expect(summary(sink.calls)).toEqual(expected);
  });

  it('waits only until the interval since the last write has passed', async () => {
    const { recorder, runTo, liveTimers } = setup();
    recorder.record(RELOADED);
    await settle();
    await runTo(1_500);
    recorder.record(RELOADED);
    await settle();
    expect(liveTimers()).toEqual([28_500]);
    recorder.record(RELOADED);
    await settle();
    expect(liveTimers()).toEqual([28_500]);
  });

  it('writes waiting repeats at once when asked to be idle', async () => {
    const { sink, recorder, liveTimers } = setup();
    recorder.record(RELOADED);
    await settle();
    recorder.record(RELOADED);
    await settle();
    expect(summary(sink.calls)).toEqual(['create 1@0']);
    await recorder.idle();
    expect(summary(sink.calls)).toEqual(['create 1@0', 'patch 2@0']);
    expect(liveTimers()).toEqual([]);
  });

  it('drops waiting repeats when leadership ends before they are written', async () => {
    let leading = true;
    const { sink, recorder, runTo } = setup({ canWrite: () => leading });
    recorder.record(RELOADED);
    await settle();
    await runTo(1_000);
    recorder.record(RELOADED);
    await settle();
    leading = false;
    await runTo(40_000);
    await settle();
    expect(summary(sink.calls)).toEqual(['create 1@0']);
  });

  it('creates a fresh Event with every waiting repeat when the folded one is gone', async () => {
    const { sink, recorder, runTo } = setup();
    recorder.record(RELOADED);
    await settle();
    sink.existing.clear();
    await runTo(1_000);
    recorder.record(RELOADED);
    await settle();
    await runTo(2_000);
    recorder.record(RELOADED);
    await settle();
    await runTo(40_000);
    await settle();
    expect(summary(sink.calls)).toEqual(['create 1@0', 'patch 3@2', 'create 2@2']);
    const fresh = sink.calls[2];
    expect(fresh?.op === 'create' && fresh.event.firstTimestamp).toEqual(
      new Date(T0.getTime() + 1_000),
    );
  });
});
