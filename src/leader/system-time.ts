import type { Clock, Timers } from './ports.ts';

export const systemClock: Clock = {
  monotonicMs: () => performance.now(),
  now: () => new Date(),
};

export const systemTimers: Timers = {
  schedule: (callback, delayMs) => {
    const timer = setTimeout(callback, delayMs);
    return () => {
      clearTimeout(timer);
    };
  },
};
