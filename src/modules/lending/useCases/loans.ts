/**
 * A loan as the use cases hold it: locked before anything changes it, viewed with its schedule and the
 * organization's today, shown in its events; and the reads of loans and their repayments. Every path that
 * changes a loan locks its row first (lockLoan), then the ledger accounts, so a manual repayment and the
 * automatic collection of the same day take the money once, and a loan is disbursed once.
 */

import type { Deps } from '../../../app/deps.ts';
import { newEvent } from '../../../app/events.ts';
import { lockById, requireById } from '../../../app/reads.ts';
import type { EventRecord } from '../../../domain/events.ts';
import type { EvidenceActor, EvidenceDraft, EvidenceKind, EvidenceValue } from '../../../domain/evidence.ts';
import { type Currency, formatAmount } from '../../../domain/money.ts';
import { type Page, type PageRequest, toPage } from '../../../domain/pagination.ts';
import type { Queryable } from '../../../store/store.ts';
import { organizationNow, utcDay } from '../../testClock/index.ts';
import { outstandingTotal, principalOutstanding } from '../domain/balances.ts';
import type { Instalment, Loan, LoanEventType, LoanRepayment, LoanStatus } from '../domain/loans.ts';
import { listInstalments, listRepayments } from '../repository/instalments.ts';
import { findLoan, listLoans } from '../repository/loans.ts';

/** A loan with its schedule as it stands. */
export interface LoanView {
  loan: Loan;
  instalments: Instalment[];
  /** The organization's today, for what is overdue. */
  today: string;
}

export async function loanView(db: Queryable, deps: Deps, loan: Loan): Promise<LoanView> {
  return {
    loan,
    instalments: await listInstalments(db, loan.id),
    today: utcDay(await organizationNow(db, deps, loan.organizationId)),
  };
}

const amount = (minor: bigint, currency: Currency) => formatAmount(minor, currency);

export function loanEventData(view: LoanView): Record<string, unknown> {
  const { loan, instalments } = view;
  return {
    loan_id: loan.id,
    status: loan.status,
    status_reason: loan.statusReason,
    product: loan.productId,
    customer: loan.customerId,
    wallet: loan.walletId,
    principal: amount(loan.principalMinor, loan.currency),
    currency: loan.currency,
    principal_outstanding: amount(principalOutstanding(instalments), loan.currency),
    total_outstanding: amount(
      outstandingTotal(loan.penaltyAccruedMinor - loan.penaltyPaidMinor, instalments),
      loan.currency,
    ),
    days_past_due: loan.daysPastDue,
    arrears_bucket: loan.arrearsBucket,
  };
}

export function loanEvent(
  deps: Deps,
  type: LoanEventType,
  view: LoanView,
  now: Date,
  extra = {},
): EventRecord {
  return newEvent(
    deps,
    {
      organizationId: view.loan.organizationId,
      type,
      resourceId: view.loan.id,
      data: { ...loanEventData(view), ...extra },
    },
    now,
  );
}

export function repaymentData(r: LoanRepayment, currency: Currency): Record<string, unknown> {
  return {
    repayment_id: r.id,
    source: r.source,
    day: r.day,
    amount: amount(r.amountMinor, currency),
    allocation: {
      penalty: amount(r.penaltyMinor, currency),
      fee: amount(r.feeMinor, currency),
      interest: amount(r.interestMinor, currency),
      principal: amount(r.principalMinor, currency),
    },
    journal_entry: r.journalEntryId,
  };
}

/** Evidence about a loan, filed under its customer and wallet: `data` after the loan's id. */
export function loanEvidence(
  loan: Loan,
  kind: EvidenceKind,
  actor: EvidenceActor,
  data: { readonly [key: string]: EvidenceValue },
): EvidenceDraft {
  return {
    organizationId: loan.organizationId,
    kind,
    actor,
    customerId: loan.customerId,
    walletId: loan.walletId,
    data: { loan_id: loan.id, ...data },
  };
}

/** Locks a loan's row for the transaction: every path that changes a loan takes this first. */
export const lockLoan = lockById(findLoan, 'loan');

/** A loan read with no lock; 404 when the organization has none with this id. */
const requireLoan = requireById(findLoan, 'loan');

// ---- reads ----

export async function getLoan(deps: Deps, organizationId: string, id: string): Promise<LoanView> {
  const loan = await requireLoan(deps.store, organizationId, id);
  return loanView(deps.store, deps, loan);
}

export async function listOrganizationLoans(
  deps: Deps,
  organizationId: string,
  request: PageRequest & { status?: LoanStatus | undefined; walletId?: string | undefined },
): Promise<Page<LoanView>> {
  const page = toPage(await listLoans(deps.store, organizationId, request, request.limit + 1), request.limit);
  const today = utcDay(await organizationNow(deps.store, deps, organizationId));
  const data: LoanView[] = [];
  for (const loan of page.data) {
    data.push({ loan, instalments: await listInstalments(deps.store, loan.id), today });
  }
  return { ...page, data };
}

export async function listLoanRepayments(
  deps: Deps,
  organizationId: string,
  id: string,
  request: PageRequest,
): Promise<{ loan: Loan; page: Page<LoanRepayment> }> {
  const loan = await requireLoan(deps.store, organizationId, id);
  return {
    loan,
    page: toPage(await listRepayments(deps.store, loan.id, request, request.limit + 1), request.limit),
  };
}
