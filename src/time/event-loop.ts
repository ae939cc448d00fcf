/**
 * Lets the event loop run what is pending (probe requests, watch events) before a long stretch of
 * in-memory work goes on. Reconciles that need no API call, explaining many workloads and planning
 * a policy's targets would otherwise chain as microtasks for seconds with no I/O in between.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    setImmediate(resolve);
  });
}
