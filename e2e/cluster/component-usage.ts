/**
 * What each control-plane component cost a run: its boot time, the CPU it used and its peak
 * memory, read from /proc just before teardown. The e2e teardown prints it, so a CI log shows what
 * kube-scheduler and kwok add to the suite. Formatting is pure.
 */
import { TICKS_PER_SECOND, type ProcessReading } from './proc-stat.ts';

export interface ComponentUsage {
  readonly name: string;
  readonly pid: number;
  /** Launch → ready, seconds. */
  readonly bootSeconds: number;
  /** Launch → this reading, seconds. */
  readonly upSeconds: number;
  /** utime + stime, plus cutime + cstime of children it waited for. Null: already gone. */
  readonly cpuSeconds: number | null;
  readonly rssMiB: number | null;
  /** VmHWM: the kernel's peak resident set of the process. */
  readonly peakRssMiB: number | null;
}

const toMiB = (kib: number): number => Math.round((kib / 1024) * 10) / 10;
const round2 = (value: number): number => Math.round(value * 100) / 100;

export function componentUsage(details: {
  readonly name: string;
  readonly pid: number;
  readonly launchedAt: number;
  readonly readyAt: number;
  readonly now: number;
  readonly reading: ProcessReading | undefined;
}): ComponentUsage {
  const { reading } = details;
  return {
    name: details.name,
    pid: details.pid,
    bootSeconds: round2((details.readyAt - details.launchedAt) / 1000),
    upSeconds: round2((details.now - details.launchedAt) / 1000),
    cpuSeconds:
      reading === undefined
        ? null
        : round2((reading.cpuTicks + reading.childCpuTicks) / TICKS_PER_SECOND),
    rssMiB: reading === undefined ? null : toMiB(reading.rssKiB),
    peakRssMiB: reading === undefined ? null : toMiB(reading.peakKiB),
  };
}

const cell = (value: number | null, digits: number): string =>
  value === null ? 'gone' : value.toFixed(digits);

/** A fixed-width table, one line per component and a total line, for a log. */
export function usageTable(rows: readonly ComponentUsage[]): string {
  const header = ['component', 'boot s', 'up s', 'CPU s', 'RSS MiB', 'peak RSS MiB'];
  const total = (pick: (row: ComponentUsage) => number | null): number | null =>
    rows.some((row) => pick(row) === null)
      ? null
      : rows.reduce((sum, row) => sum + (pick(row) ?? 0), 0);
  const lines = [
    ...rows.map((row) => [
      row.name,
      row.bootSeconds.toFixed(2),
      row.upSeconds.toFixed(0),
      cell(row.cpuSeconds, 2),
      cell(row.rssMiB, 1),
      cell(row.peakRssMiB, 1),
    ]),
    [
      'total',
      rows.reduce((sum, row) => sum + row.bootSeconds, 0).toFixed(2),
      '',
      cell(
        total((row) => row.cpuSeconds),
        2,
      ),
      cell(
        total((row) => row.rssMiB),
        1,
      ),
      cell(
        total((row) => row.peakRssMiB),
        1,
      ),
    ],
  ];
  const widths = header.map((title, i) =>
    Math.max(title.length, ...lines.map((line) => (line[i] ?? '').length)),
  );
  const format = (line: readonly string[]): string =>
    line
      .map((text, i) => (i === 0 ? text.padEnd(widths[i] ?? 0) : text.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [format(header), ...lines.map(format)].join('\n');
}
