import { afterEach, describe, expect, it } from 'vitest';
import { ProfilingServer, profileSeconds } from './profiling-server.ts';

describe('profileSeconds', () => {
  it.each([
    ['', 30],
    ['seconds=1', 1],
    ['seconds=60', 60],
    ['seconds=0', undefined],
    ['seconds=61', undefined],
    ['seconds=1.5', undefined],
    ['seconds=abc', undefined],
  ])('%s → %s', (query, expected) => {
    expect(profileSeconds(new URLSearchParams(query))).toBe(expected);
  });
});

describe('ProfilingServer', () => {
  let server: ProfilingServer | undefined;
  afterEach(async () => {
    await server?.stop();
  });

  it('serves a CPU profile, a heap snapshot and 404 elsewhere', async () => {
    server = new ProfilingServer({ host: '127.0.0.1', port: 0 });
    const port = await server.start();
    const base = `http://127.0.0.1:${port}`;
    const profile = (await (await fetch(`${base}/debug/profile?seconds=1`)).json()) as {
      nodes: unknown[];
    };
    expect(Array.isArray(profile.nodes)).toBe(true);
    const snapshot = await fetch(`${base}/debug/heapsnapshot`);
    expect(snapshot.status).toBe(200);
    expect((await snapshot.text()).startsWith('{"snapshot":')).toBe(true);
    expect((await fetch(`${base}/debug/pprof/`)).status).toBe(404);
    expect((await fetch(`${base}/debug/profile?seconds=99`)).status).toBe(400);
  }, 20_000);
});
