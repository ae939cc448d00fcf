import { describe, expect, it } from 'vitest';
import { DeliveryQueue, deliver, judgeStatus } from './delivery.ts';
import type { AnswerVerdict, DeliveryAttempt, RetryPolicy } from './delivery.ts';
import type { DeliveryTimers, HttpFetch, HttpRequest, HttpResponse } from './ports.ts';

describe('judgeStatus', () => {
  const accepts200 = (status: number): boolean => status === 200;
  it.each<[number, AnswerVerdict]>([
    [200, 'delivered'],
    [201, 'failed'],
    [301, 'failed'],
    [302, 'failed'],
    [307, 'failed'],
    [400, 'failed'],
    [404, 'failed'],
    [429, 'retry'],
    [500, 'retry'],
    [503, 'retry'],
  ])('%i → %s', (status, verdict) => {
    expect(judgeStatus(status, accepts200)).toBe(verdict);
  });
});

/** Timers that run every callback on the next macrotask and remember the requested delays. */
function recordingTimers(): DeliveryTimers & { delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    schedule: (delayMs, callback) => {
      if (delayMs >= 60_000) return () => undefined; // per-attempt timeouts: never due here
      delays.push(delayMs);
      const immediate = setImmediate(callback);
      return () => {
        clearImmediate(immediate);
      };
    },
  };
}

const POLICY: RetryPolicy = {
  attempts: 3,
  backoffMs: (n) => 1000 * 2 ** (n - 1),
  timeoutMs: 300_000,
  accepts: (status) => status < 400,
};

function scriptedFetch(script: (number | Error)[]): HttpFetch & { requests: HttpRequest[] } {
  const requests: HttpRequest[] = [];
  const fetch = (_url: string, request: HttpRequest): Promise<HttpResponse> => {
    requests.push(request);
    const next = script.shift() ?? 200;
    if (next instanceof Error) return Promise.reject(next);
    return Promise.resolve({ status: next, text: () => Promise.resolve('') });
  };
  return Object.assign(fetch, { requests });
}

function attempt(
  fetch: HttpFetch,
  timers: DeliveryTimers,
  signal = new AbortController().signal,
): DeliveryAttempt {
  return {
    fetch,
    timers,
    url: 'https://hooks.example.com/secret-token',
    headers: { 'content-type': 'text/plain' },
    body: 'hello',
    policy: POLICY,
    signal,
  };
}

const refused = (): Error =>
  new TypeError('fetch failed', {
    cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
  });

describe('deliver', () => {
  it('posts once when the first answer is accepted, without following redirects', async () => {
    const fetch = scriptedFetch([200]);
    const timers = recordingTimers();
    expect(await deliver(attempt(fetch, timers))).toEqual({ delivered: true, attempts: 1 });
    expect(fetch.requests).toHaveLength(1);
    expect(fetch.requests[0]).toMatchObject({
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
      redirect: 'manual',
    });
    expect(timers.delays).toEqual([]);
  });

  it.each<[string, (number | Error)[], object, number[]]>([
    ['retries 5xx, then succeeds', [503, 200], { delivered: true, attempts: 2 }, [1000]],
    [
      'retries 429 and network errors up to 3 attempts',
      [429, refused(), 500],
      { delivered: false, attempts: 3, reason: 'status 500' },
      [1000, 2000],
    ],
    ['does not retry a 4xx', [404], { delivered: false, attempts: 1, reason: 'status 404' }, []],
    [
      'does not retry a redirect',
      [302],
      { delivered: false, attempts: 1, reason: 'status 302' },
      [],
    ],
    [
      'names the network error code',
      [refused(), refused(), refused()],
      { delivered: false, attempts: 3, reason: 'network error: ECONNREFUSED' },
      [1000, 2000],
    ],
  ])('%s', async (_case, script, result, delays) => {
    const timers = recordingTimers();
    expect(await deliver(attempt(scriptedFetch(script), timers))).toEqual(result);
    expect(timers.delays).toEqual(delays);
  });

  it('never puts the URL into a reason', async () => {
    const url = 'https://hooks.example.com/secret-token';
    const fetch = scriptedFetch([new TypeError(`Failed to parse URL from ${url}`), 404]);
    const result = await deliver(attempt(fetch, recordingTimers()));
    expect(JSON.stringify(result)).not.toContain('secret-token');
  });

  it('counts a timed-out attempt as retryable', async () => {
    let timeoutCallback: (() => void) | undefined;
    const timers: DeliveryTimers = {
      schedule: (delayMs, callback) => {
        if (delayMs === POLICY.timeoutMs) timeoutCallback ??= callback;
        else setImmediate(callback);
        return () => undefined;
      },
    };
    const fetch: HttpFetch = (_url, request) =>
      new Promise((resolve, reject) => {
        if (timeoutCallback === undefined || request.signal.aborted) {
          resolve({ status: 200, text: () => Promise.resolve('') });
          return;
        }
        request.signal.addEventListener('abort', () => {
          reject(new DOMException('aborted', 'AbortError'));
        });
        timeoutCallback();
      });
    const result = await deliver({ ...attempt(fetch, timers), policy: { ...POLICY, attempts: 1 } });
    expect(result).toEqual({ delivered: false, attempts: 1, reason: 'timed out' });
  });

  it('stops retrying once aborted', async () => {
    const abort = new AbortController();
    const fetch: HttpFetch = () => {
      abort.abort();
      return Promise.resolve({ status: 503, text: () => Promise.resolve('') });
    };
    const result = await deliver(attempt(fetch, recordingTimers(), abort.signal));
    expect(result).toEqual({ delivered: false, attempts: 1, reason: 'shutting down' });
  });
});

describe('DeliveryQueue', () => {
  function blockingQueue(capacity: number) {
    const delivered: string[] = [];
    const dropped: string[] = [];
    const releases: (() => void)[] = [];
    const queue = new DeliveryQueue<string>({
      capacity,
      deliver: (item) =>
        new Promise<void>((resolve) => {
          releases.push(() => {
            delivered.push(item);
            resolve();
          });
        }),
      onDropped: (item) => dropped.push(item),
    });
    const releaseAll = async (): Promise<void> => {
      while (releases.length > 0 || queue.pendingCount > 0) {
        releases.shift()?.();
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    return { queue, delivered, dropped, releaseAll };
  }

  it('delivers in order, one at a time', async () => {
    const { queue, delivered, releaseAll } = blockingQueue(10);
    queue.start();
    queue.push('a');
    queue.push('b');
    await releaseAll();
    await queue.idle();
    expect(delivered).toEqual(['a', 'b']);
  });

  it('drops the oldest pending item on overflow', async () => {
    const { queue, delivered, dropped, releaseAll } = blockingQueue(2);
    queue.start();
    for (const item of ['in-flight', 'p1', 'p2', 'p3', 'p4']) queue.push(item);
    expect(dropped).toEqual(['p1', 'p2']);
    await releaseAll();
    await queue.idle();
    expect(delivered).toEqual(['in-flight', 'p3', 'p4']);
  });

  it('ignores items before start and after stop, and abandons pending ones on stop', async () => {
    const { queue, delivered, dropped, releaseAll } = blockingQueue(10);
    queue.push('early');
    queue.start();
    queue.push('a');
    queue.push('b');
    const stopped = queue.stop();
    queue.push('late');
    await releaseAll();
    await stopped;
    expect(delivered).toEqual(['a']);
    expect(dropped).toEqual([]);
  });

  it('reports an item whose delivery rejects as dropped and keeps going', async () => {
    const dropped: string[] = [];
    const queue = new DeliveryQueue<string>({
      capacity: 10,
      deliver: (item) => (item === 'bad' ? Promise.reject(new Error('bug')) : Promise.resolve()),
      onDropped: (item) => dropped.push(item),
    });
    queue.start();
    queue.push('bad');
    queue.push('good');
    await queue.idle();
    expect(dropped).toEqual(['bad']);
  });
});
