/**
 * Payment batches: many payouts from one wallet, submitted at once (submit.ts), authorized and held as a
 * whole (authorize.ts), run in chunks through the ledger writer (chunks.ts, worker.ts). This file holds a
 * batch's reads, its cancel, and its approval's decision: each takes the batch's lock before its
 * reservation's accounts.
 */

import { rowLockedApprovableResource } from '../../../app/approvableResources.ts';
import type { Deps } from '../../../app/deps.ts';
import { recordEvents } from '../../../app/events.ts';
import { getById, listPage, lockById } from '../../../app/reads.ts';
import type { Approval } from '../../../domain/approvals.ts';
import { invalidStateTransition } from '../../../domain/errors.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import type { Queryable } from '../../../store/store.ts';
import { cancelApprovalOf } from '../../authorization/index.ts';
import {
  isFinishedBatch,
  type PaymentBatch,
  type PaymentBatchItem,
  type PaymentBatchStatus,
} from '../domain.ts';
import {
  type BatchFilter,
  cancelPendingItems,
  findPaymentBatch,
  type ItemFilter,
  listItems,
  listPaymentBatches,
  savePaymentBatch,
} from '../repository.ts';
import { statusEvent } from './events.ts';
import { endReleasedBatch, refuseBatch, releaseReservation } from './reservation.ts';

export const getPaymentBatch = getById<PaymentBatch>(findPaymentBatch, 'payment batch');

export const listBatches = listPage<BatchFilter, PaymentBatch>(listPaymentBatches);

export async function listBatchItems(
  deps: Deps,
  organizationId: string,
  id: string,
  request: { limit: number } & ItemFilter,
): Promise<{ data: PaymentBatchItem[]; hasMore: boolean }> {
  await getPaymentBatch(deps, organizationId, id);
  const rows = await listItems(deps.store, id, request, request.limit + 1);
  return { data: rows.slice(0, request.limit), hasMore: rows.length > request.limit };
}

const lockPaymentBatch = lockById(findPaymentBatch, 'payment batch');

/** Cancels a batch that has not finished: pending items are canceled and what it holds is released. */
export async function cancelPaymentBatch(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  actor: EvidenceActor,
): Promise<PaymentBatch> {
  const batch = await lockPaymentBatch(tx, organizationId, id);
  if (isFinishedBatch(batch.status)) {
    throw invalidStateTransition(
      'Batch finished',
      `Payment batch ${batch.id} is ${batch.status}; only a batch still running can be canceled.`,
    );
  }
  const now = deps.now();
  const released = await releaseReservation(tx, deps, batch, now);
  // After the hold is released: the approval's evidence takes the chain head, the last lock of the order.
  if (batch.status === 'pending_approval') await cancelApprovalOf(tx, deps, batch.id, actor);
  const canceled = await cancelPendingItems(tx, batch.id, now);
  return endReleasedBatch(
    tx,
    deps,
    released,
    { status: 'canceled', canceledCount: released.canceledCount + canceled },
    now,
  );
}

/** A batch's approval was decided (the caller holds the batch's lock): it runs, or it ends releasing its hold. */
export async function decideBatchApproval(
  tx: Queryable,
  deps: Deps,
  approval: Approval,
): Promise<PaymentBatchStatus | null> {
  const batch = await findPaymentBatch(tx, approval.organizationId, approval.resourceId);
  if (batch?.status !== 'pending_approval') return batch?.status ?? null;
  const now = deps.now();
  if (approval.status === 'approved') {
    const running: PaymentBatch = { ...batch, status: 'processing', updatedAt: now };
    await savePaymentBatch(tx, running);
    await recordEvents(tx, deps, [statusEvent(deps, running, now)]);
    return running.status;
  }
  const code = approval.status === 'expired' ? 'approval_expired' : 'approval_rejected';
  const ended = await refuseBatch(tx, deps, batch, code, `the batch's approval was ${approval.status}`, now);
  return ended.status;
}

/** A payment batch as an approval's resource. */
export const PAYMENT_BATCH_APPROVALS = rowLockedApprovableResource(
  'payment_batch',
  findPaymentBatch,
  decideBatchApproval,
);
