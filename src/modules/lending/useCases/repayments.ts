/**
 * Manual repayments from the borrower's wallet, allocated penalty, fee, interest, principal and posted to
 * each part's account through the posting module, against the loan as it stands today.
 */

import type { Deps } from '../../../app/deps.ts';
import { AppError } from '../../../domain/errors.ts';
import { checkSingleAmount, formatAmount, parseAmount } from '../../../domain/money.ts';
import type { Queryable } from '../../../store/store.ts';
import { directEntry, PostingSession, refusalError } from '../../ledger/index.ts';
import { organizationNow, utcDay } from '../../testClock/index.ts';
import { allocateRepayment, outstandingTotal } from '../domain/balances.ts';
import { type LoanRepayment, loanStateError } from '../domain/loans.ts';
import { listInstalments } from '../repository/instalments.ts';
import { catchUpLockedLoan } from './dayWork.ts';
import { loanAccounts, repaymentPostings } from './ledger.ts';
import { type LoanView, lockLoan } from './loans.ts';
import { applyRepayment, type LoanProgress, saveProgress } from './progress.ts';

/**
 * A repayment from the borrower's wallet, allocated penalty, fees, interest, principal (instalment by
 * instalment, oldest first; beyond what is due it pays the next instalments early). More than the loan's
 * outstanding total is refused; so is more than the wallet has.
 */
export async function repayLoan(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  input: { amount: string | number },
  createdBy: string | null,
  amountText?: string,
): Promise<{ repayment: LoanRepayment; view: LoanView }> {
  const today = utcDay(await organizationNow(tx, deps, organizationId));
  // Days the day work has not done yet are done first (collection, arrears, penalty), so the repayment is
  // allocated against the loan as it stands today.
  const loan = await catchUpLockedLoan(tx, deps, await lockLoan(tx, organizationId, id), today);
  if (loan.status !== 'active') throw loanStateError(loan.id, loan.status, 'repaid');
  const amountMinor = checkSingleAmount(
    parseAmount(input.amount, loan.currency, 'amount', amountText),
    loan.currency,
  );
  const instalments = await listInstalments(tx, loan.id);
  const penaltyOutstanding = loan.penaltyAccruedMinor - loan.penaltyPaidMinor;
  const outstanding = outstandingTotal(penaltyOutstanding, instalments);
  if (amountMinor > outstanding) {
    throw new AppError({
      status: 422,
      code: 'repayment_exceeds_outstanding',
      title: 'More than is owed',
      detail: `Loan ${loan.id} has ${formatAmount(outstanding, loan.currency)} ${loan.currency} outstanding; a repayment pays at most that.`,
      param: 'amount',
    });
  }
  const now = deps.now();
  const accounts = await loanAccounts(tx, deps, loan);
  const session = new PostingSession(tx);
  await session.lock([loan.walletId, accounts.receivable, accounts.interest, accounts.fee, accounts.penalty]);
  const allocation = allocateRepayment(penaltyOutstanding, instalments, amountMinor);
  const posting = directEntry(deps, organizationId, repaymentPostings(loan, accounts, allocation), now);
  const refusal = session.tryPost(posting);
  if (refusal) throw refusalError(refusal, 'repayment', 'amount');
  await session.flush(now);
  const progress: LoanProgress = { loan, instalments, changed: new Set(), repayments: [], events: [] };
  const repayment = applyRepayment(deps, progress, allocation, posting.id, 'manual', today, createdBy, now);
  await saveProgress(tx, deps, progress);
  return { repayment, view: { loan: progress.loan, instalments: progress.instalments, today } };
}
