import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { stringAt } from '../core/json.ts';
import type { ListWatch } from './list-watch.ts';
import { ManualTimers, RecordingConsumer } from '../testing/list-watch-testkit.ts';
import { createResourceListWatch } from './resource-list-watch.ts';
import { OTHER_RESOURCES } from './resources.ts';
import { sendJson, sendStatus, startTestApiServer } from '../testing/test-api-server.ts';
import type { RecordedRequest, TestApiServer } from '../testing/test-api-server.ts';
import { createKubeTransport } from './transport.ts';

type Responder = (request: RecordedRequest, response: ServerResponse) => void;

const PATH = '/api/v1/namespaces/ns/configmaps';

function cm(name: string, resourceVersion: string): object {
  return { metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion } };
}

function listAnswer(items: object[], resourceVersion: string, continueToken = ''): Responder {
  return (_request, response) => {
    sendJson(response, 200, {
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: { resourceVersion, continue: continueToken },
      items,
    });
  };
}

function statusAnswer(code: number, reason: string): Responder {
  return (_request, response) => {
    sendStatus(response, code, reason);
  };
}

/** Streams the events, then closes the stream, or leaves it open with `keepOpen`. */
function watchAnswer(events: { type: string; object: object }[], keepOpen = false): Responder {
  return (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.flushHeaders();
    for (const event of events) response.write(`${JSON.stringify(event)}\n`);
    if (!keepOpen) response.end();
  };
}

const holdOpen = watchAnswer([], true);

let server: TestApiServer;
let lists: Responder[];
let watches: Responder[];
let timers: ManualTimers;
let consumer: RecordingConsumer<string>;
let listWatch: ListWatch<string> | undefined;

beforeEach(async () => {
  lists = [];
  watches = [];
  timers = new ManualTimers();
  consumer = new RecordingConsumer<string>();
  server = await startTestApiServer((request, response) => {
    const isWatch = request.query.get('watch') === 'true';
    const next = (isWatch ? watches : lists).shift();
    if (next) next(request, response);
    else if (isWatch) holdOpen(request, response);
    else sendStatus(response, 500, 'InternalError', 'unscripted list');
  });
});

afterEach(async () => {
  await listWatch?.stop();
  listWatch = undefined;
  await server.close();
});

function start(
  selectors: { labelSelector?: string; fieldSelector?: string; inactivityTimeoutMs?: number } = {},
): ListWatch<string> {
  const kubeConfig = server.kubeConfig();
  listWatch = createResourceListWatch({
    transport: createKubeTransport({ kubeConfig }),
    resource: OTHER_RESOURCES.configMaps,
    namespace: 'ns',
    ...selectors,
    project: (object) => stringAt(object, ['metadata', 'name']) ?? '?',
    consumer,
    timers,
    random: () => 0.5,
  });
  listWatch.start();
  return listWatch;
}

const isList = (r: RecordedRequest): boolean => r.query.get('watch') !== 'true';
const isWatch = (r: RecordedRequest): boolean => r.query.get('watch') === 'true';

function requestsOf(predicate: (r: RecordedRequest) => boolean): RecordedRequest[] {
  return server.requests.filter(predicate);
}

describe('ListWatch against a fake API server', () => {
  it('lists page by page, hands over one replace, then watches from the list resourceVersion', async () => {
    lists.push(listAnswer([cm('a', '5'), cm('b', '6')], '10', 'token-1'));
    lists.push(listAnswer([cm('c', '7')], '11'));
    const lw = start({ labelSelector: 'team=a', fieldSelector: 'type!=helm.sh/release.v1' });
    await lw.synced;
    await server.waitForRequests(1, isWatch);

    expect(consumer.calls).toEqual([
      { op: 'replace', items: ['a', 'b', 'c'], resourceVersion: '10' },
      { op: 'status', status: 'ok' },
    ]);
    expect(lw.isSynced).toBe(true);
    expect(lw.status).toBe('ok');
    const [first, second] = requestsOf(isList);
    expect(first?.path).toBe(PATH);
    expect(Object.fromEntries(first?.query ?? [])).toEqual({
      limit: '500',
      labelSelector: 'team=a',
      fieldSelector: 'type!=helm.sh/release.v1',
    });
    expect(Object.fromEntries(second?.query ?? [])).toEqual({
      limit: '500',
      continue: 'token-1',
      labelSelector: 'team=a',
      fieldSelector: 'type!=helm.sh/release.v1',
    });
    const [watch] = requestsOf(isWatch);
    expect(watch?.path).toBe(PATH);
    expect(Object.fromEntries(watch?.query ?? [])).toEqual({
      watch: 'true',
      resourceVersion: '10',
      allowWatchBookmarks: 'true',
      timeoutSeconds: '450',
      labelSelector: 'team=a',
      fieldSelector: 'type!=helm.sh/release.v1',
    });
  });

  it('delivers watch events, lets bookmarks move the resourceVersion, re-watches after a clean close', async () => {
    lists.push(listAnswer([cm('a', '5')], '10'));
    watches.push(
      watchAnswer([
        { type: 'ADDED', object: cm('b', '11') },
        { type: 'MODIFIED', object: cm('a', '12') },
        { type: 'DELETED', object: cm('b', '13') },
        { type: 'BOOKMARK', object: { kind: 'ConfigMap', metadata: { resourceVersion: '20' } } },
      ]),
    );
    start();
    await server.waitForRequests(2, isWatch);

    expect(consumer.ops()).toEqual([
      'replace(1@10)',
      'status(ok)',
      'upsert("b")',
      'upsert("a")',
      'remove("b")',
    ]);
    expect(requestsOf(isWatch).map((r) => r.query.get('resourceVersion'))).toEqual(['10', '20']);
    expect(requestsOf(isList)).toHaveLength(1);
    expect(timers.liveCount).toBe(0);
  });

  it('relists on an in-stream 410 ERROR, says so, and hands over the new full set', async () => {
    lists.push(listAnswer([cm('a', '5'), cm('b', '6')], '10'));
    watches.push(
      watchAnswer(
        [
          {
            type: 'ERROR',
            object: {
              kind: 'Status',
              code: 410,
              reason: 'Expired',
              message: 'too old resource version',
            },
          },
        ],
        true,
      ),
    );
    lists.push(listAnswer([cm('a', '5')], '30'));
    start();
    await server.waitForRequests(2, isWatch);

    expect(consumer.ops()).toEqual(['replace(2@10)', 'status(ok)', 'expired', 'replace(1@30)']);
    expect(requestsOf(isWatch).map((r) => r.query.get('resourceVersion'))).toEqual(['10', '30']);
    expect(timers.liveCount).toBe(0);
  });

  it('relists when the watch answers HTTP 410, and says so', async () => {
    lists.push(listAnswer([], '10'));
    watches.push(statusAnswer(410, 'Gone'));
    lists.push(listAnswer([cm('x', '40')], '41'));
    start();
    await server.waitForRequests(2, isWatch);
    expect(consumer.ops()).toEqual(['replace(0@10)', 'status(ok)', 'expired', 'replace(1@41)']);
  });

  it('restarts the list from scratch when a continue token expired', async () => {
    lists.push(listAnswer([cm('a', '1')], '10', 'old-token'));
    lists.push(statusAnswer(410, 'Expired'));
    lists.push(listAnswer([cm('a', '1')], '12', 'new-token'));
    lists.push(listAnswer([cm('b', '2')], '13'));
    start();
    await server.waitForRequests(1, isWatch);

    expect(requestsOf(isList).map((r) => r.query.get('continue'))).toEqual([
      null,
      'old-token',
      null,
      'new-token',
    ]);
    expect(consumer.ops()).toEqual(['replace(2@12)', 'status(ok)']);
    expect(requestsOf(isWatch)[0]?.query.get('resourceVersion')).toBe('12');
  });

  it('backs off 1 s, 2 s … on 500 and never hands over an empty list in its place', async () => {
    lists.push(statusAnswer(500, 'InternalError'), statusAnswer(500, 'InternalError'));
    lists.push(listAnswer([cm('a', '1')], '10'));
    const lw = start();

    expect(await timers.nextDelay()).toBe(1000);
    expect(lw.isSynced).toBe(false);
    timers.fire();
    await server.waitForRequests(2, isList);
    await vi.waitFor(() => {
      expect(timers.liveCount).toBe(1);
    });
    expect(await timers.nextDelay()).toBe(2000);
    timers.fire();
    await lw.synced;

    expect(consumer.ops()).toEqual([
      'error(list 500)',
      'error(list 500)',
      'replace(1@10)',
      'status(ok)',
    ]);
  });

  it('backs off on a watch 500 and re-watches from the last resourceVersion', async () => {
    lists.push(listAnswer([], '10'));
    watches.push(statusAnswer(500, 'InternalError'));
    start();
    expect(await timers.nextDelay()).toBe(1000);
    timers.fire();
    await server.waitForRequests(2, isWatch);
    expect(requestsOf(isWatch).map((r) => r.query.get('resourceVersion'))).toEqual(['10', '10']);
    expect(requestsOf(isList)).toHaveLength(1);
    expect(consumer.ops()).toEqual(['replace(0@10)', 'status(ok)', 'error(watch 500)']);
  });

  it('keeps doubling while failures continue, and resets after a healthy minute', async () => {
    lists.push(listAnswer([], '10'));
    watches.push(statusAnswer(500, 'x'), statusAnswer(500, 'x'));
    start();
    expect(await timers.nextDelay()).toBe(1000);
    timers.fire();
    await server.waitForRequests(2, isWatch);
    expect(await timers.nextDelay()).toBe(2000);
    timers.nowMs += 120_000; // failing for minutes is not healthy
    watches.push(statusAnswer(500, 'x'));
    timers.fire();
    await server.waitForRequests(3, isWatch);
    expect(await timers.nextDelay()).toBe(4000);

    // The next watch connects, stays up for over a minute, then its stream breaks.
    let open: ServerResponse | undefined;
    watches.push((_request, response) => {
      open = response;
      watchAnswer([{ type: 'ADDED', object: cm('a', '11') }], true)(_request, response);
    });
    timers.fire();
    await vi.waitFor(() => {
      expect(consumer.ops()).toContain('upsert("a")');
    });
    timers.nowMs += 61_000;
    open?.destroy();
    expect(await timers.nextDelay()).toBe(1000);
  });

  it.each([
    [403, 'Forbidden', 'forbidden'],
    [404, 'NotFound', 'absent'],
  ] as const)(
    'a list %i marks the type %s and retries every 60 s',
    async (code, reason, status) => {
      lists.push(statusAnswer(code, reason), statusAnswer(code, reason));
      lists.push(listAnswer([cm('a', '1')], '10'));
      const lw = start();

      expect(await timers.nextDelay()).toBe(60_000);
      expect(lw.status).toBe(status);
      timers.fire();
      await server.waitForRequests(2, isList);
      await vi.waitFor(() => {
        expect(timers.liveCount).toBe(1);
      });
      expect(await timers.nextDelay()).toBe(60_000);
      timers.fire();
      await lw.synced;
      expect(lw.status).toBe('ok');
      expect(consumer.ops()).toEqual([
        `error(list ${String(code)})`,
        `status(${status})`,
        `error(list ${String(code)})`,
        'replace(1@10)',
        'status(ok)',
      ]);
    },
  );

  it('a watch that keeps closing without events backs off after the first immediate retry', async () => {
    lists.push(listAnswer([], '10'));
    watches.push(watchAnswer([]), watchAnswer([]));
    start();
    await server.waitForRequests(2, isWatch);
    expect(await timers.nextDelay()).toBe(1000);
  });

  it('stop() ends an open watch and sends nothing more', async () => {
    lists.push(listAnswer([], '10'));
    const lw = start();
    await server.waitForRequests(1, isWatch);
    await lw.stop();
    const count = server.requests.length;
    expect(timers.liveCount).toBe(0);
    await new Promise<void>((resolve) => {
      setImmediate(resolve);
    });
    expect(server.requests).toHaveLength(count);
  });

  it('stop() during a backoff cancels the timer and resolves at once', async () => {
    lists.push(statusAnswer(500, 'x'));
    const lw = start();
    await timers.nextDelay();
    await lw.stop();
    expect(timers.liveCount).toBe(0);
    expect(requestsOf(isList)).toHaveLength(1);
  });

  it('re-watches at once when the inactivity watchdog fires on a quiet watch', async () => {
    lists.push(listAnswer([], '10'));
    start({ inactivityTimeoutMs: 50 });
    await server.waitForRequests(3, isWatch);
    expect(requestsOf(isWatch).map((r) => r.query.get('resourceVersion'))).toEqual([
      '10',
      '10',
      '10',
    ]);
    expect(requestsOf(isList)).toHaveLength(1);
    expect(timers.liveCount).toBe(0);
    expect(consumer.ops()).toEqual(['replace(0@10)', 'status(ok)']);
  });
});

describe('ListWatch against answers it cannot decode', () => {
  const MARKER = 'bWFya2VyLXNlY3JldC0zMQ==';

  function rawAnswer(status: number, body: string): Responder {
    return (_request, response) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(body);
    };
  }

  it('a 200 list answer without items is an error, never an empty list', async () => {
    lists.push(rawAnswer(200, '{"kind":"ConfigMapList","metadata":{"resourceVersion":"10"}}'));
    lists.push(listAnswer([cm('a', '5')], '11'));
    const lw = start();
    expect(await timers.nextDelay()).toBe(1000);
    expect(lw.isSynced).toBe(false);
    expect(consumer.calls.find((c) => c.op === 'replace')).toBeUndefined();
    timers.fire();
    await lw.synced;
    expect(consumer.ops()).toEqual(['error(list 200)', 'replace(1@11)', 'status(ok)']);
    const [failure] = consumer.calls;
    expect(failure).toMatchObject({ error: { reason: 'MalformedResponse' } });
    expect(failure?.op === 'error' ? failure.error.message : '').toContain('without "items"');
  });

  it('a watch line it cannot parse is an error that relists; the event after it is not applied', async () => {
    lists.push(listAnswer([cm('a', '5')], '10'));
    watches.push((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"type":"MODIFIED","object":{"metadata":{"name":"a", broken\n');
      response.write(`${JSON.stringify({ type: 'MODIFIED', object: cm('b', '12') })}\n`);
    });
    lists.push(listAnswer([cm('a', '5'), cm('b', '12')], '12'));
    start();
    expect(await timers.nextDelay()).toBe(1000);
    timers.fire();
    await server.waitForRequests(2, isWatch);

    expect(consumer.ops()).toEqual([
      'replace(1@10)',
      'status(ok)',
      'error(watch 200)',
      'replace(2@12)',
    ]);
    expect(requestsOf(isList)).toHaveLength(2);
    expect(requestsOf(isWatch).map((r) => r.query.get('resourceVersion'))).toEqual(['10', '12']);
  });

  it('a Secret list that is not JSON reports status and offset, never a byte of the body', async () => {
    lists.push(
      rawAnswer(
        200,
        `{"kind":"SecretList","metadata":{"resourceVersion":"3"},"items":[{"data":{"token":"${MARKER}"},"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"${MARKER}"}}} <!-- ${MARKER} -->`,
      ),
    );
    start();
    await timers.nextDelay();
    const error = consumer.calls.find((c) => c.op === 'error');
    expect(error).toMatchObject({ phase: 'list', error: { status: 200 } });
    expect(error?.op === 'error' ? error.error.message : '').toMatch(
      /^malformed 200 response: .* at byte \d+$/,
    );
    const everything = JSON.stringify(consumer.calls, (_key, value: unknown) =>
      value instanceof Error
        ? { message: value.message, stack: value.stack, cause: value.cause }
        : value,
    );
    expect(everything).not.toContain(MARKER);
  });
});
