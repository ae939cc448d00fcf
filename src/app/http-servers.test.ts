import { PassThrough } from 'node:stream';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { parseOptions } from '../config/parse-options.ts';
import { createLogger } from '../log/logger.ts';
import { createHttpServers, type HttpServers } from './http-servers.ts';

const started: HttpServers[] = [];

afterEach(async () => {
  for (const servers of started.splice(0)) {
    await servers.health.stop();
    await servers.probes?.stop();
  }
});

async function serversFor(argv: string[]): Promise<HttpServers> {
  const parsed = await parseOptions(argv, {});
  // Port 0 stands for the flag's port: the test needs free ones.
  const options = {
    ...parsed,
    metricsPort: 0,
    healthAddr: parsed.healthAddr && { ...parsed.healthAddr, port: 0 },
  };
  const servers = createHttpServers({
    options,
    registry: new Registry(),
    logger: createLogger({ level: 'error', format: 'text', stream: new PassThrough() }),
    readiness: {
      watch: {
        watchStates: () => [],
        unwatchedKinds: () => ({}),
        apiServerStatus: () => 'ok',
      },
      election: undefined,
      shuttingDown: () => false,
    },
    explain: undefined as never,
  });
  started.push(servers);
  return servers;
}

describe('createHttpServers', () => {
  it('without --health-addr, one listener serves metrics and probes', async () => {
    const servers = await serversFor([]);
    expect(servers.probes).toBeUndefined();
  });

  it('--metrics-addr binds its host; --health-addr adds a probe-only listener', async () => {
    const servers = await serversFor(['--metrics-addr=127.0.0.1:9999', '--health-addr=[::1]:8888']);
    const metricsPort = await servers.health.start();
    const probesPort = await servers.probes!.start();
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(200);
    expect((await fetch(`http://[::1]:${probesPort}/live`)).status).toBe(200);
    expect((await fetch(`http://[::1]:${probesPort}/metrics`)).status).toBe(404);
    // Bound to the loopback addresses given, not to every interface.
    await expect(fetch(`http://[::1]:${metricsPort}/metrics`)).rejects.toThrow();
  });
});
