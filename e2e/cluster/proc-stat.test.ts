import { expect, it } from 'vitest';
import { childCpuTicksOf, cpuTicksOf, readProcess, statusField } from './proc-stat.ts';

it('reads kB fields of /proc/<pid>/status', () => {
  const status = 'Name:\tnode\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n';
  expect(statusField(status, 'VmRSS')).toBe(102400);
  expect(statusField(status, 'VmHWM')).toBe(204800);
  expect(statusField(status, 'VmSwap')).toBeUndefined();
});

it('sums utime and stime, and cutime and cstime, whatever the command name contains', () => {
  const stat =
    '4242 (node (a) b) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 89 11 20 0 11 0 99 0';
  expect(cpuTicksOf(stat)).toBe(1801);
  expect(childCpuTicksOf(stat)).toBe(100);
});

it('reads nothing from a truncated stat line', () => {
  expect(cpuTicksOf('4242 (node) S 1 2')).toBeUndefined();
  expect(childCpuTicksOf('4242 (node) S 1 2')).toBeUndefined();
});

it('reads this very process, and nothing for a PID that does not exist', async () => {
  const reading = await readProcess(process.pid);
  expect(reading?.rssKiB).toBeGreaterThan(0);
  expect(reading?.peakKiB).toBeGreaterThanOrEqual(reading?.rssKiB ?? Infinity);
  expect(await readProcess(2 ** 22 + 1)).toBeUndefined();
});
