/**
 * Memory and CPU of the controller under test, read from /proc every 250 ms: RSS (VmRSS) average
 * and maximum over the samples, the kernel's peak (VmHWM), and utime+stime. Follows restarts
 * (S6, K4): each process's last reading counts.
 */
import { readFile } from 'node:fs/promises';

export interface ProcessReading {
  readonly rssKiB: number;
  readonly peakKiB: number;
  readonly cpuTicks: number;
}

export interface ResourceUsage {
  readonly samples: number;
  readonly rssAvgMiB: number | null;
  readonly rssMaxMiB: number | null;
  /** Highest VmHWM of any controller process of the run. */
  readonly peakMiB: number | null;
  readonly cpuSeconds: number;
}

/** USER_HZ: 100 on every Linux ABI Node runs on (sysconf(_SC_CLK_TCK) is not exposed to JS). */
const TICKS_PER_SECOND = 100;
const SAMPLE_INTERVAL_MS = 250;

/** `VmRSS:    12345 kB` → 12345; undefined when the field is absent (a zombie has none). */
export function statusField(status: string, field: string): number | undefined {
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** utime + stime (fields 14 and 15) of /proc/<pid>/stat; the command may contain spaces. */
export function cpuTicksOf(stat: string): number | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), so field n is fields[n - 3].
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? utime + stime : undefined;
}

async function readProcess(pid: number): Promise<ProcessReading | undefined> {
  try {
    const [status, stat] = await Promise.all([
      readFile(`/proc/${pid}/status`, 'utf8'),
      readFile(`/proc/${pid}/stat`, 'utf8'),
    ]);
    const rssKiB = statusField(status, 'VmRSS');
    const peakKiB = statusField(status, 'VmHWM');
    const cpuTicks = cpuTicksOf(stat);
    if (rssKiB === undefined || peakKiB === undefined || cpuTicks === undefined) return undefined;
    return { rssKiB, peakKiB, cpuTicks };
  } catch {
    return undefined;
  }
}

const toMiB = (kib: number): number => Math.round((kib / 1024) * 10) / 10;

export class ProcessSampler {
  readonly #lastByPid = new Map<number, ProcessReading>();
  readonly #rssSamples: number[] = [];
  #pid: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #sampling: Promise<void> = Promise.resolve();

  /** Starts sampling `pid` (again after a restart); earlier processes keep their last reading. */
  follow(pid: number): void {
    this.#pid = pid;
    this.#timer ??= setInterval(() => {
      this.#sampling = this.#sampling.then(() => this.sample());
    }, SAMPLE_INTERVAL_MS);
    this.#sampling = this.#sampling.then(() => this.sample());
  }

  async sample(): Promise<void> {
    const pid = this.#pid;
    if (pid === undefined) return;
    const reading = await readProcess(pid);
    if (reading === undefined) return;
    this.#lastByPid.set(pid, reading);
    this.#rssSamples.push(reading.rssKiB);
  }

  /** CPU seconds used so far by every followed process. */
  cpuSeconds(): number {
    let ticks = 0;
    for (const reading of this.#lastByPid.values()) ticks += reading.cpuTicks;
    return ticks / TICKS_PER_SECOND;
  }

  currentRssMiB(): number | null {
    const last = this.#rssSamples.at(-1);
    return last === undefined ? null : toMiB(last);
  }

  /** Waits for a sample in flight and stops the timer: call sample() before the process stops. */
  async stop(): Promise<ResourceUsage> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#sampling;
    return this.usage();
  }

  usage(): ResourceUsage {
    const samples = this.#rssSamples;
    const sum = samples.reduce((total, value) => total + value, 0);
    const peaks = [...this.#lastByPid.values()].map((reading) => reading.peakKiB);
    return {
      samples: samples.length,
      rssAvgMiB: samples.length === 0 ? null : toMiB(sum / samples.length),
      rssMaxMiB: samples.length === 0 ? null : toMiB(Math.max(...samples)),
      peakMiB: peaks.length === 0 ? null : toMiB(Math.max(...peaks)),
      cpuSeconds: Math.round(this.cpuSeconds() * 100) / 100,
    };
  }
}
