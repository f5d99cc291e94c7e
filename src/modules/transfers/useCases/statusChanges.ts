/**
 * A transfer's status changes: each one through the one transition function, with its ledger effect (settle
 * posts the hold, fail and cancel void it, return reverses a settled transfer), and money that waited passed
 * through the release gate again first. A cancel on request is one such change.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvents, statusEvent } from '../../../app/events.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import { lockById } from '../../../app/reads.ts';
import { limitBasisOf, limitPeriods } from '../../../domain/decisions/limits.ts';
import { invalidStateTransition, validationError } from '../../../domain/errors.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import { feeOf, type Transfer } from '../../../domain/transferRecord.ts';
import {
  type LedgerState,
  releasedMovement,
  type TransferStatus,
  transition,
} from '../../../domain/transfers.ts';
import type { NetworkFee } from '../../../rails/rail.ts';
import { releaseLimitUsage } from '../../../store/repositories/limitUsage.ts';
import type { Queryable } from '../../../store/store.ts';
import { cancelApprovalOf } from '../../authorization/index.ts';
import { feeIncomeAccount } from '../../fees/index.ts';
import {
  ensureSystemAccount,
  findOpenHold,
  type JournalEntry,
  PostingSession,
  postHoldPostings,
  refusalError,
  reversalPostings,
  voidHoldPostings,
} from '../../ledger/index.ts';
import { findTransfer, saveTransfer } from '../repository.ts';
import { releasePilotCap } from './posting/pilotCapGuard.ts';
import { passReleaseGate } from './releaseGate.ts';

export interface StatusChange {
  to: TransferStatus;
  failureCode?: string | undefined;
  reason?: string | undefined;
  /** When the rail should be asked again; null takes the transfer off the rail queue. */
  nextRailCheckAt?: Date | null | undefined;
  railReference?: string | undefined;
  /** The partner's receipt for the money moved, when the partner reports one. */
  partnerReceipt?: string | undefined;
  /** The approval it now waits for. */
  approvalId?: string | undefined;
  /** A settling payout's network fee, as its partner reported it: booked once through `Deps.payoutNetworkFee`. */
  networkFee?: NetworkFee | undefined;
}

/** The statuses that close a transfer's open hold: settle posts it, the others void it. */
const CLOSING_STATUSES: ReadonlySet<TransferStatus> = new Set([
  'settled',
  'failed',
  'canceled',
  'rejected',
  'expired',
]);

/**
 * Moves a locked transfer to a new status through the one transition function, with its ledger effect:
 * settle posts the hold, fail and cancel void it, return reverses a settled transfer. Writes the
 * transfer, entries, account sums and the event in the caller's transaction. Every account the change may
 * touch (the wallets the release gate decides on, the accounts of the hold or of the return, those a settling
 * payout's network fee posts to) is locked with one statement, in id order, before any decision: locking the
 * wallets first and the rail's clearing account after deadlocked with a ledger writer batch holding that
 * clearing account and waiting for the wallet (src/store/lockOrder.ts).
 */
export async function applyStatusChange(
  tx: Queryable,
  deps: Deps,
  transfer: Transfer,
  requested: StatusChange,
): Promise<Transfer> {
  const now = deps.now();
  const movement = releasedMovement(transfer.status, requested.to);
  // A return is checked before its entry is made (the entry may create the rail's clearing account).
  if (requested.to === 'returned') transition(transfer.status, requested.to);
  const returning = requested.to === 'returned' ? await returnEntry(tx, deps, transfer, now) : undefined;
  // The release gate may turn a change into a failure, which closes the hold: its accounts are locked too.
  const hold =
    movement !== undefined || CLOSING_STATUSES.has(requested.to)
      ? await findOpenHold(tx, transfer.id)
      : undefined;
  const gateWallets = movement
    ? [transfer.sourceWalletId, transfer.destinationWalletId].filter((id): id is string => id !== null)
    : [];
  const networkFee = await prepareNetworkFee(tx, deps, transfer, requested);
  const session = new PostingSession(tx);
  const accounts = new Set([
    ...gateWallets,
    ...(hold?.postings ?? []).map((p) => p.accountId),
    ...(returning?.postings ?? []).map((p) => p.accountId),
    ...(networkFee?.accounts ?? []),
  ]);
  if (accounts.size > 0) await session.lock([...accounts]);

  const gated = movement ? await passReleaseGate(tx, deps, session, transfer, movement) : undefined;
  const effective = gated?.change ?? requested;
  const refused = gated?.refused;
  const to = transition(transfer.status, effective.to);
  let ledgerState = transfer.ledgerState;
  let entry: JournalEntry | undefined;
  if (CLOSING_STATUSES.has(to) && hold) {
    entry = holdClosingEntry(deps, transfer, hold, to === 'settled', now);
    ledgerState = to === 'settled' ? 'posted' : 'voided';
  } else if (to === 'returned') {
    entry = returning;
  }
  if (entry) {
    const refusal = session.tryPost(entry);
    if (refusal) throw refusalError(refusal, to === 'returned' ? 'return' : 'change');
    await session.flush(now);
  }
  // Only the change that settles it books the fee: a repeated or late report finds the transfer settled.
  if (to === 'settled') await networkFee?.book();
  // A transfer that moved no money gives its amount back to its customer's tier limits.
  if (
    (to === 'failed' || to === 'canceled' || to === 'rejected' || to === 'expired') &&
    transfer.sourceWalletId
  ) {
    await giveBackLimits(tx, deps, transfer, transfer.sourceWalletId);
  }

  const updated = changedTransfer(transfer, to, ledgerState, effective, now);
  await saveTransfer(tx, updated);
  await recordEvents(tx, deps, statusEvent(deps, updated, now));
  // Evidence last: the chain head is the last lock a money movement takes (src/store/lockOrder.ts).
  if (refused) await appendEvidence(tx, deps, [refused]);
  return updated;
}

/**
 * A settling change's network fee, prepared before the change locks: the accounts its booking posts to are
 * locked with the change's own, in one statement (src/store/lockOrder.ts). Booked only if the change settles.
 */
function prepareNetworkFee(tx: Queryable, deps: Deps, transfer: Transfer, requested: StatusChange) {
  const partnerTransactionId = requested.railReference ?? transfer.railReference;
  if (requested.to !== 'settled' || !requested.networkFee || !partnerTransactionId) return undefined;
  return deps.payoutNetworkFee(tx, deps, transfer, requested.networkFee, partnerTransactionId);
}

/** The entry that posts (settle) or voids (any other end) a transfer's open hold. */
function holdClosingEntry(
  deps: Deps,
  transfer: Transfer,
  hold: JournalEntry,
  settle: boolean,
  now: Date,
): JournalEntry {
  return {
    id: deps.newId('journalEntry'),
    organizationId: transfer.organizationId,
    transferId: transfer.id,
    kind: settle ? 'post' : 'void',
    holdEntryId: hold.id,
    createdAt: now,
    postings: settle ? postHoldPostings(hold.postings) : voidHoldPostings(hold.postings),
  };
}

/** The reversal of a returned transfer. */
async function returnEntry(tx: Queryable, deps: Deps, transfer: Transfer, now: Date): Promise<JournalEntry> {
  const walletId = transfer.sourceWalletId;
  if (!walletId) throw validationError('id', 'only outbound transfers can be returned', 'not_returnable');
  // A return gives the money back: the rail (or the destination wallet) pays the source wallet again, and
  // the fee comes back with it (docs/FEES.md). Only a rail transfer touches the rail's clearing account,
  // so only it may create one.
  const from =
    transfer.destinationWalletId ??
    (await ensureSystemAccount(tx, {
      id: deps.newId('ledgerAccount'),
      organizationId: transfer.organizationId,
      kind: 'rail_clearing',
      rail: transfer.rail,
      currency: transfer.currency,
      now,
    }));
  return {
    id: deps.newId('journalEntry'),
    organizationId: transfer.organizationId,
    transferId: transfer.id,
    kind: 'reversal',
    holdEntryId: null,
    createdAt: now,
    postings: reversalPostings(
      from,
      walletId,
      transfer.amountMinor,
      transfer.currency,
      feeOf(transfer) > 0n
        ? {
            accountId: await feeIncomeAccount(deps, tx, transfer.organizationId, transfer.currency),
            amountMinor: feeOf(transfer),
          }
        : undefined,
    ),
  };
}

/** Gives a transfer that moved no money back to its wallet's tier limits and a pilot's caps. */
async function giveBackLimits(tx: Queryable, deps: Deps, transfer: Transfer, sourceWalletId: string) {
  // Counted at its limit basis (a stablecoin at its USD equivalent), so given back the same way.
  const basis = limitBasisOf(transfer.currency, transfer.amountMinor);
  if (basis) {
    await releaseLimitUsage(
      tx,
      sourceWalletId,
      basis.currency,
      basis.amountMinor,
      limitPeriods(transfer.createdAt),
    );
  }
  await releasePilotCap(tx, deps, transfer);
}

/** The transfer as the change leaves it: its status, ledger state, reason and the time of the change. */
function changedTransfer(
  transfer: Transfer,
  to: TransferStatus,
  ledgerState: LedgerState,
  change: StatusChange,
  now: Date,
): Transfer {
  return {
    ...transfer,
    status: to,
    ledgerState,
    failureCode: change.failureCode ?? (to === 'failed' ? 'rail_error' : transfer.failureCode),
    statusReason: change.reason ?? null,
    railReference: change.railReference ?? transfer.railReference,
    partnerReceipt: change.partnerReceipt ?? transfer.partnerReceipt,
    approvalId: change.approvalId ?? transfer.approvalId,
    nextRailCheckAt: change.nextRailCheckAt === undefined ? null : change.nextRailCheckAt,
    updatedAt: now,
    processingAt: to === 'processing' ? now : transfer.processingAt,
    settledAt: to === 'settled' ? now : transfer.settledAt,
    failedAt: to === 'failed' ? now : transfer.failedAt,
    canceledAt: to === 'canceled' ? now : transfer.canceledAt,
    returnedAt: to === 'returned' ? now : transfer.returnedAt,
  };
}

/** Loads and locks a transfer for a status change, or 404s. */
export const lockTransfer = lockById<Transfer>(findTransfer, 'transfer');

export async function cancelTransfer(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  actor: EvidenceActor = SYSTEM_ACTOR,
): Promise<Transfer> {
  const transfer = await lockTransfer(tx, organizationId, id);
  if (transfer.status !== 'pending' && transfer.status !== 'pending_approval') {
    throw invalidStateTransition(
      'Too late to cancel',
      `A ${transfer.status} transfer has been handed to the rail (or finished) and can no longer be canceled.`,
    );
  }
  const canceled = await applyStatusChange(tx, deps, transfer, {
    to: 'canceled',
    reason: 'canceled_by_request',
  });
  // After the hold is released: the approval's evidence takes the chain head, the last lock of the order.
  if (transfer.status === 'pending_approval') await cancelApprovalOf(tx, deps, transfer.id, actor);
  return canceled;
}
