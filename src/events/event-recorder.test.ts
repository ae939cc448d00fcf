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
  const sink = overrides.sink ?? new RecordingSink();
  const errors: EventRecordError[] = [];
  const recorder = new EventRecorder({
    sink,
    clock: { now: () => now },
    component: 'kreload',
    instance: 'kreload-7d9f-abcde',
    onError: (error) => errors.push(error),
    ...overrides,
  });
  return {
    sink,
    recorder,
    errors,
    advance: (ms: number) => {
      now += ms;
    },
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

  it('serialises identical Events recorded back to back, so counts do not race', async () => {
    const { sink, recorder } = setup();
    recorder.record(RELOADED);
    recorder.record(RELOADED);
    recorder.record(RELOADED);
    await recorder.idle();
    expect(sink.calls.map((c) => (c.op === 'create' ? 'create' : `patch ${c.count}`))).toEqual([
      'create',
      'patch 2',
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
