/** ListWatch loop edge cases, driven through fake list and watch functions. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../core/api-error.ts';
import { stringAt } from '../core/json.ts';
import type { ListPage, ListPageFn, ListPageRequest, WatchFn } from './list-watch.ts';
import { ListWatch } from './list-watch.ts';
import { ManualTimers, RecordingConsumer } from '../testing/list-watch-testkit.ts';
import { backoffDelay, jittered, watchTimeoutSeconds } from './list-watch-timing.ts';

interface WatchCall {
  readonly query: Record<string, unknown>;
  readonly onEvent: (type: string, object: unknown) => void;
  readonly onDone: (err: unknown) => void;
  readonly controller: AbortController;
  readonly connect: () => void;
  readonly fail: (err: unknown) => void;
}

function fakeWatch(): { fn: WatchFn; calls: WatchCall[]; next: () => Promise<WatchCall> } {
  const calls: WatchCall[] = [];
  const waiters: (() => void)[] = [];
  const fn: WatchFn = (_path, query, onEvent, onDone) => {
    const connected = Promise.withResolvers<AbortController>();
    const controller = new AbortController();
    controller.signal.addEventListener('abort', () => {
      onDone(new DOMException('aborted', 'AbortError'));
    });
    calls.push({
      query,
      onEvent,
      onDone,
      controller,
      connect: () => {
        connected.resolve(controller);
      },
      fail: (err) => {
        connected.reject(err);
      },
    });
    waiters.splice(0).forEach((wake) => {
      wake();
    });
    return connected.promise;
  };
  let seen = 0;
  const next = async (): Promise<WatchCall> => {
    while (calls.length <= seen) await new Promise<void>((resolve) => waiters.push(resolve));
    const call = calls[seen++];
    if (!call) throw new Error('unreachable');
    return call;
  };
  return { fn, calls, next };
}

/** Answers `request` with one page of `names`. */
function page(request: ListPageRequest, names: string[], resourceVersion: string): ListPage {
  for (const name of names) request.onItem({ metadata: { name, resourceVersion } });
  return { resourceVersion, continue: undefined };
}

let listWatch: ListWatch<string> | undefined;
afterEach(async () => {
  await listWatch?.stop();
  listWatch = undefined;
});

function setup(listPage: ListPageFn): {
  watch: ReturnType<typeof fakeWatch>;
  timers: ManualTimers;
  consumer: RecordingConsumer<string>;
  lw: ListWatch<string>;
} {
  const watch = fakeWatch();
  const timers = new ManualTimers();
  const consumer = new RecordingConsumer<string>();
  const lw = new ListWatch<string>({
    path: '/api/v1/configmaps',
    listPage,
    watch: watch.fn,
    project: (object) => stringAt(object, ['metadata', 'name']) ?? '?',
    consumer,
    timers,
    random: () => 0.5,
  });
  listWatch = lw;
  lw.start();
  return { watch, timers, consumer, lw };
}

describe('ListWatch loop', () => {
  it("re-watches at once after client-node's inactivity TimeoutError", async () => {
    const { watch, timers } = setup((request) => Promise.resolve(page(request, ['a'], '10')));
    const first = await watch.next();
    first.connect();
    first.onEvent('BOOKMARK', { metadata: { resourceVersion: '15' } });
    first.onDone(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    const second = await watch.next();
    expect(second.query.resourceVersion).toBe('15');
    expect(timers.liveCount).toBe(0);
  });

  it('backs off when watch() itself rejects (credential plugin failure)', async () => {
    const { watch, timers, consumer } = setup((request) =>
      Promise.resolve(page(request, [], '10')),
    );
    (await watch.next()).fail(new Error('exec plugin failed'));
    expect(await timers.nextDelay()).toBe(1000);
    expect(consumer.ops()).toContain('error(watch undefined)');
  });

  it('an in-stream ERROR other than 410 aborts the watch and backs off', async () => {
    const { watch, timers, consumer } = setup((request) =>
      Promise.resolve(page(request, [], '10')),
    );
    const call = await watch.next();
    call.connect();
    await vi.waitFor(() => {
      expect(consumer.ops()).toContain('status(ok)');
    });
    call.onEvent('ERROR', { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd' });
    expect(call.controller.signal.aborted).toBe(true);
    expect(await timers.nextDelay()).toBe(1000);
    const error = consumer.calls.find((c) => c.op === 'error');
    expect(error).toMatchObject({
      phase: 'watch',
      error: { status: 500, reason: 'InternalError' },
    });
  });

  it('a 403 after the type was readable backs off up to the probe interval, then probes', async () => {
    const { watch, timers } = setup((request) => Promise.resolve(page(request, [], '10')));
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const call = await watch.next();
      call.onDone(Object.assign(new Error('Forbidden'), { statusCode: 403 }));
      call.connect();
      delays.push(await timers.nextDelay());
      timers.fire();
    }
    // 1 s doubling while within one probe interval of losing access (jitter 0.5 → none).
    expect(delays.slice(0, 5)).toEqual([1000, 2000, 4000, 8000, 16_000]);
    expect(delays.at(-1)).toBe(60_000);
  });

  it('a watch 403 marks the type forbidden until a watch connects again', async () => {
    const { watch, timers, lw } = setup((request) => Promise.resolve(page(request, [], '10')));
    const first = await watch.next();
    first.onDone(Object.assign(new Error('Forbidden'), { statusCode: 403 }));
    first.connect();
    // Readable a moment ago: retried on the backoff, not after the 60 s probe interval.
    expect(await timers.nextDelay()).toBe(1000);
    expect(lw.status).toBe('forbidden');
    timers.fire();
    const second = await watch.next();
    expect(second.query.resourceVersion).toBe('10');
    second.connect();
    await vi.waitFor(() => {
      expect(lw.status).toBe('ok');
    });
  });

  it('reports a throwing consumer and keeps going', async () => {
    const { watch, consumer } = setup((request) => Promise.resolve(page(request, [], '10')));
    consumer.upsert = () => {
      throw new Error('consumer bug');
    };
    const call = await watch.next();
    call.connect();
    call.onEvent('ADDED', { metadata: { name: 'a', resourceVersion: '11' } });
    call.onEvent('DELETED', { metadata: { name: 'a', resourceVersion: '12' } });
    expect(consumer.ops()).toEqual([
      'replace(0@10)',
      'status(ok)',
      'error(consumer undefined)',
      'remove("a")',
    ]);
  });

  it('stop() while a watch is still connecting resolves without waiting for it', async () => {
    const { watch, lw } = setup((request) => Promise.resolve(page(request, [], '10')));
    const call = await watch.next();
    await lw.stop();
    call.connect(); // the late connection is closed at once
    await vi.waitFor(() => {
      expect(call.controller.signal.aborted).toBe(true);
    });
    expect(watch.calls).toHaveLength(1);
  });

  it('stop() during a list aborts it and never hands over a partial result', async () => {
    let signal: AbortSignal | undefined;
    const pending = Promise.withResolvers<ListPage>();
    const { lw, consumer, watch } = setup((request) => {
      signal = request.signal;
      return pending.promise;
    });
    await vi.waitFor(() => {
      expect(signal).toBeDefined();
    });
    const stopping = lw.stop();
    expect(signal?.aborted).toBe(true);
    pending.reject(new ApiError('request aborted', { reason: 'Aborted', retryable: false }));
    await stopping;
    expect(consumer.calls).toEqual([]);
    expect(watch.calls).toHaveLength(0);
    expect(lw.isSynced).toBe(false);
  });

  it('relist() ends the watch and resolves once a list started after the call is in', async () => {
    let listed = 0;
    const secondList = Promise.withResolvers<undefined>();
    const { watch, lw, consumer } = setup(async (request) => {
      listed += 1;
      if (listed === 2) await secondList.promise;
      return page(request, [`v${String(listed)}`], String(10 + listed));
    });
    (await watch.next()).connect();
    let relisted = false;
    const relisting = lw.relist().then(() => {
      relisted = true;
    });
    await vi.waitFor(() => {
      expect(listed).toBe(2);
    });
    // Asked while the second list runs: served by a third one, not by the list under way.
    const again = lw.relist();
    expect(relisted).toBe(false);
    secondList.resolve(undefined);
    await relisting;
    const replaced = () => consumer.calls.flatMap((c) => (c.op === 'replace' ? [c.items] : []));
    expect(replaced()).toEqual([['v1'], ['v2']]);
    await again;
    expect(replaced()).toEqual([['v1'], ['v2'], ['v3']]);
  });

  it('relist() of a forbidden type resolves at once: there is nothing to list', async () => {
    const forbidden = new ApiError('forbidden', { status: 403, retryable: false });
    const { lw, timers } = setup(() => Promise.reject(forbidden));
    await timers.nextDelay();
    expect(lw.status).toBe('forbidden');
    await lw.relist();
  });

  it('a 410 on continue restarts at most twice, then backs off', async () => {
    const gone = new ApiError('410 Expired', { status: 410, retryable: false });
    const list = vi.fn<ListPageFn>((request) =>
      request.continue === undefined
        ? Promise.resolve({ ...page(request, ['a'], '10'), continue: 'tok' })
        : Promise.reject(gone),
    );
    const { timers } = setup(list);
    expect(await timers.nextDelay()).toBe(1000);
    expect(list.mock.calls.map(([request]) => request.continue)).toEqual([
      undefined,
      'tok',
      undefined,
      'tok',
      undefined,
      'tok',
    ]);
  });
});

describe('list-watch timing', () => {
  it.each([
    [0, 0.5, 1000],
    [1, 0.5, 2000],
    [4, 0.5, 16_000],
    [5, 0.5, 30_000],
    [40, 0.5, 30_000],
    [0, 0, 800],
    [5, 0.999_999, 36_000],
  ])('backoffDelay(attempt %i, random %f) = %i', (attempt, random, expected) => {
    expect(backoffDelay(attempt, () => random)).toBe(expected);
  });

  it.each([
    [0, 300],
    [0.5, 450],
    [0.999_999, 600],
  ])('watchTimeoutSeconds(random %f) = %i', (random, expected) => {
    expect(watchTimeoutSeconds(() => random)).toBe(expected);
  });

  it('jitter stays within ±20 %', () => {
    expect(jittered(60_000, () => 0)).toBe(48_000);
  });
});
