import { expect, it } from 'vitest';
import { cpuTicksOf, statusField } from './process-sampler.ts';

it('reads kB fields of /proc/<pid>/status', () => {
  const status = 'Name:\tnode\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n';
  expect(statusField(status, 'VmRSS')).toBe(102400);
  expect(statusField(status, 'VmHWM')).toBe(204800);
  expect(statusField(status, 'VmSwap')).toBeUndefined();
});

it('sums utime and stime of /proc/<pid>/stat, whatever the command name contains', () => {
  const stat = '4242 (node (a) b) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 11 0 99 0';
  expect(cpuTicksOf(stat)).toBe(1801);
});
