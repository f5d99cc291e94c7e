/**
 * Write-off: an operator ends an active loan as a loss. The principal still owed moves from the receivable
 * to loan losses through the ledger; what else was owed is recorded as forgone in the evidence.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvents } from '../../../app/events.ts';
import { appendEvidence } from '../../../app/evidence.ts';
import type { EvidenceActor, EvidenceDraft } from '../../../domain/evidence.ts';
import { formatAmount } from '../../../domain/money.ts';
import { requiredText } from '../../../domain/requiredText.ts';
import type { Queryable } from '../../../store/store.ts';
import { directEntry, PostingSession, refusalError } from '../../ledger/index.ts';
import { organizationNow, utcDay } from '../../testClock/index.ts';
import { principalOutstanding } from '../domain/balances.ts';
import {
  type Instalment,
  LOAN_WRITE_OFF_REASON_CHARS_MAX,
  type Loan,
  loanStateError,
} from '../domain/loans.ts';
import { listInstalments } from '../repository/instalments.ts';
import { saveLoan } from '../repository/loans.ts';
import { catchUpLockedLoan } from './dayWork.ts';
import { posted, systemAccount } from './ledger.ts';
import { type LoanView, loanEvent, loanEvidence, lockLoan } from './loans.ts';

/** A write-off's reason, trimmed: 1 to LOAN_WRITE_OFF_REASON_CHARS_MAX characters. */
function checkWriteOffReason(raw: string): string {
  return requiredText(raw, 'reason', LOAN_WRITE_OFF_REASON_CHARS_MAX, 'invalid_length');
}

/**
 * Moves the principal still owed from the receivable to loan losses; returns the entry's id, or null when
 * no principal is owed (nothing is posted).
 */
async function postWriteOff(
  tx: Queryable,
  deps: Deps,
  loan: Loan,
  principal: bigint,
  now: Date,
): Promise<string | null> {
  if (principal <= 0n) return null;
  const organizationId = loan.organizationId;
  const receivable = await systemAccount(tx, deps, organizationId, 'loan_receivable', loan.currency);
  const loss = await systemAccount(tx, deps, organizationId, 'loan_loss', loan.currency);
  const session = new PostingSession(tx);
  await session.lock([receivable, loss]);
  const writeOff = directEntry(
    deps,
    organizationId,
    [posted(loss, 'debit', principal, loan.currency), posted(receivable, 'credit', principal, loan.currency)],
    now,
  );
  const refusal = session.tryPost(writeOff);
  if (refusal) throw refusalError(refusal, 'write-off');
  await session.flush(now);
  return writeOff.id;
}

/** The fees and interest the instalments still owe: forgone, never posted (income is booked when paid). */
function unpaidFeeAndInterest(instalments: readonly Instalment[]): { fee: bigint; interest: bigint } {
  return instalments.reduce(
    (s, i) => ({
      fee: s.fee + i.feeMinor - i.feePaidMinor,
      interest: s.interest + i.interestMinor - i.interestPaidMinor,
    }),
    { fee: 0n, interest: 0n },
  );
}

/** The evidence of a write-off: the loan's arrears as they stood, what was written off and what was forgone. */
function writeOffEvidence(
  loan: Loan,
  written: { reason: string; today: string; principal: bigint; entryId: string | null },
  unpaid: { fee: bigint; interest: bigint },
  actor: EvidenceActor,
): EvidenceDraft {
  const { reason, today, principal } = written;
  return loanEvidence(loan, 'loan.write_off', actor, {
    reason,
    day: today,
    days_past_due: loan.daysPastDue,
    arrears_bucket: loan.arrearsBucket,
    principal_written_off: formatAmount(principal, loan.currency),
    interest_forgone: formatAmount(unpaid.interest, loan.currency),
    fee_forgone: formatAmount(unpaid.fee, loan.currency),
    penalty_forgone: formatAmount(loan.penaltyAccruedMinor - loan.penaltyPaidMinor, loan.currency),
    currency: loan.currency,
    journal_entry: written.entryId,
  });
}

/**
 * An operator writes an active loan off: the principal still owed moves from the receivable to loan
 * losses; interest, fees and penalty not paid were never income (income is booked when it is paid), so
 * they are recorded as forgone in the evidence, not posted. The loan ends `written_off`.
 */
export async function writeOffLoan(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  input: { reason: string },
  actor: EvidenceActor,
): Promise<LoanView> {
  const reason = checkWriteOffReason(input.reason);
  const today = utcDay(await organizationNow(tx, deps, organizationId));
  // Brought up to today first, so the write-off records the arrears as they stand.
  const loan = await catchUpLockedLoan(tx, deps, await lockLoan(tx, organizationId, id), today);
  if (loan.status !== 'active') throw loanStateError(loan.id, loan.status, 'written off');
  const now = deps.now();
  const instalments = await listInstalments(tx, loan.id);
  const principal = principalOutstanding(instalments);
  const writeOffEntryId = await postWriteOff(tx, deps, loan, principal, now);
  const ended: Loan = {
    ...loan,
    status: 'written_off',
    statusReason: 'written_off',
    writeOffEntryId,
    writtenOffMinor: principal,
    writeOffReason: reason,
    updatedAt: now,
    closedAt: now,
  };
  await saveLoan(tx, ended);
  const written = { reason, today, principal, entryId: writeOffEntryId };
  await appendEvidence(tx, deps, [writeOffEvidence(loan, written, unpaidFeeAndInterest(instalments), actor)]);
  const view: LoanView = { loan: ended, instalments, today };
  await recordEvents(tx, deps, [
    loanEvent(deps, 'loan.written_off', view, now, {
      reason,
      written_off: formatAmount(principal, loan.currency),
      journal_entry: writeOffEntryId,
    }),
  ]);
  return view;
}
