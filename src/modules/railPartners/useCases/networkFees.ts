/**
 * Blockchain network fees a custody partner reports paid for our transactions (a `digital_asset` payout, a
 * custody sweep), booked once, in the transaction that records the partner's final answer. The organization
 * bears them, as it bears a rail's charges (docs/DECISIONS.md, Fees): the customer's price is the fee schedule.
 *
 * A fee in a ledger currency goes through the posting module: debit the `rail_fee` account of `digital_asset`,
 * credit the account the coins left (a payout's: the rail's `rail_clearing`, the payout vault's float; a
 * sweep's: `trust`, the wallet's vault). A fee in an asset the ledger holds no account for (the network's
 * native coin, which pays every token transfer's gas at Fireblocks) opens an `unbooked_network_fee`
 * reconciliation exception instead: never dropped, and never booked in a currency it was not paid in.
 */
import type { Deps, PayoutNetworkFee } from '../../../app/deps.ts';
import type { NetworkFee } from '../../../rails/rail.ts';
import type { Queryable } from '../../../store/store.ts';
import {
  directEntry,
  directPostings,
  ensureSystemAccount,
  postEntry,
  trustLedgerAccount,
} from '../../ledger/index.ts';
import { openException } from '../../treasury/index.ts';
import {
  type CustodyNetworkFee,
  findNetworkFee,
  insertNetworkFee,
  type NetworkFeeSubject,
} from '../repository/networkFees.ts';

/** The rail every custody partner transaction moves on. */
const CUSTODY_RAIL = 'digital_asset';
/** A decimal amount that is zero ("0", "0.000000"): nothing was paid. */
const ZERO_AMOUNT = /^0*(?:\.0*)?$/;

export interface NetworkFeeDraft {
  organizationId: string;
  partnerTransactionId: string;
  subjectType: NetworkFeeSubject;
  subjectId: string;
  fee: NetworkFee;
}

/**
 * What booking a fee does, decided before anything is locked: nothing (a zero fee, or one recorded before),
 * a posting between these two accounts (created if missing), or an exception (no ledger account holds it).
 */
type FeePlan =
  | { kind: 'nothing'; recorded: CustodyNetworkFee | undefined }
  | {
      kind: 'post';
      currency: NonNullable<NetworkFee['currency']>;
      amountMinor: bigint;
      expense: string;
      paidFrom: string;
    }
  | { kind: 'exception' };

/**
 * Decides what booking the fee does. A fee in a ledger currency is posted as rail fee expense against the
 * account the coins left: its two accounts are found (or created) here, so a caller can lock them with its own.
 */
async function planNetworkFee(tx: Queryable, deps: Deps, draft: NetworkFeeDraft): Promise<FeePlan> {
  const { fee, organizationId } = draft;
  if (ZERO_AMOUNT.test(fee.amount)) return { kind: 'nothing', recorded: undefined };
  const existing = await findNetworkFee(tx, organizationId, fee.partner, draft.partnerTransactionId);
  if (existing) return { kind: 'nothing', recorded: existing };
  const { currency, amountMinor } = fee;
  if (currency === undefined || amountMinor === undefined || amountMinor <= 0n) return { kind: 'exception' };
  const now = deps.now();
  const expense = await ensureSystemAccount(tx, {
    id: deps.newId('ledgerAccount'),
    organizationId,
    kind: 'rail_fee',
    rail: CUSTODY_RAIL,
    currency,
    now,
  });
  const paidFrom =
    draft.subjectType === 'sweep'
      ? await trustLedgerAccount(tx, deps, organizationId, currency)
      : await ensureSystemAccount(tx, {
          id: deps.newId('ledgerAccount'),
          organizationId,
          kind: 'rail_clearing',
          rail: CUSTODY_RAIL,
          currency,
          now,
        });
  return { kind: 'post', currency, amountMinor, expense, paidFrom };
}

/** The ledger accounts a plan posts to. */
function accountsOf(plan: FeePlan): string[] {
  return plan.kind === 'post' ? [plan.expense, plan.paidFrom] : [];
}

/** Posts a planned fee: rail fee expense against the account the coins left. */
async function postNetworkFee(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  plan: Extract<FeePlan, { kind: 'post' }>,
): Promise<string> {
  const now = deps.now();
  const entry = directEntry(
    deps,
    organizationId,
    directPostings(plan.expense, plan.paidFrom, plan.amountMinor, plan.currency),
    now,
  );
  await postEntry(tx, entry, now, 'network fee');
  return entry.id;
}

/**
 * Prepares the booking of the fee a partner transaction paid, before the caller locks its accounts: `accounts`
 * are those `book` posts to, for the caller to lock with its own in one statement (src/store/lockOrder.ts).
 * Booked once: a transaction that has its fee recorded changes nothing (the unique index backs this up, so a
 * second booking fails its whole transaction rather than post twice). A zero fee records nothing. `book`
 * returns the fee recorded, if any.
 */
export async function prepareNetworkFee(
  tx: Queryable,
  deps: Deps,
  draft: NetworkFeeDraft,
): Promise<{ accounts: string[]; book: () => Promise<CustodyNetworkFee | undefined> }> {
  const plan = await planNetworkFee(tx, deps, draft);
  return { accounts: accountsOf(plan), book: () => bookPlanned(tx, deps, draft, plan) };
}

/** Carries out a fee's plan: posts it or opens its exception, and records it. */
async function bookPlanned(
  tx: Queryable,
  deps: Deps,
  draft: NetworkFeeDraft,
  plan: FeePlan,
): Promise<CustodyNetworkFee | undefined> {
  if (plan.kind === 'nothing') return plan.recorded;
  const { fee, organizationId } = draft;
  const booked = plan.kind === 'post';
  const journalEntryId = booked ? await postNetworkFee(tx, deps, organizationId, plan) : null;
  const exceptionId = booked ? null : (await openUnbookedFee(tx, deps, draft)).id;
  const recorded: CustodyNetworkFee = {
    id: deps.newId('custodyNetworkFee'),
    organizationId,
    partner: fee.partner,
    partnerTransactionId: draft.partnerTransactionId,
    subjectType: draft.subjectType,
    subjectId: draft.subjectId,
    feeAsset: fee.asset,
    feeAmount: fee.amount,
    currency: booked ? plan.currency : null,
    amountMinor: booked ? plan.amountMinor : null,
    journalEntryId,
    exceptionId,
    createdAt: deps.now(),
  };
  await insertNetworkFee(tx, recorded);
  return recorded;
}

/** The exception holding a fee the ledger cannot book: what was paid, in what, by which transaction. */
function openUnbookedFee(tx: Queryable, deps: Deps, draft: NetworkFeeDraft) {
  const { fee } = draft;
  return openException(tx, deps, {
    organizationId: draft.organizationId,
    // Not the transfer's: the payout itself is right; the fee is the organization's own cost.
    transferId: null,
    kind: 'unbooked_network_fee',
    details: {
      partner: fee.partner,
      partner_transaction_id: draft.partnerTransactionId,
      [draft.subjectType === 'payout' ? 'transfer_id' : 'custody_sweep_id']: draft.subjectId,
      fee_asset: fee.asset,
      fee_amount: fee.amount,
      rail: CUSTODY_RAIL,
    },
  });
}

/**
 * A settling payout's fee (the `Deps.payoutNetworkFee` hook transfers call before the settle locks its
 * accounts): planned now, with the accounts it posts to for the settle to lock with its own in one statement
 * (src/store/lockOrder.ts), and booked when the settle calls `book`, after its own entry.
 */
export const preparePayoutNetworkFee: PayoutNetworkFee = async (
  tx,
  deps,
  transfer,
  fee,
  partnerTransactionId,
) => {
  const draft: NetworkFeeDraft = {
    organizationId: transfer.organizationId,
    partnerTransactionId,
    subjectType: 'payout',
    subjectId: transfer.id,
    fee,
  };
  const prepared = await prepareNetworkFee(tx, deps, draft);
  return {
    accounts: prepared.accounts,
    book: async () => {
      await prepared.book();
    },
  };
};
