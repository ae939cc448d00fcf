/**
 * The parts of a kreload process that pipeline tests wire around createPipeline: a logger that
 * writes nothing, and the watch server's caches and fan-out, fed by the test as its list-watches
 * would feed them.
 */
import { Writable } from 'node:stream';
import { WriteLedger } from '../controller/write-ledger.ts';
import type { SourceType } from '../core/types.ts';
import { DEFAULT_ANNOTATION_KEYS } from '../core/types.ts';
import { createLogger, type Logger } from '../log/logger.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';
import { WatchSubscribers, createWatchCaches } from '../watch/watch-caches.ts';

/** A logger at level error into a stream that drops everything. */
export function silentLogger(): Logger {
  return createLogger({
    level: 'error',
    format: 'json',
    stream: new Writable({
      write: (_chunk, _encoding, done) => {
        done();
      },
    }),
  });
}

/** The watch caches of `sourceTypes` (all namespaces), their subscribers and the write ledger. */
export function inMemoryWatch(options: {
  readonly sourceTypes: readonly SourceType[];
  readonly selectorEnabled?: boolean;
  /** `--enable-reload-policies`: keep a policy store (the test fills it). */
  readonly reloadPolicies?: boolean;
}) {
  const subscribers = new WatchSubscribers();
  const writes = new WriteLedger();
  const watched = createWatchCaches(
    {
      sourceTypes: options.sourceTypes,
      keys: DEFAULT_ANNOTATION_KEYS,
      scope: { mode: 'global', ignored: [], selectorEnabled: options.selectorEnabled === true },
      clock: { now: () => Date.now() },
      timers: SYSTEM_TIMERS,
      writeBasis: (key) => writes.basis(key),
      isTypeHealthy: () => true,
      reloadPolicies: options.reloadPolicies === true,
    },
    subscribers,
  );
  return {
    writes,
    watched,
    /** createPipeline's `watch`. */
    watch: {
      caches: watched,
      subscribe: (handler: Parameters<WatchSubscribers['add']>[0]) => {
        subscribers.add(handler);
      },
    },
  };
}
