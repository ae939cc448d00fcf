import PQueue from 'p-queue';
import { describe, expect, it } from 'vitest';
import { createListPageFn } from './resource-list-watch.ts';
import type { KubeRequest, KubeTransport } from './transport.ts';

/** A transport whose answers the test releases one by one. */
function heldTransport() {
  const waiting: { request: KubeRequest; answer: (body: unknown) => void }[] = [];
  const transport: KubeTransport = {
    request: (request) =>
      new Promise((resolve) => {
        waiting.push({ request, answer: resolve });
      }),
  };
  return { transport, waiting };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const page = (name: string) => ({
  metadata: { resourceVersion: '7', continue: '' },
  items: [{ metadata: { name } }],
});

function pageRequest(continueToken?: string) {
  return {
    limit: 500,
    continue: continueToken,
    labelSelector: 'a=b',
    fieldSelector: undefined,
    signal: new AbortController().signal,
  };
}

describe('createListPageFn', () => {
  it('asks for one page with limit, continue and selectors, and reads items and tokens', async () => {
    const { transport, waiting } = heldTransport();
    const listPage = createListPageFn(transport, '/api/v1/configmaps');
    const result = listPage(pageRequest('tok'));
    await tick();
    expect(waiting[0]?.request).toMatchObject({
      method: 'GET',
      path: '/api/v1/configmaps',
      query: { limit: 500, continue: 'tok', labelSelector: 'a=b' },
    });
    waiting[0]?.answer(page('x'));
    await expect(result).resolves.toEqual({
      items: [{ metadata: { name: 'x' } }],
      resourceVersion: '7',
      continue: '',
    });
  });

  it('fetches through the shared limiter: two loops, one page at a time', async () => {
    const { transport, waiting } = heldTransport();
    const queue = new PQueue({ concurrency: 1 });
    const limiter = <R>(fetch: () => Promise<R>) => queue.add(fetch);
    const configMaps = createListPageFn(transport, '/api/v1/configmaps', limiter);
    const secrets = createListPageFn(transport, '/api/v1/secrets', limiter);
    const first = configMaps(pageRequest());
    const second = secrets(pageRequest());
    await tick();
    expect(waiting.map((w) => w.request.path)).toEqual(['/api/v1/configmaps']);
    waiting[0]?.answer(page('cm'));
    await first;
    await tick();
    expect(waiting.map((w) => w.request.path)).toEqual(['/api/v1/configmaps', '/api/v1/secrets']);
    waiting[1]?.answer(page('s'));
    await expect(second).resolves.toMatchObject({ items: [{ metadata: { name: 's' } }] });
  });
});
