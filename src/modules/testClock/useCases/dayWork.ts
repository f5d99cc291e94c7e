/**
 * Day work: what an organization's products do once per calendar day of its clock (interest accrual,
 * capitalisation, due-date collection, arrears). Each product's work keeps its own record of the days it has
 * done and does each day at most once, so running a day twice changes nothing; the periodic workers and a
 * test clock's advance both bring an organization up to its today through here. Which products have day work
 * is `deps.dayWork`, filled by the composition root (src/app/composition.ts).
 */

import type { DayWork, Deps } from '../../../app/deps.ts';
import { utcDay } from '../domain.ts';
import { organizationNow } from './testClock.ts';

/** Runs each product's day work for the organization, in the order given. */
export async function catchUpOrganizationDays(
  deps: Deps,
  organizationId: string,
  throughDay: string,
  dayWork: readonly DayWork[],
): Promise<void> {
  for (const work of dayWork) await work.catchUp(deps, organizationId, throughDay);
}

/** Runs the organization's day work up to its today (a test clock's, once advanced), each day once. */
export async function catchUpAfterAdvance(
  deps: Deps,
  organizationId: string,
  dayWork: readonly DayWork[],
): Promise<void> {
  const today = utcDay(await organizationNow(deps.store, deps, organizationId));
  await catchUpOrganizationDays(deps, organizationId, today, dayWork);
}
