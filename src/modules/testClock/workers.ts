/**
 * The day worker: brings every organization's products up to its today (its test clock's in the sandbox),
 * running each product's day work (src/modules/testClock/useCases/dayWork.ts) for the days not done yet. Each day of each product is
 * done once (the product records the days it has done), so passes may repeat and any number of processes may
 * run them at once. An organization whose work fails is logged and tried again on the next pass; the others
 * go on.
 */
import type { DayWork, Deps } from '../../app/deps.ts';
import { utcDay } from './domain.ts';
import { organizationsNow } from './useCases/testClock.ts';

/**
 * How often the worker looks for days to do. A day is done once it has begun on the organization's clock,
 * so a pass a minute after midnight does the new day's accrual for the day that just ended.
 */
export const DAY_WORKER_INTERVAL_MS = 60_000;
/** Organizations one page of the worker reads at a time, per product. */
export const DAY_WORKER_ORGANIZATIONS_PER_PAGE = 100;

export interface DayWorkerFailure {
  work: string;
  organizationId: string;
  error: unknown;
}

/** One pass over every product's organizations; returns how many organizations' work ran, and the failures. */
export async function runDayWorkerOnce(
  deps: Deps,
  dayWork: readonly DayWork[] = deps.dayWork,
): Promise<{ ran: number; failures: DayWorkerFailure[] }> {
  let ran = 0;
  const failures: DayWorkerFailure[] = [];
  for (const work of dayWork) {
    let after: string | undefined;
    for (;;) {
      const page = await work.organizations(deps, after, DAY_WORKER_ORGANIZATIONS_PER_PAGE);
      if (page.length === 0) break;
      const nows = await organizationsNow(deps.store, deps, page);
      for (const organizationId of page) {
        const now = nows.get(organizationId) ?? deps.now();
        try {
          await work.catchUp(deps, organizationId, utcDay(now));
          ran++;
        } catch (error) {
          failures.push({ work: work.name, organizationId, error });
        }
      }
      if (page.length < DAY_WORKER_ORGANIZATIONS_PER_PAGE) break;
      after = page.at(-1);
    }
  }
  return { ran, failures };
}
