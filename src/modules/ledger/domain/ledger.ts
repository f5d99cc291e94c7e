/**
 * Posting rules of the double-entry ledger, pure. Accounts keep TigerBeetle's four running sums; every
 * change to them is a posting, and every journal entry's postings balance per currency.
 */
import type { Currency } from '../../../domain/money.ts';

export interface AccountSums {
  debitsPending: bigint;
  debitsPosted: bigint;
  creditsPending: bigint;
  creditsPosted: bigint;
}

export const POSTING_SIDES = ['debit', 'credit'] as const;
export type PostingSide = (typeof POSTING_SIDES)[number];
export const POSTING_PHASES = ['pending', 'posted', 'voided'] as const;
export type PostingPhase = (typeof POSTING_PHASES)[number];

/**
 * A wallet's account (same id as the wallet); per organization, rail and currency, a settlement account
 * (money held at the rail partner: debited when a collection arrives) and a clearing account (money on
 * its way out through the rail: credited when a payout is held or posted); per organization and currency,
 * a payment batch reserve (credited by the hold of what a running batch still has to pay); per rail and
 * currency, the reconciliation accounts operators book differences to: write-offs and the rail's fees; per
 * organization and currency, the fee income account credited with the fees the organization charges its
 * customers on transfers (docs/FEES.md); per organization and currency, the conversion account, the
 * treasury's side of a mint or redeem (docs/STABLECOINS.md); per organization and currency, the trust
 * account: customer money held at trust banks (for USDC and USDT, in the custodian's wallet), an asset
 * debited when a bank deposit or an on-chain deposit arrives (both are received straight into trust) and
 * when an operator records a sweep into trust from a rail's float (crediting the rail's settlement
 * account), credited by a sweep out of trust (docs/SAFEGUARDING.md); per organization and currency, the
 * interest expense account savings interest is paid from and the interest payable account it is booked to
 * daily until it is capitalised (docs/PRODUCTS.md); per organization and currency, the lending accounts
 * (docs/PRODUCTS.md, "Lending products"): the loan receivable (principal lent and not yet repaid, a debit
 * balance), the income a repayment's interest, fee and penalty parts go to, and loan losses (what was
 * written off).
 *
 * Seen as balances: a wallet holds a credit balance (what the platform owes its customer); settlement and
 * trust accounts hold debit balances (money the platform has, at a partner or in trust); a rail's clearing
 * account holds a credit balance (money that left through the rail out of its float).
 */
export const ACCOUNT_KINDS = [
  'wallet',
  'rail_settlement',
  'rail_clearing',
  'payment_batch_reserve',
  'reconciliation_adjustment',
  'rail_fee',
  'fee_income',
  'conversion',
  'trust',
  'interest_expense',
  'interest_payable',
  'loan_receivable',
  'loan_interest_income',
  'loan_fee_income',
  'loan_penalty_income',
  'loan_loss',
] as const;
export type AccountKind = (typeof ACCOUNT_KINDS)[number];

/**
 * The `rail` a trust ledger account is stored with. System accounts are keyed by rail; the trust account
 * belongs to no rail (like fee income and conversion accounts), so it takes `internal`, the rail that never
 * leaves the platform.
 */
export const TRUST_LEDGER_RAIL = 'internal';

/** hold: pending lines; post / void: make a hold final / release it; direct and reversal: final at once. */
export const JOURNAL_ENTRY_KINDS = ['hold', 'post', 'void', 'direct', 'reversal'] as const;
export type JournalEntryKind = (typeof JOURNAL_ENTRY_KINDS)[number];

export interface Posting {
  accountId: string;
  side: PostingSide;
  phase: PostingPhase;
  /** On a posted line: the amount also leaves this side's pending sum (a hold becoming final). */
  releasesHold: boolean;
  amountMinor: bigint;
  currency: Currency;
}

export const ZERO_SUMS: AccountSums = {
  debitsPending: 0n,
  debitsPosted: 0n,
  creditsPending: 0n,
  creditsPosted: 0n,
};

export function applyPosting(sums: AccountSums, posting: Posting): AccountSums {
  const next = { ...sums };
  const pendingKey = posting.side === 'debit' ? 'debitsPending' : 'creditsPending';
  const postedKey = posting.side === 'debit' ? 'debitsPosted' : 'creditsPosted';
  if (posting.phase === 'pending') next[pendingKey] += posting.amountMinor;
  if (posting.phase === 'voided') next[pendingKey] -= posting.amountMinor;
  if (posting.phase === 'posted') {
    next[postedKey] += posting.amountMinor;
    if (posting.releasesHold) next[pendingKey] -= posting.amountMinor;
  }
  return next;
}

/** A wallet is a liability of the platform: credits raise it, debits lower it; holds count against it. */
export function walletBalances(sums: AccountSums): {
  currentMinor: bigint;
  pendingMinor: bigint;
  availableMinor: bigint;
} {
  const currentMinor = sums.creditsPosted - sums.debitsPosted;
  return {
    currentMinor,
    pendingMinor: sums.debitsPending,
    availableMinor: currentMinor - sums.debitsPending,
  };
}

/**
 * Any account's signed net, credits minus debits: a credit balance is positive, a debit balance negative.
 * For a wallet, the posted net is its current balance. Over all accounts of one currency both nets sum to
 * zero, because every entry balances per phase.
 */
export function netBalances(sums: AccountSums): { netPostedMinor: bigint; netPendingMinor: bigint } {
  return {
    netPostedMinor: sums.creditsPosted - sums.debitsPosted,
    netPendingMinor: sums.creditsPending - sums.debitsPending,
  };
}

function line(
  accountId: string,
  side: PostingSide,
  phase: PostingPhase,
  amountMinor: bigint,
  currency: Currency,
  releasesHold = false,
): Posting {
  return { accountId, side, phase, releasesHold, amountMinor, currency };
}

/** A debit and a credit of the same amount, both in `phase`. */
function balancedPostings(phase: PostingPhase) {
  return (
    debitAccountId: string,
    creditAccountId: string,
    amountMinor: bigint,
    currency: Currency,
  ): Posting[] => [
    line(debitAccountId, 'debit', phase, amountMinor, currency),
    line(creditAccountId, 'credit', phase, amountMinor, currency),
  ];
}

/** Reserves funds: the debit and credit wait in the pending sums until posted or voided. */
export const holdPostings = balancedPostings('pending');

/** Makes a hold final: each pending line becomes posted and leaves the pending sum. */
export function postHoldPostings(hold: readonly Posting[]): Posting[] {
  return hold.map((p) => line(p.accountId, p.side, 'posted', p.amountMinor, p.currency, true));
}

/** Releases a hold: the pending sums go back down and nothing is posted. */
export function voidHoldPostings(hold: readonly Posting[]): Posting[] {
  return hold.map((p) => line(p.accountId, p.side, 'voided', p.amountMinor, p.currency));
}

/** A movement that is final at once (internal transfers, collections, returns). */
export const directPostings = balancedPostings('posted');

/** A transfer's fee and the account it goes to (the organization's fee income in the currency). */
export interface FeeLine {
  accountId: string;
  amountMinor: bigint;
}

/**
 * A transfer's postings in one phase (`pending` for its hold, `posted` when final at once): the paying
 * account gives the amount and the fee, the destination receives the amount, the fee account the fee. With
 * no fee (or a zero one) these are the plain two lines.
 */
export function transferPostings(
  phase: 'pending' | 'posted',
  debitAccountId: string,
  creditAccountId: string,
  amountMinor: bigint,
  currency: Currency,
  fee?: FeeLine | undefined,
): Posting[] {
  const feeMinor = fee?.amountMinor ?? 0n;
  const lines = [
    line(debitAccountId, 'debit', phase, amountMinor + feeMinor, currency),
    line(creditAccountId, 'credit', phase, amountMinor, currency),
  ];
  if (fee && feeMinor > 0n) lines.push(line(fee.accountId, 'credit', phase, feeMinor, currency));
  return lines;
}

/**
 * A settled transfer given back, fee included: whoever received the amount (the rail's clearing account, or
 * the destination wallet) pays it back, the fee account gives the fee back, and the paying wallet receives
 * both.
 */
export function reversalPostings(
  fromAccountId: string,
  toAccountId: string,
  amountMinor: bigint,
  currency: Currency,
  fee?: FeeLine | undefined,
): Posting[] {
  const feeMinor = fee?.amountMinor ?? 0n;
  const lines = [line(fromAccountId, 'debit', 'posted', amountMinor, currency)];
  if (fee && feeMinor > 0n) lines.push(line(fee.accountId, 'debit', 'posted', feeMinor, currency));
  lines.push(line(toAccountId, 'credit', 'posted', amountMinor + feeMinor, currency));
  return lines;
}

/** True when, for each currency and each phase, debits equal credits. */
export function isBalanced(postings: readonly Posting[]): boolean {
  const net = new Map<string, bigint>();
  for (const p of postings) {
    const key = `${p.currency}:${p.phase}:${p.releasesHold}`;
    net.set(key, (net.get(key) ?? 0n) + (p.side === 'debit' ? p.amountMinor : -p.amountMinor));
  }
  return [...net.values()].every((v) => v === 0n);
}
