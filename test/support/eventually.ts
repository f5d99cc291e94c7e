/** Polling for what another process or server brings about (a callback applied, a delivery made). */

/** How long `eventually` waits at most, and how often it looks. */
export const EVENTUALLY_WAIT_MS = 5_000;
export const EVENTUALLY_POLL_MS = 20;

/** Reads until `done` holds or the wait is over; returns the last value read (the caller's assertion decides). */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  waitMs = EVENTUALLY_WAIT_MS,
): Promise<T> {
  const until = Date.now() + waitMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, EVENTUALLY_POLL_MS));
  }
}
