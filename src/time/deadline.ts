/** Waiting for work with an upper bound, for stop paths that must end whatever the network does. */
import { setLongTimeout } from './long-timeout.ts';

export type DeadlineOutcome<T> =
  { readonly finished: true; readonly value: T } | { readonly finished: false };

/**
 * Settles with the work's value, or with `finished: false` once `deadlineMs` has passed; the work itself
 * goes on (the caller aborts it if it can). A rejection of the work is passed on.
 */
export async function withinDeadline<T>(
  work: Promise<T>,
  deadlineMs: number,
): Promise<DeadlineOutcome<T>> {
  let cancel: () => void = () => undefined;
  const expired = new Promise<DeadlineOutcome<T>>((resolve) => {
    cancel = setLongTimeout(() => {
      resolve({ finished: false });
    }, deadlineMs);
  });
  try {
    return await Promise.race([
      work.then((value): DeadlineOutcome<T> => ({ finished: true, value })),
      expired,
    ]);
  } finally {
    cancel();
  }
}
