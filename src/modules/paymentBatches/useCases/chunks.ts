/**
 * Running a processing batch chunk by chunk, each chunk one transaction of the ledger writer: the
 * reservation is released, the chunk's items become ordinary transfers, and what is still to pay is
 * reserved again. Items carry their own idempotency keys, and a chunk's items, transfers, entries and the
 * batch's counters commit together, so a killed process resumes where it stopped.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvents } from '../../../app/events.ts';
import { AppError } from '../../../domain/errors.ts';
import { requestFingerprint } from '../../../domain/idempotency.ts';
import { formatAmount } from '../../../domain/money.ts';
import type { Queryable } from '../../../store/store.ts';
import { findJournalEntry, type JournalEntry, refusalError } from '../../ledger/index.ts';
import type { ChunkResult, LedgerWriter, TransferCommand } from '../../transfers/index.ts';
import { prepareTransfer } from '../../transfers/index.ts';
import { findWallets } from '../../wallets/index.ts';
import {
  finishedStatus,
  PAYMENT_BATCH_CHUNK_ITEMS,
  type PaymentBatch,
  type PaymentBatchItem,
} from '../domain.ts';
import {
  failPendingItems,
  findPaymentBatch,
  hasPendingItems,
  nextPendingItems,
  saveItemOutcomes,
  savePaymentBatch,
} from '../repository.ts';
import { statusEvent } from './events.ts';
import { itemCostMinor, releaseEntry, reservationEntry, reserveAccount } from './reservation.ts';

/** The idempotency key of an item's transfer: the batch and the item's reference. */
export function itemIdempotencyKey(batchId: string, reference: string): string {
  return `${batchId}/${reference}`;
}

/** A chunk's items as the writer's transfer commands, and the items refused before they could run, with why. */
interface PreparedChunk {
  commands: TransferCommand[];
  commandItems: PaymentBatchItem[];
  refused: { item: PaymentBatchItem; error: AppError }[];
}

/** Prepares each item of a chunk as the transfer it becomes, with the fee decided when it was submitted. */
async function prepareChunk(
  deps: Deps,
  organizationId: string,
  batch: PaymentBatch,
  items: readonly PaymentBatchItem[],
): Promise<PreparedChunk> {
  const commands: TransferCommand[] = [];
  const commandItems: PaymentBatchItem[] = [];
  const refused: { item: PaymentBatchItem; error: AppError }[] = [];
  const path = `/v1/payment-batches/${batch.id}/items`;
  // The chunk's wallets with one read, and each rail's clearing account once, for every item's preparation.
  const shared = {
    wallets: await findWallets(deps.store, organizationId, [
      batch.sourceWalletId,
      ...items.flatMap((item) => (item.destinationWalletId ? [item.destinationWalletId] : [])),
    ]),
    clearingAccounts: new Map<string, string>(),
  };
  const approved = batch.approvalId !== null ? batch.approvalId : undefined;
  for (const item of items) {
    const request = {
      source: batch.sourceWalletId,
      destination: item.destination as never,
      amount: formatAmount(item.amountMinor, batch.currency),
      currency: batch.currency,
      metadata: { ...item.metadata, payment_batch: batch.id, batch_item: item.reference },
    };
    try {
      const command = await prepareTransfer(
        deps,
        organizationId,
        request,
        {
          organizationId,
          key: itemIdempotencyKey(batch.id, item.reference),
          method: 'POST',
          path,
          fingerprint: requestFingerprint('POST', path, request),
          requestId: deps.newId('request'),
        },
        (t) => ({ id: t.id, status: t.status }),
        batch.createdBy,
        shared,
        // The fee decided at submission, which the batch's hold covers (none on items from before fees).
        item.fee,
      );
      commands.push({ ...command, coveredByApproval: approved, released: 'payment_batch_item' });
      commandItems.push(item);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      refused.push({ item, error });
    }
  }
  return { commands, commandItems, refused };
}

/** What became of each item of a chunk: the writer's results in command order, then the items refused. */
function chunkOutcomes(
  prepared: PreparedChunk,
  results: ChunkResult[],
  now: Date,
): { outcomes: PaymentBatchItem[]; succeeded: number; failed: number } {
  const { commandItems, refused } = prepared;
  const outcomes: PaymentBatchItem[] = [];
  let succeeded = 0;
  let failed = 0;
  results.forEach((result, i) => {
    const item = commandItems[i] as PaymentBatchItem;
    const transferId = result.transfer?.id ?? createdTransferId(result);
    if (transferId) {
      succeeded++;
      outcomes.push({ ...item, status: 'succeeded', transferId, updatedAt: now });
    } else {
      failed++;
      const error = result.outcome instanceof AppError ? result.outcome : undefined;
      outcomes.push({
        ...item,
        status: 'failed',
        failureCode: error?.code ?? problemCodeOf(result) ?? 'internal_error',
        failureDetail: error?.detail ?? problemDetailOf(result) ?? null,
        updatedAt: now,
      });
    }
  });
  for (const { item, error } of refused) {
    failed++;
    outcomes.push({
      ...item,
      status: 'failed',
      failureCode: error.code,
      failureDetail: error.detail,
      updatedAt: now,
    });
  }
  return { outcomes, succeeded, failed };
}

/** What a chunk's transaction carries from one of the writer's steps to the next. */
interface ChunkState {
  batch: PaymentBatch;
  hold?: JournalEntry;
  next?: JournalEntry | null;
  stuck?: AppError;
}

/**
 * Records a chunk in its transaction: the items' outcomes, the batch's counters and what it holds now; when
 * the wallet could not hold the rest, the rest fails; a batch with nothing pending finishes.
 */
async function recordChunk(
  tx: Queryable,
  deps: Deps,
  state: ChunkState,
  chunkMinor: bigint,
  outcomes: ReturnType<typeof chunkOutcomes>,
  now: Date,
): Promise<PaymentBatch> {
  const { succeeded, failed } = outcomes;
  await saveItemOutcomes(tx, outcomes.outcomes);
  let next: PaymentBatch = {
    ...state.batch,
    succeededCount: state.batch.succeededCount + succeeded,
    failedCount: state.batch.failedCount + failed,
    reservationEntryId: state.next?.id ?? null,
    reservedMinor: state.next ? state.batch.reservedMinor - chunkMinor : 0n,
    updatedAt: now,
  };
  if (state.stuck) {
    // The wallet can no longer hold what is still to pay (frozen meanwhile): the rest fails.
    const rest = await failPendingItems(tx, next.id, state.stuck.code, state.stuck.detail, now);
    next = { ...next, failedCount: next.failedCount + rest };
  }
  if (!(await hasPendingItems(tx, next.id))) {
    next = {
      ...next,
      status: finishedStatus({
        succeeded: next.succeededCount,
        failed: next.failedCount,
        canceled: next.canceledCount,
      }),
      finishedAt: now,
    };
  }
  await savePaymentBatch(tx, next);
  if (next.status !== 'processing') await recordEvents(tx, deps, [statusEvent(deps, next, now)]);
  return next;
}

/** Runs the next chunk of a processing batch; returns false once nothing is left to run. */
export async function runNextChunk(
  deps: Deps,
  writer: LedgerWriter,
  organizationId: string,
  id: string,
): Promise<boolean> {
  const batch = await findPaymentBatch(deps.store, organizationId, id);
  if (batch?.status !== 'processing') return false;
  const items = await nextPendingItems(deps.store, id, PAYMENT_BATCH_CHUNK_ITEMS);
  if (items.length === 0) return false;
  const prepared = await prepareChunk(deps, organizationId, batch, items);
  const chunkMinor = items.reduce((sum, item) => sum + itemCostMinor(item), 0n);
  const reserve = await reserveAccount(deps.store, deps, batch);
  let state: ChunkState = { batch };
  await writer
    .runChunk(prepared.commands, {
      accounts: [batch.sourceWalletId, reserve],
      async lockFirst(tx) {
        const locked = await findPaymentBatch(tx, organizationId, id, { forUpdate: true });
        if (locked?.status !== 'processing') throw new ChunkSuperseded();
        const hold =
          locked.reservationEntryId === null
            ? undefined
            : await findJournalEntry(tx, locked.reservationEntryId);
        state = { batch: locked, ...(hold ? { hold } : {}) };
      },
      beforeDecide(session, now) {
        if (state.hold) {
          const refusal = session.tryPost(releaseEntry(deps, state.hold, now));
          if (refusal) throw refusalError(refusal, 'batch release');
        }
      },
      afterDecide(session, _results, now) {
        const remaining = state.batch.reservedMinor - chunkMinor;
        if (remaining <= 0n) {
          state.next = null;
          return;
        }
        const entry = reservationEntry(deps, state.batch, reserve, remaining, now);
        const refusal = session.tryPost(entry);
        if (refusal) state.stuck = refusalError(refusal, 'batch');
        state.next = refusal ? null : entry;
      },
      async record(tx, results: ChunkResult[], now) {
        state.batch = await recordChunk(
          tx,
          deps,
          state,
          chunkMinor,
          chunkOutcomes(prepared, results, now),
          now,
        );
      },
    })
    .catch((error: unknown) => {
      if (!(error instanceof ChunkSuperseded)) throw error;
    });
  return state.batch.status === 'processing';
}

/** Thrown inside a chunk's transaction when the batch left `processing` meanwhile (a cancel won). */
class ChunkSuperseded extends Error {}

/** The transfer id a replayed outcome (the item ran before, its key answered) names. */
function createdTransferId(result: ChunkResult): string | undefined {
  if (result.outcome instanceof AppError || result.outcome.status !== 201) return undefined;
  return (JSON.parse(result.outcome.text) as { id?: string }).id;
}

/** The problem code an item's failed outcome carries. */
function problemCodeOf(result: ChunkResult): string | undefined {
  if (result.outcome instanceof AppError) return result.outcome.code;
  return (JSON.parse(result.outcome.text) as { code?: string }).code;
}

/** The problem detail an item's failed outcome carries. */
function problemDetailOf(result: ChunkResult): string | undefined {
  if (result.outcome instanceof AppError) return result.outcome.detail;
  return (JSON.parse(result.outcome.text) as { detail?: string }).detail;
}
