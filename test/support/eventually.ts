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

/** How long `waitFor` waits by default. */
export const WAIT_FOR_MS_DEFAULT = 20_000;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `condition` holds; throws, naming `what`, once `waitMs` is over. */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  waitMs = WAIT_FOR_MS_DEFAULT,
): Promise<void> {
  const until = Date.now() + waitMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`timed out after ${waitMs} ms waiting for ${what}`);
    await sleep(EVENTUALLY_POLL_MS);
  }
}
