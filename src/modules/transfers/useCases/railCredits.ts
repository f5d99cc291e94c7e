/**
 * Money a rail reports received for a wallet (a collection, a sandbox funding, a bank or on-chain deposit):
 * an inbound transfer posted from the account that received it. A credit to a frozen wallet is held for
 * review instead, with its case and evidence.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvents, transferEvent } from '../../../app/events.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import type { EventRecord } from '../../../domain/events.ts';
import type { Metadata } from '../../../domain/metadata.ts';
import { checkSingleAmount, formatAmount, parseAmount } from '../../../domain/money.ts';
import { IN_REVIEW_STATUS_REASON, openReviewCase } from '../../../domain/reviews.ts';
import { newTransferLife, type Transfer } from '../../../domain/transferRecord.ts';
import type { Wallet } from '../../../domain/wallets.ts';
import type { Queryable } from '../../../store/store.ts';
import { insertReviewCases } from '../../compliance/index.ts';
import {
  directPostings,
  ensureSystemAccount,
  holdPostings,
  lockAccounts,
  PostingSession,
  refusalError,
  trustLedgerAccount,
} from '../../ledger/index.ts';
import { requireWallet } from '../../wallets/index.ts';
import { insertTransfer } from '../repository.ts';

/** Where a sandbox funding's money comes from: the mobile-money rail's settlement account. */
const SANDBOX_FUNDING = { rail: 'mobile_money' } as const satisfies RailReceipt;

/**
 * Locks, in one statement, every account sandbox fundings of these wallets post to (each wallet and the
 * settlement account its money comes from), for a transaction that funds several wallets: each funding's own
 * lock then finds its accounts held, so the transaction takes its account locks in the one order
 * (src/store/lockOrder.ts) instead of locking a settlement account after a wallet whose id sorts after it.
 */
export async function lockFundingAccounts(
  tx: Queryable,
  deps: Deps,
  wallets: readonly Wallet[],
): Promise<void> {
  const now = deps.now();
  const accounts: string[] = [];
  for (const wallet of wallets) {
    accounts.push(wallet.id, await receivingAccount(tx, deps, wallet, SANDBOX_FUNDING, now));
  }
  await lockAccounts(tx, accounts);
}

/**
 * Sandbox collection: money arrives in a wallet from a simulated mobile-money payer, as a settled inbound
 * transfer with a balanced entry from the rail's settlement account. A rail credit to a frozen wallet is not
 * refused (the payer's money has arrived) but held for review: the inbound transfer is `in_review` with a
 * hold that credits the wallet only as pending, and a `frozen_wallet` case opens; clearing it credits the
 * wallet, rejecting it voids the hold (the money goes back to the payer).
 */
export async function fundWallet(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  walletId: string,
  amount: string | number,
  metadata: Metadata,
  amountText?: string,
): Promise<Transfer> {
  const wallet = await requireWallet(tx, organizationId, walletId);
  const amountMinor = checkSingleAmount(
    parseAmount(amount, wallet.currency, 'amount', amountText),
    wallet.currency,
  );
  return creditFromRail(tx, deps, wallet, {
    amountMinor,
    ...SANDBOX_FUNDING,
    network: null,
    railReference: null,
    statusReason: 'sandbox_collection',
    metadata,
  });
}

export interface RailCredit {
  amountMinor: bigint;
  rail: Transfer['rail'];
  network: string | null;
  railReference: string | null;
  /** The partner's receipt for the payment (M-Pesa's TransID), where it gives one. */
  partnerReceipt?: string | null | undefined;
  /** Why the money arrived, shown as the transfer's `status_reason`. */
  statusReason: string;
  metadata: Metadata;
  /**
   * Where the money was received: the rail partner's float (`rail_settlement`, the default: a mobile-money
   * collection lands at the partner) or straight into trust (`trust`: a bank deposit to a virtual account at
   * the trust bank, a stablecoin deposit to the custodian's wallet). See docs/SAFEGUARDING.md.
   */
  receivedInto?: 'rail_settlement' | 'trust' | undefined;
}

/**
 * Money a rail reports received for a wallet (a collection, a sandbox funding, a bank or on-chain deposit):
 * an inbound transfer posted from the account that received the money, the rail's settlement account or the
 * currency's trust account (`receivedInto`). A frozen wallet's credit is held for review instead.
 */
export async function creditFromRail(
  tx: Queryable,
  deps: Deps,
  wallet: Wallet,
  credit: RailCredit,
): Promise<Transfer> {
  const { organizationId } = wallet;
  const { amountMinor } = credit;
  const now = deps.now();
  const receivedBy = await receivingAccount(tx, deps, wallet, credit, now);
  // Decided on the wallet as locked now, not as read before: a freeze that just committed holds the credit.
  // The wallet and the receiving account are locked together, in the one order every movement takes.
  const session = new PostingSession(tx);
  await session.lock([wallet.id, receivedBy]);
  const release = session.release('collection', { destination: wallet.id });
  if (release.outcome === 'refuse') throw refusalError(release.refusal, 'funding', 'amount');
  const held = release.outcome === 'hold_for_review';
  const transfer = inboundTransfer(deps, wallet, credit, held, now);
  await insertTransfer(tx, transfer);
  const refusal = session.tryPost({
    id: deps.newId('journalEntry'),
    organizationId,
    transferId: transfer.id,
    kind: held ? 'hold' : 'direct',
    holdEntryId: null,
    createdAt: now,
    postings: (held ? holdPostings : directPostings)(receivedBy, wallet.id, amountMinor, wallet.currency),
  });
  if (refusal) throw refusalError(refusal, 'funding', 'amount');
  await session.flush(now);
  const events: EventRecord[] = [transferEvent(deps, 'transfer.created', transfer, now)];
  if (held) await holdCreditToFrozenWallet(tx, deps, transfer, wallet);
  else events.push(transferEvent(deps, 'transfer.settled', transfer, now));
  await recordEvents(tx, deps, events);
  return transfer;
}

/** Which rail a credit arrived on and where it was received (RailCredit). */
type RailReceipt = Pick<RailCredit, 'rail' | 'receivedInto'>;

/** The account that received the money: the currency's trust account, or the rail's settlement account. */
function receivingAccount(
  tx: Queryable,
  deps: Deps,
  wallet: Wallet,
  credit: RailReceipt,
  now: Date,
): Promise<string> {
  return credit.receivedInto === 'trust'
    ? trustLedgerAccount(tx, deps, wallet.organizationId, wallet.currency)
    : ensureSystemAccount(tx, {
        id: deps.newId('ledgerAccount'),
        organizationId: wallet.organizationId,
        kind: 'rail_settlement',
        rail: credit.rail,
        currency: wallet.currency,
        now,
      });
}

/** The inbound transfer's record: settled at once, or in review (its credit pending) for a frozen wallet. */
function inboundTransfer(deps: Deps, wallet: Wallet, credit: RailCredit, held: boolean, now: Date): Transfer {
  return {
    id: deps.newId('transfer'),
    organizationId: wallet.organizationId,
    direction: 'inbound',
    sourceWalletId: null,
    destination: { type: 'wallet', wallet: wallet.id },
    destinationWalletId: wallet.id,
    amountMinor: credit.amountMinor,
    currency: wallet.currency,
    rail: credit.rail,
    network: credit.network,
    status: held ? 'in_review' : 'settled',
    statusReason: held ? IN_REVIEW_STATUS_REASON : credit.statusReason,
    failureCode: null,
    ledgerState: held ? 'pending' : 'posted',
    metadata: credit.metadata,
    ...newTransferLife(now),
    railReference: credit.railReference,
    partnerReceipt: credit.partnerReceipt ?? null,
    processingAt: now,
    settledAt: held ? null : now,
  };
}

/** Opens the review case of a rail credit that arrived for a frozen wallet, with its evidence. */
async function holdCreditToFrozenWallet(tx: Queryable, deps: Deps, transfer: Transfer, wallet: Wallet) {
  const findings = {
    reason: 'credit_to_frozen_wallet',
    wallet_status_reason: wallet.statusReason,
    amount: formatAmount(transfer.amountMinor, transfer.currency),
    currency: transfer.currency,
  };
  await insertReviewCases(tx, [
    openReviewCase(
      {
        id: deps.newId('review'),
        organizationId: transfer.organizationId,
        kind: 'frozen_wallet',
        transferId: transfer.id,
        customerId: wallet.ownerId,
        walletId: wallet.id,
        findings,
      },
      transfer.createdAt,
    ),
  ]);
  await appendEvidence(tx, deps, [
    {
      organizationId: transfer.organizationId,
      kind: 'transfer.decision',
      actor: SYSTEM_ACTOR,
      transferId: transfer.id,
      walletId: wallet.id,
      customerId: wallet.ownerId,
      data: { outcome: 'review', ...findings },
    },
  ]);
}
