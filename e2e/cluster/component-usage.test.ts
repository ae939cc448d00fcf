import { expect, it } from 'vitest';
import { componentUsage, usageTable } from './component-usage.ts';

const reading = { rssKiB: 102_400, peakKiB: 153_600, cpuTicks: 1234, childCpuTicks: 16 };

it('turns launch and ready times and a /proc reading into seconds and MiB', () => {
  expect(
    componentUsage({
      name: 'kwok',
      pid: 42,
      launchedAt: 1000,
      readyAt: 1750,
      now: 61_000,
      reading,
    }),
  ).toEqual({
    name: 'kwok',
    pid: 42,
    bootSeconds: 0.75,
    upSeconds: 60,
    cpuSeconds: 12.5,
    rssMiB: 100,
    peakRssMiB: 150,
  });
});

it('reports a process already gone as gone, and the totals as unknown', () => {
  const gone = componentUsage({
    name: 'etcd',
    pid: 7,
    launchedAt: 0,
    readyAt: 500,
    now: 1000,
    reading: undefined,
  });
  expect(gone).toMatchObject({ cpuSeconds: null, rssMiB: null, peakRssMiB: null });
  const table = usageTable([gone]).split('\n');
  expect(table[1]).toMatch(/^etcd\s+0\.50\s+1\s+gone\s+gone\s+gone$/);
  expect(table[2]).toMatch(/^total\s+0\.50\s+gone\s+gone\s+gone$/);
});

it('lines up one row per component under the header, then the totals', () => {
  const row = (name: string, launchedAt: number) =>
    componentUsage({ name, pid: 1, launchedAt, readyAt: launchedAt + 400, now: 10_000, reading });
  expect(usageTable([row('kube-scheduler', 0), row('kwok', 5000)])).toBe(
    [
      'component       boot s  up s  CPU s  RSS MiB  peak RSS MiB',
      'kube-scheduler    0.40    10  12.50    100.0         150.0',
      'kwok              0.40     5  12.50    100.0         150.0',
      'total             0.80        25.00    200.0         300.0',
    ].join('\n'),
  );
});
