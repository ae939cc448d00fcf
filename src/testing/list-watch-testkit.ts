/** Test support for list-watch tests: a manual clock and a recording consumer. */
import type { ApiError } from '../core/api-error.ts';
import type { ListWatchConsumer, ListWatchPhase, ListWatchStatus } from '../kube/list-watch.ts';
import type { Timers } from '../time/timers.ts';

interface PendingTimer {
  readonly ms: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/** Timers that only fire when the test says so. */
export class ManualTimers implements Timers {
  nowMs = 0;
  readonly #pending: PendingTimer[] = [];
  readonly #waiters = new Set<() => void>();

  now(): number {
    return this.nowMs;
  }

  schedule(ms: number, fn: () => void): () => void {
    const timer: PendingTimer = { ms, fn, cancelled: false };
    this.#pending.push(timer);
    for (const wake of this.#waiters) wake();
    return () => {
      timer.cancelled = true;
    };
  }

  /** Resolves with the delay of the next live timer, once one is scheduled. */
  nextDelay(): Promise<number> {
    return new Promise<number>((resolve) => {
      const check = (): void => {
        const live = this.#pending.find((t) => !t.cancelled);
        if (live) {
          this.#waiters.delete(check);
          resolve(live.ms);
        }
      };
      this.#waiters.add(check);
      check();
    });
  }

  /** Advances the clock by the next live timer's delay and fires it. */
  fire(): void {
    const index = this.#pending.findIndex((t) => !t.cancelled);
    const timer = this.#pending[index];
    if (!timer) throw new Error('no timer pending');
    this.#pending.splice(index, 1);
    this.nowMs += timer.ms;
    timer.fn();
  }

  get liveCount(): number {
    return this.#pending.filter((t) => !t.cancelled).length;
  }
}

export type ConsumerCall<T> =
  | { readonly op: 'replace'; readonly items: readonly T[]; readonly resourceVersion: string }
  | { readonly op: 'upsert' | 'remove'; readonly item: T }
  | { readonly op: 'error'; readonly error: ApiError; readonly phase: ListWatchPhase }
  | { readonly op: 'status'; readonly status: ListWatchStatus }
  | { readonly op: 'expired' };

export class RecordingConsumer<T> implements ListWatchConsumer<T> {
  readonly calls: ConsumerCall<T>[] = [];

  replace(items: readonly T[], resourceVersion: string): void {
    this.calls.push({ op: 'replace', items, resourceVersion });
  }

  upsert(item: T): void {
    this.calls.push({ op: 'upsert', item });
  }

  remove(item: T): void {
    this.calls.push({ op: 'remove', item });
  }

  onError(error: ApiError, phase: ListWatchPhase): void {
    this.calls.push({ op: 'error', error, phase });
  }

  onStatus(status: ListWatchStatus): void {
    this.calls.push({ op: 'status', status });
  }

  onExpired(): void {
    this.calls.push({ op: 'expired' });
  }

  ops(): string[] {
    return this.calls.map((call) => {
      switch (call.op) {
        case 'replace':
          return `replace(${String(call.items.length)}@${call.resourceVersion})`;
        case 'upsert':
        case 'remove':
          return `${call.op}(${JSON.stringify(call.item)})`;
        case 'error':
          return `error(${call.phase} ${String(call.error.status ?? call.error.reason)})`;
        case 'status':
          return `status(${call.status})`;
        case 'expired':
          return 'expired';
      }
    });
  }
}
