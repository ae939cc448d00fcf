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

  it('takes one capture at a time: a second one gets 409 while the first runs', async () => {
    server = new ProfilingServer({ host: '127.0.0.1', port: 0 });
    const port = await server.start();
    const base = `http://127.0.0.1:${port}`;
    const first = fetch(`${base}/debug/profile?seconds=2`);
    // The first request is accepted before the next ones are sent.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const during = await Promise.all([
      fetch(`${base}/debug/profile?seconds=1`),
      fetch(`${base}/debug/heapsnapshot`),
    ]);
    expect(during.map((response) => response.status)).toEqual([409, 409]);
    expect(await during[0].text()).toContain('another profile or heap snapshot is being taken');
    expect((await first).status).toBe(200);
    await (await first).text();
    // Released once the first is done, also after a heap snapshot.
    const snapshot = await fetch(`${base}/debug/heapsnapshot`);
    expect(snapshot.status).toBe(200);
    await snapshot.text();
    expect((await fetch(`${base}/debug/profile?seconds=1`)).status).toBe(200);
  }, 30_000);

  it('a rejected seconds value does not hold the listener busy', async () => {
    server = new ProfilingServer({ host: '127.0.0.1', port: 0 });
    const port = await server.start();
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/debug/profile?seconds=0`)).status).toBe(400);
    expect((await fetch(`${base}/debug/profile?seconds=1`)).status).toBe(200);
  }, 20_000);
});
