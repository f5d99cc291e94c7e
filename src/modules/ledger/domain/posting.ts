/**
 * The one posting rule, pure. Every money movement (a transfer's hold or direct entry, settle, fail,
 * cancel, return, funding, and the products to come) is a journal entry whose postings are decided here
 * against the locked accounts' sums: the entry must balance, every posting must be to an account of the
 * entry's organization and in its currency, no sum may leave what the ledger can hold, and no wallet may be taken below its floor.
 */

import type { Currency } from '../../../domain/money.ts';
import {
  type AccountKind,
  type AccountSums,
  applyPosting,
  holdPostings,
  isBalanced,
  type JournalEntryKind,
  type Posting,
  walletBalances,
  ZERO_SUMS as ZERO,
} from './ledger.ts';

/** PostgreSQL BIGINT's maximum: no running sum of an account may pass it. */
export const ACCOUNT_SUM_MINOR_MAX = 9_223_372_036_854_775_807n;

/** An account as the posting module sees it once locked: its sums and what limits it. */
export interface PostingAccount extends AccountSums {
  id: string;
  organizationId: string;
  kind: AccountKind;
  currency: Currency;
  /** The wallet's status when the account is a wallet's; null for system accounts. */
  walletStatus: string | null;
  /** How far below zero the wallet's available balance may go; 0 until a product allows an overdraft. */
  overdraftLimitMinor: bigint;
}

export interface EntryDraft {
  organizationId: string;
  kind: JournalEntryKind;
  postings: readonly Posting[];
}

/**
 * Expected refusals, in precedence order: a wallet that may not move money, then one that lacks it, then a
 * sum the ledger cannot hold.
 */
export const POSTING_REFUSALS = ['wallet_not_active', 'insufficient_funds', 'account_sum_overflow'] as const;
export type PostingRefusalCode = (typeof POSTING_REFUSALS)[number];

export interface PostingRefusal {
  code: PostingRefusalCode;
  accountId: string;
}

export type PostingDecision =
  | { ok: true; next: Map<string, AccountSums> }
  | { ok: false; refusal: PostingRefusal };

/** A wallet that is frozen or closed may not be debited; a closed one may not be credited either. */
function mayLower(walletStatus: string | null): boolean {
  return walletStatus === null || walletStatus === 'active';
}

/**
 * A frozen wallet receives nothing new; it takes money coming back to it (a return's reversal), since
 * refusing it would leave a payment the rail already returned nowhere, and a hold made final (money held
 * for it before, or held for review and let in by an operator). A closed wallet receives nothing.
 */
function mayReceive(walletStatus: string | null, kind: JournalEntryKind): boolean {
  if (walletStatus === 'frozen') return kind === 'reversal' || kind === 'post';
  return walletStatus !== 'closed';
}

function sumsWithinBounds(sums: AccountSums): boolean {
  return [sums.debitsPending, sums.debitsPosted, sums.creditsPending, sums.creditsPosted].every(
    (v) => v <= ACCOUNT_SUM_MINOR_MAX,
  );
}

/**
 * Decides one entry against the accounts' current sums (as locked, plus whatever this transaction posted
 * before it). Returns the accounts' new sums, or the refusal. An unbalanced entry, an unknown account, a
 * posting to another organization's account or in another currency than its account, or a pending sum
 * going negative is a bug, not a refusal: it throws.
 *
 * The overdraft rule: a wallet's available balance may not be lowered below minus its overdraft limit (0
 * today), and may not be lowered at all unless the wallet is active. Movements that do not lower it (a
 * hold posted or voided, money arriving) pass whatever the balance, so a hold is always released. Money
 * arriving is refused to a closed wallet, and to a frozen one unless it is a return (mayReceive).
 */
export function decideEntry(
  accounts: ReadonlyMap<string, PostingAccount>,
  current: ReadonlyMap<string, AccountSums>,
  entry: EntryDraft,
): PostingDecision {
  if (entry.postings.length === 0) throw new Error(`${entry.kind} entry without postings`);
  if (!isBalanced(entry.postings)) throw new Error(`unbalanced ${entry.kind} entry`);
  const currency = entry.postings[0]?.currency;
  const next = new Map<string, AccountSums>();
  for (const posting of entry.postings) {
    const account = accounts.get(posting.accountId);
    if (!account) throw new Error(`posting to unlocked account ${posting.accountId}`);
    // Whatever a request named, no entry of one organization touches another's account.
    if (account.organizationId !== entry.organizationId) {
      throw new Error(
        `a posting of ${entry.organizationId} to account ${account.id} of another organization`,
      );
    }
    if (posting.currency !== account.currency || posting.currency !== currency) {
      throw new Error(`a ${posting.currency} posting to ${account.currency} account ${account.id}`);
    }
    const before = next.get(account.id) ?? current.get(account.id) ?? account;
    next.set(account.id, applyPosting(before, posting));
  }
  let refusal: PostingRefusal | undefined;
  const refuse = (code: PostingRefusalCode, accountId: string) => {
    if (!refusal || POSTING_REFUSALS.indexOf(code) < POSTING_REFUSALS.indexOf(refusal.code)) {
      refusal = { code, accountId };
    }
  };
  for (const [id, after] of next) {
    const account = accounts.get(id) as PostingAccount;
    if (after.debitsPending < 0n || after.creditsPending < 0n) {
      throw new Error(`pending sum of ${id} would go negative: a hold released twice`);
    }
    if (!sumsWithinBounds(after)) refuse('account_sum_overflow', id);
    if (account.kind !== 'wallet') continue;
    const before = current.get(id) ?? account;
    const availableBefore = walletBalances(before).availableMinor;
    const availableAfter = walletBalances(after).availableMinor;
    const currentAfter = walletBalances(after).currentMinor;
    if (availableAfter < availableBefore) {
      if (!mayLower(account.walletStatus)) refuse('wallet_not_active', id);
      else if (availableAfter < -account.overdraftLimitMinor) refuse('insufficient_funds', id);
    } else if (
      currentAfter > walletBalances(before).currentMinor &&
      !mayReceive(account.walletStatus, entry.kind)
    ) {
      refuse('wallet_not_active', id);
    }
  }
  return refusal ? { ok: false, refusal } : { ok: true, next };
}

export type DebitRefusal = Extract<PostingRefusalCode, 'insufficient_funds' | 'wallet_not_active'>;

/**
 * Whether a wallet in the given state may have amountMinor held now: the posting rule above applied to a
 * hold from the wallet, stated on its own.
 */
export function decideDebit(
  sums: AccountSums,
  walletStatus: string,
  amountMinor: bigint,
): DebitRefusal | undefined {
  const wallet: PostingAccount = {
    id: 'wallet',
    organizationId: 'organization',
    kind: 'wallet',
    currency: 'KES',
    walletStatus,
    overdraftLimitMinor: 0n,
    ...sums,
  };
  const clearing: PostingAccount = {
    ...wallet,
    ...ZERO,
    id: 'clearing',
    kind: 'rail_clearing',
    walletStatus: null,
  };
  const decision = decideEntry(
    new Map([
      [wallet.id, wallet],
      [clearing.id, clearing],
    ]),
    new Map(),
    {
      organizationId: wallet.organizationId,
      kind: 'hold',
      postings: holdPostings(wallet.id, clearing.id, amountMinor, 'KES'),
    },
  );
  return decision.ok ? undefined : (decision.refusal.code as DebitRefusal);
}

/**
 * Movements that wait between being decided and moving the money: a transfer held for approval or review,
 * a payout queued for its rail, a payment batch's item, a collection arriving for a wallet, a loan's
 * disbursement and its scheduled instalments, a savings withdrawal. Each is released through
 * `decideRelease`, inside the transaction that moves it, over the wallets as locked then: what held when it
 * was decided may no longer hold (a wallet frozen while a payout waited for its approval).
 */
export const WAITING_MOVEMENTS = [
  'transfer_approval',
  'transfer_review',
  'transfer_rail_handoff',
  'transfer_settlement',
  'payment_batch_item',
  'collection',
  'loan_disbursement',
  'loan_instalment',
  'savings_withdrawal',
] as const;
export type WaitingMovement = (typeof WAITING_MOVEMENTS)[number];

/** A wallet at one end of a waiting movement, as locked by the posting session. */
export type ReleaseParty = Pick<PostingAccount, 'id' | 'walletStatus'>;

export type ReleaseDecision =
  | { outcome: 'release' }
  | { outcome: 'refuse'; refusal: PostingRefusal; side: 'source' | 'destination' }
  /** Money that already arrived from outside for a frozen wallet: held for a compliance review. */
  | { outcome: 'hold_for_review'; accountId: string };

/**
 * Whether a waiting movement may move now. Both wallets must be active: a frozen or closed source sends
 * nothing, and a frozen or closed destination receives nothing new, whatever was decided when the movement
 * was created. Two exceptions, both about money that has already arrived from outside: a collection for a
 * frozen wallet is held for review rather than refused (the payer's money is here and must be accounted
 * for), and an inbound credit an operator clears out of that review is let in (the clear is the decision).
 */
export function decideRelease(
  movement: WaitingMovement,
  parties: { source?: ReleaseParty | undefined; destination?: ReleaseParty | undefined },
  options: { inboundClearedByReview?: boolean } = {},
): ReleaseDecision {
  const { source, destination } = parties;
  if (source && source.walletStatus !== null && source.walletStatus !== 'active') {
    return {
      outcome: 'refuse',
      refusal: { code: 'wallet_not_active', accountId: source.id },
      side: 'source',
    };
  }
  if (destination && destination.walletStatus !== null && destination.walletStatus !== 'active') {
    const letIn = destination.walletStatus === 'frozen';
    if (letIn && movement === 'collection') return { outcome: 'hold_for_review', accountId: destination.id };
    if (letIn && options.inboundClearedByReview) return { outcome: 'release' };
    return {
      outcome: 'refuse',
      refusal: { code: 'wallet_not_active', accountId: destination.id },
      side: 'destination',
    };
  }
  return { outcome: 'release' };
}
