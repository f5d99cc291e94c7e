/**
 * A loan's progress inside one transaction: the repayments applied to it in memory (what each paid of the
 * penalty and the instalments, its record and its events), then saved together. Manual repayments and the
 * day work's collections both go through it, so both allocate and close a loan the same way.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvents } from '../../../app/events.ts';
import type { EventRecord } from '../../../domain/events.ts';
import type { Queryable } from '../../../store/store.ts';
import { type Allocation, arrearsOn, isPaidOff } from '../domain/balances.ts';
import type { Instalment, Loan, LoanRepayment, LoanRepaymentSource } from '../domain/loans.ts';
import { insertRepayment, saveInstalmentsPaid } from '../repository/instalments.ts';
import { saveLoan } from '../repository/loans.ts';
import { loanEvent, repaymentData } from './loans.ts';

/** A loan, its instalments and what changed of them, the repayments and events not yet saved. */
export interface LoanProgress {
  loan: Loan;
  instalments: Instalment[];
  changed: Set<number>;
  repayments: LoanRepayment[];
  events: EventRecord[];
}

/**
 * Applies one allocated repayment to the loan in memory (the caller posts its entry): what it paid of the
 * penalty and the instalments, its record and event; the loan is paid off when nothing is left.
 */
export function applyRepayment(
  deps: Deps,
  progress: LoanProgress,
  allocation: Allocation,
  entryId: string,
  source: LoanRepaymentSource,
  day: string,
  createdBy: string | null,
  now: Date,
): LoanRepayment {
  const total =
    allocation.penaltyMinor + allocation.feeMinor + allocation.interestMinor + allocation.principalMinor;
  const before = new Map(progress.instalments.map((i) => [i.number, i]));
  for (const i of allocation.instalments) {
    const old = before.get(i.number);
    if (
      old &&
      (old.feePaidMinor !== i.feePaidMinor ||
        old.interestPaidMinor !== i.interestPaidMinor ||
        old.principalPaidMinor !== i.principalPaidMinor)
    ) {
      progress.changed.add(i.number);
    }
  }
  progress.instalments = allocation.instalments;
  progress.loan = {
    ...progress.loan,
    penaltyPaidMinor: progress.loan.penaltyPaidMinor + allocation.penaltyMinor,
    updatedAt: now,
  };
  const repayment: LoanRepayment = {
    id: deps.newId('loanRepayment'),
    organizationId: progress.loan.organizationId,
    loanId: progress.loan.id,
    source,
    day,
    amountMinor: total,
    penaltyMinor: allocation.penaltyMinor,
    feeMinor: allocation.feeMinor,
    interestMinor: allocation.interestMinor,
    principalMinor: allocation.principalMinor,
    journalEntryId: entryId,
    createdBy,
    createdAt: now,
  };
  progress.repayments.push(repayment);
  const arrears = arrearsOn(progress.instalments, day);
  progress.loan = { ...progress.loan, daysPastDue: arrears.daysPastDue, arrearsBucket: arrears.bucket };
  if (isPaidOff(progress.loan, progress.instalments)) {
    progress.loan = { ...progress.loan, status: 'paid_off', closedAt: now };
  }
  const view = { loan: progress.loan, instalments: progress.instalments, today: day };
  progress.events.push(
    loanEvent(deps, 'loan.repayment_received', view, now, {
      repayment: repaymentData(repayment, progress.loan.currency),
    }),
  );
  if (progress.loan.status === 'paid_off') progress.events.push(loanEvent(deps, 'loan.paid_off', view, now));
  return repayment;
}

/** Saves what the repayments applied changed: the instalments touched, the repayments, the loan, the events. */
export async function saveProgress(tx: Queryable, deps: Deps, progress: LoanProgress): Promise<void> {
  await saveInstalmentsPaid(
    tx,
    progress.loan.id,
    progress.instalments.filter((i) => progress.changed.has(i.number)),
  );
  for (const r of progress.repayments) await insertRepayment(tx, r);
  await saveLoan(tx, progress.loan);
  await recordEvents(tx, deps, progress.events);
}
