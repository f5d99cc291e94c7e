/**
 * Lending's day work: on each of a loan's days, once and in order, what is due is collected from the
 * borrower's wallet (partially when it is short), then what is still overdue counts a day past due and
 * accrues that day's penalty. Each loan is brought up to date in its own transaction, under its lock.
 */

import type { DayWork, Deps } from '../../../app/deps.ts';
import { formatAmount } from '../../../domain/money.ts';
import type { Queryable } from '../../../store/store.ts';
import { directEntry, PostingSession, walletBalances } from '../../ledger/index.ts';
import { daysAfter } from '../../testClock/index.ts';
import { allocateRepayment, arrearsOn, dueOn, penaltyOwed } from '../domain/balances.ts';
import { ARREARS_BUCKET_NAMES, type Loan } from '../domain/loans.ts';
import { listInstalments } from '../repository/instalments.ts';
import { loansWithDaysToDo, organizationsWithActiveLoans } from '../repository/loans.ts';
import { type LoanAccounts, loanAccounts, repaymentPostings } from './ledger.ts';
import { loanEvent, lockLoan } from './loans.ts';
import { applyRepayment, type LoanProgress, saveProgress } from './progress.ts';

/** Loans one transaction of the day work brings up to date at most before the next page is read. */
export const LOAN_DAY_WORK_LOANS_PER_PAGE = 100;

/**
 * Brings one loan's days up to `throughDay`, each day once and in order, in the caller's transaction: on
 * each day, what is due (the penalty, and every instalment due that day or before) is taken from the wallet,
 * as much as it has; then what is still overdue counts a day past due and accrues that day's penalty; a move
 * to a worse arrears bucket emits `loan.overdue`.
 */
async function catchUpLoan(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  throughDay: string,
): Promise<void> {
  await catchUpLockedLoan(tx, deps, await lockLoan(tx, organizationId, id), throughDay);
}

/**
 * A day's collection: what is due on `day` (the penalty, and every instalment due that day or before) is
 * taken from the wallet, as much as it has, and applied to the loan's progress.
 */
function collectDue(
  deps: Deps,
  session: PostingSession,
  accounts: LoanAccounts,
  progress: LoanProgress,
  day: string,
  now: Date,
): void {
  const current = progress.loan;
  const penaltyOutstanding = current.penaltyAccruedMinor - current.penaltyPaidMinor;
  const due = dueOn(penaltyOutstanding, progress.instalments, day);
  if (due <= 0n) return;
  const sums = session.sumsOf(current.walletId);
  const available = sums ? walletBalances(sums).availableMinor : 0n;
  const take = available < due ? available : due;
  if (take <= 0n) return;
  const allocation = allocateRepayment(penaltyOutstanding, progress.instalments, take);
  const posting = directEntry(
    deps,
    current.organizationId,
    repaymentPostings(current, accounts, allocation),
    now,
  );
  // A wallet that may not pay (frozen, closed) is not collected from; the loan falls into arrears.
  const gate = session.release('loan_instalment', { source: current.walletId });
  if (gate.outcome === 'release' && !session.tryPost(posting)) {
    applyRepayment(deps, progress, allocation, posting.id, 'automatic', day, null, now);
  }
}

/**
 * A day's arrears: what is still overdue after the day's collection counts a day past due and accrues
 * that day's penalty; a move to a worse arrears bucket emits `loan.overdue`.
 */
function countArrears(deps: Deps, progress: LoanProgress, day: string, now: Date): void {
  const arrears = arrearsOn(progress.instalments, day);
  const basis = progress.loan.penaltyBasisMinorDays + arrears.penaltyBaseMinor;
  const previousBucket = progress.loan.arrearsBucket;
  progress.loan = {
    ...progress.loan,
    penaltyBasisMinorDays: basis,
    penaltyAccruedMinor: penaltyOwed(basis, progress.loan.penaltyRateBps),
    daysPastDue: arrears.daysPastDue,
    arrearsBucket: arrears.bucket,
    processedThrough: day,
    updatedAt: now,
  };
  if (ARREARS_BUCKET_NAMES.indexOf(arrears.bucket) > ARREARS_BUCKET_NAMES.indexOf(previousBucket)) {
    progress.events.push(
      loanEvent(deps, 'loan.overdue', { ...progress, today: day }, now, {
        day,
        overdue: formatAmount(arrears.overdueMinor, progress.loan.currency),
        penalty_accrued: formatAmount(progress.loan.penaltyAccruedMinor, progress.loan.currency),
      }),
    );
  }
}

/** The same, for a loan the caller has locked; returns the loan as it stands after. */
export async function catchUpLockedLoan(
  tx: Queryable,
  deps: Deps,
  loan: Loan,
  throughDay: string,
): Promise<Loan> {
  if (loan.status !== 'active' || loan.processedThrough === null || loan.processedThrough >= throughDay) {
    return loan;
  }
  const now = deps.now();
  const accounts = await loanAccounts(tx, deps, loan);
  const session = new PostingSession(tx);
  await session.lock([loan.walletId, accounts.receivable, accounts.interest, accounts.fee, accounts.penalty]);
  const progress: LoanProgress = {
    loan,
    instalments: await listInstalments(tx, loan.id),
    changed: new Set(),
    repayments: [],
    events: [],
  };
  for (const day of daysAfter(loan.processedThrough, throughDay)) {
    collectDue(deps, session, accounts, progress, day, now);
    if (progress.loan.status !== 'active') {
      progress.loan = { ...progress.loan, processedThrough: day };
      break;
    }
    countArrears(deps, progress, day, now);
  }
  await session.flush(now);
  await saveProgress(tx, deps, progress);
  return progress.loan;
}

/** Every active loan of the organization brought up to `throughDay`, each loan in its own transaction. */
export async function catchUpLoans(deps: Deps, organizationId: string, throughDay: string): Promise<void> {
  for (;;) {
    const ids = await loansWithDaysToDo(deps.store, organizationId, throughDay, LOAN_DAY_WORK_LOANS_PER_PAGE);
    for (const id of ids) {
      await deps.store.transaction((tx) => catchUpLoan(tx, deps, organizationId, id, throughDay));
    }
    if (ids.length < LOAN_DAY_WORK_LOANS_PER_PAGE) return;
  }
}

/** Organizations with active loans, for the day worker (src/modules/testClock/useCases/dayWork.ts). */
export function loanOrganizations(deps: Deps, after: string | undefined, limit: number): Promise<string[]> {
  return organizationsWithActiveLoans(deps.store, after, limit);
}

/** Lending's day work: due-date collection from the borrower's wallet, days past due, penalty. */
export const LOAN_DAY_WORK: DayWork = {
  name: 'loan_collection',
  organizations: loanOrganizations,
  catchUp: catchUpLoans,
};
