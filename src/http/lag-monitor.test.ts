import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EventLoopLagMonitor } from './lag-monitor.ts';

/** A clock the test moves by hand, and an interval it fires by hand. */
function manualLoop(): {
  monitor: EventLoopLagMonitor;
  advance: (ms: number) => void;
  tick: () => void;
  cancelled: () => boolean;
} {
  let now = 1_000;
  let callback: (() => void) | undefined;
  let cancelled = false;
  const monitor = new EventLoopLagMonitor({
    nowMs: () => now,
    repeat: (cb) => {
      callback = cb;
      return () => {
        cancelled = true;
      };
    },
    intervalMs: 500,
  });
  return {
    monitor,
    advance: (ms) => {
      now += ms;
    },
    tick: () => callback?.(),
    cancelled: () => cancelled,
  };
}

describe('EventLoopLagMonitor', () => {
  it('reports no lag when ticks arrive on time', () => {
    const loop = manualLoop();
    loop.monitor.start();
    loop.advance(500);
    loop.tick();
    loop.advance(200);
    expect(loop.monitor.lagMs()).toBe(0);
  });

  it('reports the lateness of the last tick', () => {
    const loop = manualLoop();
    loop.monitor.start();
    loop.advance(6_500);
    loop.tick();
    expect(loop.monitor.lagMs()).toBe(6_000);
  });

  it('reports a tick that is overdue right now, before it runs', () => {
    const loop = manualLoop();
    loop.monitor.start();
    loop.advance(5_700);
    expect(loop.monitor.lagMs()).toBe(5_200);
  });

  it('forgets the lag once ticks are on time again', () => {
    const loop = manualLoop();
    loop.monitor.start();
    loop.advance(6_500);
    loop.tick();
    loop.advance(500);
    loop.tick();
    expect(loop.monitor.lagMs()).toBe(0);
  });

  it('cancels its timer on stop and then reports 0', () => {
    const loop = manualLoop();
    loop.monitor.start();
    loop.advance(9_000);
    loop.monitor.stop();
    expect(loop.cancelled()).toBe(true);
    expect(loop.monitor.lagMs()).toBe(0);
  });
});

describe('EventLoopLagMonitor on timers', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('samples on the injected interval', () => {
    const monitor = new EventLoopLagMonitor({
      nowMs: () => Date.now(),
      repeat: (cb, ms) => {
        const timer = setInterval(cb, ms);
        return () => {
          clearInterval(timer);
        };
      },
      intervalMs: 100,
    });
    monitor.start();
    vi.advanceTimersByTime(1_000);
    expect(monitor.lagMs()).toBe(0);
    monitor.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});
