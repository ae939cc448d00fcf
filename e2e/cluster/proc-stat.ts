/**
 * CPU time and memory of a running process, from /proc: what the bench samples for a controller
 * and what the e2e teardown reports for each control-plane component.
 */
import { readFile } from 'node:fs/promises';

/** USER_HZ: 100 on every Linux ABI Node runs on (sysconf(_SC_CLK_TCK) is not exposed to JS). */
export const TICKS_PER_SECOND = 100;

/** `VmRSS:    12345 kB` → 12345; undefined when the field is absent (a zombie has none). */
export function statusField(status: string, field: string): number | undefined {
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** Fields 14–17 of /proc/<pid>/stat; the command (field 2) may contain spaces and parentheses. */
function statTicks(stat: string): readonly number[] | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), so field n is fields[n - 3].
  const ticks = fields.slice(11, 15).map(Number);
  return ticks.length === 4 && ticks.every(Number.isFinite) ? ticks : undefined;
}

/** utime + stime (fields 14 and 15) of /proc/<pid>/stat. */
export function cpuTicksOf(stat: string): number | undefined {
  const ticks = statTicks(stat);
  return ticks === undefined ? undefined : (ticks[0] ?? 0) + (ticks[1] ?? 0);
}

/** cutime + cstime (fields 16 and 17): children the process waited for. */
export function childCpuTicksOf(stat: string): number | undefined {
  const ticks = statTicks(stat);
  return ticks === undefined ? undefined : (ticks[2] ?? 0) + (ticks[3] ?? 0);
}

export interface ProcessReading {
  readonly rssKiB: number;
  /** VmHWM: the kernel's peak resident set since the process started. */
  readonly peakKiB: number;
  readonly cpuTicks: number;
  readonly childCpuTicks: number;
}

/** Undefined when the process is gone (or a zombie) or /proc is not there. */
export async function readProcess(pid: number): Promise<ProcessReading | undefined> {
  try {
    const [status, stat] = await Promise.all([
      readFile(`/proc/${pid}/status`, 'utf8'),
      readFile(`/proc/${pid}/stat`, 'utf8'),
    ]);
    const rssKiB = statusField(status, 'VmRSS');
    const peakKiB = statusField(status, 'VmHWM');
    const cpuTicks = cpuTicksOf(stat);
    const childCpuTicks = childCpuTicksOf(stat);
    if (
      rssKiB === undefined ||
      peakKiB === undefined ||
      cpuTicks === undefined ||
      childCpuTicks === undefined
    ) {
      return undefined;
    }
    return { rssKiB, peakKiB, cpuTicks, childCpuTicks };
  } catch {
    return undefined;
  }
}
