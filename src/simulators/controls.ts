/**
 * Controls several simulators give their tests over the same kind of state: forcing the next requests to
 * fail, and waiting for records (webhooks, callbacks) or for scheduled work to finish.
 */
import { type SimulatorWork, waitFor } from './shared.ts';

/** The next `count` requests, whatever they are, are answered `status`. */
export function failNextRequests<S extends number>(failures: S[], count: number, status: S): void {
  for (let i = 0; i < count; i += 1) failures.push(status);
}

/** Resolves with the records `matches` accepts once there are at least `count` of them. */
export function waitForRecords<T>(
  work: Pick<SimulatorWork, 'listeners'>,
  records: readonly T[],
  matches: (record: T) => boolean,
  count: number,
  timeoutMs: number,
  what: string,
): Promise<T[]> {
  return waitFor(
    work,
    () => {
      const found = records.filter(matches);
      return found.length >= count ? found : undefined;
    },
    timeoutMs,
    what,
  );
}

/** Resolves once no scheduled work is left; `what` names it in the time-out's message. */
export async function whenWorkDone(
  work: Pick<SimulatorWork, 'busy' | 'listeners'>,
  timeoutMs: number,
  what = 'scheduled work',
): Promise<void> {
  await waitFor(work, () => (work.busy === 0 ? true : undefined), timeoutMs, what);
}
