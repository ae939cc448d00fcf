/**
 * Memory and CPU of the controller under test, read from /proc every 250 ms: RSS (VmRSS) average
 * and maximum over the samples, the kernel's peak (VmHWM), and utime+stime. Follows restarts
 * (S6, K4): each process's last reading counts.
 */
import { TICKS_PER_SECOND, readProcess, type ProcessReading } from '../cluster/proc-stat.ts';

export interface ResourceUsage {
  readonly samples: number;
  readonly rssAvgMiB: number | null;
  readonly rssMaxMiB: number | null;
  /** Highest VmHWM of any controller process of the run. */
  readonly peakMiB: number | null;
  readonly cpuSeconds: number;
}

const SAMPLE_INTERVAL_MS = 250;

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

/**
 * Several replicas as one controller: RSS (average, maximum, peak) of the largest replica, since
 * each replica is a pod with its own memory limit; CPU summed, since they share the nodes. One
 * replica's usage is returned unchanged.
 */
export function combineReplicaUsage(replicas: readonly ResourceUsage[]): ResourceUsage {
  const largest = (pick: (usage: ResourceUsage) => number | null): number | null => {
    const values = replicas.map(pick).filter((value): value is number => value !== null);
    return values.length === 0 ? null : Math.max(...values);
  };
  return {
    samples: replicas.reduce((total, usage) => total + usage.samples, 0),
    rssAvgMiB: largest((usage) => usage.rssAvgMiB),
    rssMaxMiB: largest((usage) => usage.rssMaxMiB),
    peakMiB: largest((usage) => usage.peakMiB),
    cpuSeconds:
      Math.round(replicas.reduce((total, usage) => total + usage.cpuSeconds, 0) * 100) / 100,
  };
}
