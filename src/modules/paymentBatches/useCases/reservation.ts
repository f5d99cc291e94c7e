/**
 * A batch's reservation on the ledger: a hold of what its items will take from the paying wallet (their
 * amounts and fees) on the organization's batch reserve account, released as chunks run or as the batch
 * ends; and a batch ended before it ran, its items failed and its hold released.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvents } from '../../../app/events.ts';
import type { Queryable } from '../../../store/store.ts';
import {
  ensureSystemAccount,
  findJournalEntry,
  holdPostings,
  type JournalEntry,
  PostingSession,
  refusalError,
  voidHoldPostings,
} from '../../ledger/index.ts';
import type { PaymentBatch, PaymentBatchItem } from '../domain.ts';
import { failPendingItems, savePaymentBatch } from '../repository.ts';
import { statusEvent } from './events.ts';

/** An item's fee in minor units (none on items submitted before fees). */
export function itemFeeMinor(item: PaymentBatchItem): bigint {
  return item.fee?.feeMinor ?? 0n;
}

/** What an item takes from the paying wallet: its amount and its fee. */
export function itemCostMinor(item: PaymentBatchItem): bigint {
  return item.amountMinor + itemFeeMinor(item);
}

/** The organization's batch reserve account in the batch's currency. */
export function reserveAccount(db: Queryable, deps: Deps, batch: PaymentBatch): Promise<string> {
  return ensureSystemAccount(db, {
    id: deps.newId('ledgerAccount'),
    organizationId: batch.organizationId,
    kind: 'payment_batch_reserve',
    rail: 'internal',
    currency: batch.currency,
    now: deps.now(),
  });
}

/** The hold of `amountMinor` on the paying wallet, in favour of the reserve account. */
export function reservationEntry(
  deps: Deps,
  batch: PaymentBatch,
  reserve: string,
  amountMinor: bigint,
  now: Date,
): JournalEntry {
  return {
    id: deps.newId('journalEntry'),
    organizationId: batch.organizationId,
    transferId: null,
    kind: 'hold',
    holdEntryId: null,
    createdAt: now,
    postings: holdPostings(batch.sourceWalletId, reserve, amountMinor, batch.currency),
  };
}

/** The entry that voids a hold whole. */
export function releaseEntry(deps: Deps, hold: JournalEntry, now: Date): JournalEntry {
  return {
    id: deps.newId('journalEntry'),
    organizationId: hold.organizationId,
    transferId: null,
    kind: 'void',
    holdEntryId: hold.id,
    createdAt: now,
    postings: voidHoldPostings(hold.postings),
  };
}

/** Releases whatever the batch still holds, in the caller's transaction (the batch row is locked). */
export async function releaseReservation(
  tx: Queryable,
  deps: Deps,
  batch: PaymentBatch,
  now: Date,
): Promise<PaymentBatch> {
  if (batch.reservationEntryId === null) return batch;
  const hold = await findJournalEntry(tx, batch.reservationEntryId);
  if (!hold) throw new Error(`reservation ${batch.reservationEntryId} of ${batch.id} is missing`);
  const session = new PostingSession(tx);
  await session.lock(hold.postings.map((p) => p.accountId));
  const refusal = session.tryPost(releaseEntry(deps, hold, now));
  if (refusal) throw refusalError(refusal, 'batch release');
  await session.flush(now);
  return { ...batch, reservationEntryId: null, reservedMinor: 0n };
}

/**
 * Ends a batch whose hold is released, as `ending` says (its final status and counts), finished now; saves it
 * and records its status event.
 */
export async function endReleasedBatch(
  tx: Queryable,
  deps: Deps,
  released: PaymentBatch,
  ending: Pick<PaymentBatch, 'status'> & Partial<PaymentBatch>,
  now: Date,
): Promise<PaymentBatch> {
  const ended: PaymentBatch = { ...released, ...ending, updatedAt: now, finishedAt: now };
  await savePaymentBatch(tx, ended);
  await recordEvents(tx, deps, [statusEvent(deps, ended, now)]);
  return ended;
}

/** Ends a batch that never ran: its items failed with one reason, whatever it held released. */
export async function refuseBatch(
  tx: Queryable,
  deps: Deps,
  batch: PaymentBatch,
  code: string,
  detail: string,
  now: Date,
): Promise<PaymentBatch> {
  const released = await releaseReservation(tx, deps, batch, now);
  const failed = await failPendingItems(tx, batch.id, code, detail, now);
  return endReleasedBatch(
    tx,
    deps,
    released,
    { status: 'failed', failureCode: code, failedCount: released.failedCount + failed },
    now,
  );
}
