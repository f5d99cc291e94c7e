/** Loan products, loans and repayments in their wire form: every amount a decimal string in the loan's currency. */
import { type Currency, formatAmount } from '../../../domain/money.ts';
import { isoOrNull } from '../../../http/presenters.ts';
import { arrearsOn, instalmentUnpaid, outstandingTotal } from '../domain/balances.ts';
import type { LoanProduct, LoanRepayment } from '../domain/loans.ts';
import type { LoanView } from '../useCases/loans.ts';

export function presentLoanProduct(p: LoanProduct) {
  return {
    object: 'loan_product',
    id: p.id,
    name: p.name,
    currency: p.currency,
    interest_rate_bps: p.interestRateBps,
    term_months: p.termMonths,
    amortisation: p.amortisation,
    origination_fee_bps: p.originationFeeBps,
    grace_period_months: p.gracePeriodMonths,
    penalty_rate_bps: p.penaltyRateBps,
    min_principal: formatAmount(p.minPrincipalMinor, p.currency),
    max_principal: formatAmount(p.maxPrincipalMinor, p.currency),
    created_at: p.createdAt.toISOString(),
  };
}

type Instalment = LoanView['instalments'][number];

/** What is owed and paid, the arrears and the next due date; a loan not active owes nothing and has no arrears. */
function loanStanding(view: LoanView) {
  const { loan, instalments, today } = view;
  const fmt = (minor: bigint) => formatAmount(minor, loan.currency);
  const sum = (f: (i: Instalment) => bigint) => instalments.reduce((s, i) => s + f(i), 0n);
  const penaltyOutstanding = loan.penaltyAccruedMinor - loan.penaltyPaidMinor;
  // Arrears as of the last day done (what the day work recorded), so a read never runs ahead of it.
  const arrears = arrearsOn(instalments, loan.processedThrough ?? today);
  const active = loan.status === 'active';
  const next = instalments.find((i) => {
    const u = instalmentUnpaid(i);
    return u.fee + u.interest + u.principal > 0n;
  });
  return {
    outstanding: {
      penalty: fmt(active ? penaltyOutstanding : 0n),
      fee: fmt(active ? sum((i) => i.feeMinor - i.feePaidMinor) : 0n),
      interest: fmt(active ? sum((i) => i.interestMinor - i.interestPaidMinor) : 0n),
      principal: fmt(active ? sum((i) => i.principalMinor - i.principalPaidMinor) : 0n),
      total: fmt(active ? outstandingTotal(penaltyOutstanding, instalments) : 0n),
    },
    paid: {
      penalty: fmt(loan.penaltyPaidMinor),
      fee: fmt(sum((i) => i.feePaidMinor)),
      interest: fmt(sum((i) => i.interestPaidMinor)),
      principal: fmt(sum((i) => i.principalPaidMinor)),
    },
    arrears: {
      days_past_due: active ? loan.daysPastDue : 0,
      bucket: active ? loan.arrearsBucket : 'current',
      overdue: fmt(active ? arrears.overdueMinor : 0n),
      penalty_accrued: fmt(loan.penaltyAccruedMinor),
    },
    next_due_date: active ? (next?.dueDate ?? null) : null,
  };
}

/** Each instalment with what is paid of it and its status on `today`. */
function presentSchedule(instalments: readonly Instalment[], today: string, currency: Currency) {
  const fmt = (minor: bigint) => formatAmount(minor, currency);
  return instalments.map((i) => {
    const total = i.principalMinor + i.interestMinor + i.feeMinor;
    const paid = i.principalPaidMinor + i.interestPaidMinor + i.feePaidMinor;
    const status =
      paid === total ? 'paid' : i.dueDate < today ? 'overdue' : i.dueDate === today ? 'due' : 'upcoming';
    return {
      number: i.number,
      due_date: i.dueDate,
      principal: fmt(i.principalMinor),
      interest: fmt(i.interestMinor),
      fee: fmt(i.feeMinor),
      total: fmt(total),
      paid: fmt(paid),
      status,
    };
  });
}

export function presentLoan(view: LoanView) {
  const { loan, instalments, today } = view;
  const c: Currency = loan.currency;
  const fmt = (minor: bigint) => formatAmount(minor, c);
  return {
    object: 'loan',
    id: loan.id,
    product: loan.productId,
    customer: loan.customerId,
    wallet: loan.walletId,
    currency: c,
    principal: fmt(loan.principalMinor),
    terms: {
      interest_rate_bps: loan.interestRateBps,
      term_months: loan.termMonths,
      amortisation: loan.amortisation,
      origination_fee_bps: loan.originationFeeBps,
      grace_period_months: loan.gracePeriodMonths,
      penalty_rate_bps: loan.penaltyRateBps,
    },
    status: loan.status,
    status_reason: loan.statusReason,
    decision: { decision: loan.policyDecision, policy_version: loan.policyVersion, rule: loan.policyRule },
    approval: loan.approvalId,
    disbursed_at: isoOrNull(loan.disbursedAt),
    disbursed_on: loan.disbursedOn,
    processed_through: loan.processedThrough,
    ...loanStanding(view),
    schedule: presentSchedule(instalments, today, c),
    written_off: loan.writtenOffMinor === null ? null : fmt(loan.writtenOffMinor),
    write_off_reason: loan.writeOffReason,
    created_at: loan.createdAt.toISOString(),
    updated_at: loan.updatedAt.toISOString(),
    closed_at: isoOrNull(loan.closedAt),
  };
}

export function presentLoanRepayment(r: LoanRepayment, currency: Currency) {
  const fmt = (minor: bigint) => formatAmount(minor, currency);
  return {
    object: 'loan_repayment',
    id: r.id,
    loan: r.loanId,
    source: r.source,
    day: r.day,
    amount: fmt(r.amountMinor),
    currency,
    allocation: {
      penalty: fmt(r.penaltyMinor),
      fee: fmt(r.feeMinor),
      interest: fmt(r.interestMinor),
      principal: fmt(r.principalMinor),
    },
    journal_entry: r.journalEntryId,
    created_at: r.createdAt.toISOString(),
  };
}
