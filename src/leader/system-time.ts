import { setLongTimeout } from '../time/long-timeout.ts';
import type { Clock, Timers } from './ports.ts';

export const systemClock: Clock = {
  monotonicMs: () => performance.now(),
  now: () => new Date(),
};

export const systemTimers: Timers = {
  schedule: (callback, delayMs) => setLongTimeout(callback, delayMs),
};
