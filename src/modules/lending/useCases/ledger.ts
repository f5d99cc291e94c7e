/**
 * Lending's ledger accounts (the receivable, interest, fee and penalty income, loan losses: the
 * organization's own, on the internal rail) and the entries a loan posts: direct, posted at once.
 */

import type { Deps } from '../../../app/deps.ts';
import type { Currency } from '../../../domain/money.ts';
import type { Queryable } from '../../../store/store.ts';
import type { Posting } from '../../ledger/index.ts';
import { ensureSystemAccount } from '../../ledger/index.ts';
import type { Allocation } from '../domain/balances.ts';
import type { Loan } from '../domain/loans.ts';

export interface LoanAccounts {
  receivable: string;
  interest: string;
  fee: string;
  penalty: string;
}

/** One of the organization's lending accounts in a currency, created on first use. */
export function systemAccount(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  kind: 'loan_receivable' | 'loan_interest_income' | 'loan_fee_income' | 'loan_penalty_income' | 'loan_loss',
  currency: Currency,
): Promise<string> {
  // Lending never leaves the platform: its accounts are on the internal rail.
  return ensureSystemAccount(tx, {
    id: deps.newId('ledgerAccount'),
    organizationId,
    kind,
    rail: 'internal',
    currency,
    now: deps.now(),
  });
}

/** The loan's receivable and income accounts in its currency, created on first use. */
export async function loanAccounts(tx: Queryable, deps: Deps, loan: Loan): Promise<LoanAccounts> {
  return {
    receivable: await systemAccount(tx, deps, loan.organizationId, 'loan_receivable', loan.currency),
    interest: await systemAccount(tx, deps, loan.organizationId, 'loan_interest_income', loan.currency),
    fee: await systemAccount(tx, deps, loan.organizationId, 'loan_fee_income', loan.currency),
    penalty: await systemAccount(tx, deps, loan.organizationId, 'loan_penalty_income', loan.currency),
  };
}

/** A posting line that takes effect at once (no hold). */
export function posted(
  accountId: string,
  side: 'debit' | 'credit',
  amountMinor: bigint,
  currency: Currency,
): Posting {
  return { accountId, side, phase: 'posted', releasesHold: false, amountMinor, currency };
}

/** A repayment's entry: the wallet pays the whole; each part goes to its account. */
export function repaymentPostings(loan: Loan, accounts: LoanAccounts, a: Allocation): Posting[] {
  const total = a.penaltyMinor + a.feeMinor + a.interestMinor + a.principalMinor;
  const lines = [posted(loan.walletId, 'debit', total, loan.currency)];
  const parts: [string, bigint][] = [
    [accounts.penalty, a.penaltyMinor],
    [accounts.fee, a.feeMinor],
    [accounts.interest, a.interestMinor],
    [accounts.receivable, a.principalMinor],
  ];
  for (const [account, part] of parts)
    if (part > 0n) lines.push(posted(account, 'credit', part, loan.currency));
  return lines;
}
