/** Disbursement: an approved loan paid once into the borrower's wallet, its schedule fixed from that day. */

import type { Deps } from '../../../app/deps.ts';
import { recordEvents } from '../../../app/events.ts';
import { requireProduct } from '../../../app/products.ts';
import type { Queryable } from '../../../store/store.ts';
import { directEntry, PostingSession, refusalError } from '../../ledger/index.ts';
import { organizationNow, utcDay } from '../../testClock/index.ts';
import { type Instalment, type Loan, loanStateError } from '../domain/loans.ts';
import { computeSchedule } from '../domain/schedule.ts';
import { insertInstalments } from '../repository/instalments.ts';
import { saveLoan } from '../repository/loans.ts';
import { posted, systemAccount } from './ledger.ts';
import { type LoanView, loanEvent, lockLoan } from './loans.ts';

/**
 * Disburses an approved loan once: the receivable pays the principal into the borrower's wallet, and the
 * schedule is fixed from the organization's today. A second disbursement finds the loan active: a 409.
 */
export async function disburseLoan(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
): Promise<LoanView> {
  await requireProduct(deps, organizationId, 'digital_banking', undefined, tx);
  const loan = await lockLoan(tx, organizationId, id);
  if (loan.status !== 'approved') throw loanStateError(loan.id, loan.status, 'disbursed');
  const now = deps.now();
  const today = utcDay(await organizationNow(tx, deps, organizationId));
  const receivable = await systemAccount(tx, deps, organizationId, 'loan_receivable', loan.currency);
  const session = new PostingSession(tx);
  await session.lock([receivable, loan.walletId]);
  const disbursement = directEntry(
    deps,
    organizationId,
    [
      posted(receivable, 'debit', loan.principalMinor, loan.currency),
      posted(loan.walletId, 'credit', loan.principalMinor, loan.currency),
    ],
    now,
  );
  const gate = session.release('loan_disbursement', { destination: loan.walletId });
  if (gate.outcome === 'refuse') throw refusalError(gate.refusal, 'disbursement', 'wallet');
  const refusal = session.tryPost(disbursement);
  if (refusal) throw refusalError(refusal, 'disbursement', 'wallet');
  await session.flush(now);
  const instalments: Instalment[] = computeSchedule(loan, loan.principalMinor, today).map((i) => ({
    ...i,
    principalPaidMinor: 0n,
    interestPaidMinor: 0n,
    feePaidMinor: 0n,
  }));
  await insertInstalments(tx, loan.id, instalments);
  const active: Loan = {
    ...loan,
    status: 'active',
    disbursementEntryId: disbursement.id,
    disbursedAt: now,
    disbursedOn: today,
    processedThrough: today,
    updatedAt: now,
  };
  await saveLoan(tx, active);
  const view: LoanView = { loan: active, instalments, today };
  await recordEvents(tx, deps, [
    loanEvent(deps, 'loan.disbursed', view, now, {
      disbursed_on: today,
      journal_entry: disbursement.id,
      instalments: instalments.length,
      first_due_date: instalments[0]?.dueDate ?? null,
    }),
  ]);
  return view;
}
