/** A payment batch's events: `payment_batch.created`, and one for each status it moves to. */

import type { Deps } from '../../../app/deps.ts';
import { newEvent } from '../../../app/events.ts';
import type { EventRecord } from '../../../domain/events.ts';
import { formatAmount } from '../../../domain/money.ts';
import type { PaymentBatch } from '../domain.ts';

/** The `data` of a `payment_batch.*` event. */
export function paymentBatchEventData(b: PaymentBatch): Record<string, unknown> {
  return {
    payment_batch_id: b.id,
    reference: b.reference,
    status: b.status,
    failure_code: b.failureCode,
    source: b.sourceWalletId,
    currency: b.currency,
    total: formatAmount(b.totalMinor, b.currency),
    items: b.itemCount,
    succeeded: b.succeededCount,
    failed: b.failedCount,
    canceled: b.canceledCount,
    approval: b.approvalId,
  };
}

/** A batch event of the type given, carrying the batch as it now stands. */
export function batchEvent(deps: Deps, batch: PaymentBatch, type: string, now: Date): EventRecord {
  return newEvent(
    deps,
    {
      organizationId: batch.organizationId,
      type,
      resourceId: batch.id,
      data: paymentBatchEventData(batch),
    },
    now,
  );
}

/** The event of the status the batch has just moved to: `payment_batch.<status>`. */
export const statusEvent = (deps: Deps, batch: PaymentBatch, now: Date) =>
  batchEvent(deps, batch, `payment_batch.${batch.status}`, now);
