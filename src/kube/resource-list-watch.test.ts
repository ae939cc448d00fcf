import { Readable } from 'node:stream';
import PQueue from 'p-queue';
import { describe, expect, it } from 'vitest';
import { createListPageFn } from './resource-list-watch.ts';
import type { JsonObject } from '../core/json.ts';
import type { ListPageRequest } from './list-watch.ts';
import type { KubeResponseStream, KubeStreamRequest, StreamingKubeTransport } from './transport.ts';

/** A transport whose streamed answers the test releases one by one. */
function heldTransport() {
  const waiting: { request: KubeStreamRequest; answer: (body: unknown) => void }[] = [];
  const transport: StreamingKubeTransport = {
    request: () => Promise.reject(new Error('not used')),
    stream: (request) =>
      new Promise<KubeResponseStream>((resolve) => {
        waiting.push({
          request,
          answer: (body) => {
            const bytes = Buffer.from(JSON.stringify(body));
            resolve({
              status: 200,
              chunks: Readable.from([bytes.subarray(0, 5), bytes.subarray(5)]),
            });
          },
        });
      }),
  };
  return { transport, waiting };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const page = (name: string) => ({
  metadata: { resourceVersion: '7', continue: '' },
  items: [{ metadata: { name } }],
});

function pageRequest(continueToken?: string, items: JsonObject[] = []): ListPageRequest {
  return {
    limit: 500,
    continue: continueToken,
    labelSelector: 'a=b',
    fieldSelector: undefined,
    signal: new AbortController().signal,
    onItem: (item) => items.push(item),
  };
}

describe('createListPageFn', () => {
  it('asks for one page with limit, continue and selectors, and reads items and tokens', async () => {
    const { transport, waiting } = heldTransport();
    const listPage = createListPageFn(transport, '/api/v1/configmaps');
    const items: JsonObject[] = [];
    const result = listPage(pageRequest('tok', items));
    await tick();
    expect(waiting[0]?.request).toMatchObject({
      path: '/api/v1/configmaps',
      query: { limit: 500, continue: 'tok', labelSelector: 'a=b' },
    });
    waiting[0]?.answer(page('x'));
    await expect(result).resolves.toEqual({ resourceVersion: '7', continue: '' });
    expect(items).toEqual([{ metadata: { name: 'x' } }]);
  });

  it('fetches through the shared limiter: two loops, one page at a time', async () => {
    const { transport, waiting } = heldTransport();
    const queue = new PQueue({ concurrency: 1 });
    const limiter = <R>(fetch: () => Promise<R>) => queue.add(fetch);
    const configMaps = createListPageFn(transport, '/api/v1/configmaps', limiter);
    const secrets = createListPageFn(transport, '/api/v1/secrets', limiter);
    const secretItems: JsonObject[] = [];
    const first = configMaps(pageRequest());
    const second = secrets(pageRequest(undefined, secretItems));
    await tick();
    expect(waiting.map((w) => w.request.path)).toEqual(['/api/v1/configmaps']);
    waiting[0]?.answer(page('cm'));
    await first;
    await tick();
    expect(waiting.map((w) => w.request.path)).toEqual(['/api/v1/configmaps', '/api/v1/secrets']);
    waiting[1]?.answer(page('s'));
    await second;
    expect(secretItems).toEqual([{ metadata: { name: 's' } }]);
  });
});
