/**
 * Day work: what an organization's products do once per calendar day of its clock (interest accrual,
 * capitalisation, due-date collection, arrears). Each product's work keeps its own record of the days it has
 * done and does each day at most once, so running a day twice changes nothing; the periodic workers and a
 * test clock's advance both bring an organization up to its today through here.
 */
import { utcDay } from '../domain/testClock.ts';
import type { Deps } from './deps.ts';
import { catchUpLoans, loanOrganizations } from './loans.ts';
import { SAVINGS_DAY_WORK } from './savings.ts';
import { organizationNow } from './testClock.ts';

export interface DayWork {
  /** Names the work in logs and errors, e.g. `savings_accrual`. */
  name: string;
  /**
   * Organizations that may have days of this work to do (those with accounts of the product), at most
   * `limit`, after `after` in id order: the day worker pages through them.
   */
  organizations(deps: Deps, after: string | undefined, limit: number): Promise<string[]>;
  /**
   * Does every day of the organization's work that is due up to and including `throughDay` (the
   * organization's today, UTC `YYYY-MM-DD`) and not done yet, in day order.
   */
  catchUp(deps: Deps, organizationId: string, throughDay: string): Promise<void>;
}

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

/**
 * Every product's day work, in the order a day runs: what the periodic day worker and a test clock's advance
 * run for each organization. Each product adds its entry here.
 */
export const ORGANIZATION_DAY_WORK: DayWork[] = [
  SAVINGS_DAY_WORK,
  // Lending (src/app/loans.ts): due-date collection from the borrower's wallet, days past due, penalty.
  { name: 'loan_collection', organizations: loanOrganizations, catchUp: catchUpLoans },
];
