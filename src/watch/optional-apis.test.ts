// Discovery against a local HTTP server: a failure (503, 403, a network error) is an error state
// that is retried with backoff, never "absent" (issue 10 defect 8, ADR 0021).
import { afterEach, describe, expect, it } from 'vitest';
import { ApiDiscovery } from '../kube/discovery.ts';
import { createKubeTransport } from '../kube/transport.ts';
import type { Timers } from '../time/timers.ts';
import {
  sendJson,
  sendStatus,
  startTestApiServer,
  type TestApiServer,
} from '../testing/test-api-server.ts';
import { OptionalApis, type OptionalApi } from './optional-apis.ts';

const ROLLOUTS: OptionalApi = {
  name: 'Rollout',
  group: 'argoproj.io',
  version: 'v1alpha1',
  plural: 'rollouts',
};
const CSI: OptionalApi = {
  name: 'csi',
  group: 'secrets-store.csi.x-k8s.io',
  version: 'v1',
  plural: 'secretproviderclasspodstatuses',
};
const SERVED = { resources: [{ name: 'rollouts' }, { name: 'secretproviderclasspodstatuses' }] };

/** Timers whose scheduled callbacks run only when the test says so. */
class ManualTimers implements Timers {
  readonly pending: { delayMs: number; callback: () => void }[] = [];
  now(): number {
    return 0;
  }
  schedule(delayMs: number, callback: () => void): () => void {
    const entry = { delayMs, callback };
    this.pending.push(entry);
    return () => {
      const index = this.pending.indexOf(entry);
      if (index >= 0) this.pending.splice(index, 1);
    };
  }
  fireAll(): void {
    for (const entry of this.pending.splice(0)) entry.callback();
  }
}

let server: TestApiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(answer: { status: number } | 'served') {
  let current = answer;
  server = await startTestApiServer((_request, response) => {
    if (current === 'served') sendJson(response, 200, SERVED);
    else sendStatus(response, current.status, 'Failure');
  });
  const timers = new ManualTimers();
  const served: string[] = [];
  const errors: { api: string; retryInMs: number; message: string }[] = [];
  const recovered: string[] = [];
  const apis = new OptionalApis({
    discovery: new ApiDiscovery({
      transport: createKubeTransport({ kubeConfig: server.kubeConfig() }),
    }),
    timers,
    random: () => 0.5,
    onServed: (api) => {
      served.push(api.name);
      return Promise.resolve();
    },
    onError: (api, error, retryInMs) => {
      errors.push({ api: api.name, retryInMs, message: error.message });
    },
    onRecovered: (api, availability) => {
      recovered.push(`${api.name} ${availability}`);
    },
  });
  return {
    apis,
    timers,
    served,
    errors,
    recovered,
    server,
    answer: (next: { status: number } | 'served') => {
      current = next;
    },
  };
}

/** Lets a fired retry's request and its callbacks finish. */
async function settle(server: TestApiServer, requests: number): Promise<void> {
  await server.waitForRequests(requests);
  await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('OptionalApis', () => {
  it('a 503 from the aggregated API is an error, retried until served, then watched', async () => {
    const t = await setup({ status: 503 });
    await expect(t.apis.probe(ROLLOUTS)).resolves.toBe('error');
    expect(t.apis.availability(ROLLOUTS)).toBe('error');
    expect(t.errors).toEqual([
      { api: 'Rollout', retryInMs: 1_000, message: expect.stringContaining('Failure') as string },
    ]);
    expect(t.timers.pending.map((p) => p.delayMs)).toEqual([1_000]);

    t.timers.fireAll(); // still 503: the next delay doubles
    await settle(t.server, 2);
    expect(t.timers.pending.map((p) => p.delayMs)).toEqual([2_000]);
    expect(t.apis.availability(ROLLOUTS)).toBe('error');

    t.answer('served');
    t.timers.fireAll();
    await settle(t.server, 3);
    expect(t.apis.availability(ROLLOUTS)).toBe('served');
    expect(t.served).toEqual(['Rollout']);
    expect(t.recovered).toEqual(['Rollout served']);
    expect(t.timers.pending).toEqual([]);
    expect(t.server.requests.map((r) => r.path)).toEqual([
      '/apis/argoproj.io/v1alpha1',
      '/apis/argoproj.io/v1alpha1',
      '/apis/argoproj.io/v1alpha1',
    ]);
  });

  it.each([403, 500])('%i is an error too, never absent', async (status) => {
    const t = await setup({ status });
    await expect(t.apis.probe(CSI)).resolves.toBe('error');
    expect(t.timers.pending).toHaveLength(1);
  });

  it('a network error is an error, retried', async () => {
    const t = await setup('served');
    await t.server.close();
    await expect(t.apis.probe(CSI)).resolves.toBe('error');
    expect(t.timers.pending).toHaveLength(1);
  });

  it('404 is absent: not retried on a timer, asked again at a resync', async () => {
    const t = await setup({ status: 404 });
    await expect(t.apis.probe(ROLLOUTS)).resolves.toBe('absent');
    expect(t.timers.pending).toEqual([]);
    expect(t.errors).toEqual([]);
    t.answer('served');
    await t.apis.recheckAbsent();
    expect(t.apis.availability(ROLLOUTS)).toBe('served');
    expect(t.served).toEqual(['Rollout']);
  });

  it('an error that turns into 404 becomes absent', async () => {
    const t = await setup({ status: 503 });
    await t.apis.probe(ROLLOUTS);
    t.answer({ status: 404 });
    t.timers.fireAll();
    await settle(t.server, 2);
    expect(t.apis.availability(ROLLOUTS)).toBe('absent');
    expect(t.recovered).toEqual(['Rollout absent']);
    expect(t.served).toEqual([]);
  });

  it('stop cancels pending retries', async () => {
    const t = await setup({ status: 503 });
    await t.apis.probe(ROLLOUTS);
    t.apis.stop();
    expect(t.timers.pending).toEqual([]);
  });
});
