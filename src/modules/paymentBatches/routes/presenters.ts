/** Payment batches and their items in their wire form, for the API and the console. */
import { formatAmount } from '../../../domain/money.ts';
import { isoOrNull } from '../../../http/presenters.ts';
import type { PaymentBatch, PaymentBatchItem } from '../domain.ts';
import { paymentBatchEventData } from '../useCases/events.ts';

export function presentPaymentBatch(b: PaymentBatch) {
  const data = paymentBatchEventData(b);
  return {
    object: 'payment_batch',
    id: b.id,
    reference: b.reference,
    status: b.status,
    failure_code: b.failureCode,
    source: b.sourceWalletId,
    currency: b.currency,
    total: data.total,
    fees: formatAmount(b.feeTotalMinor, b.currency),
    reserved: formatAmount(b.reservedMinor, b.currency),
    items: b.itemCount,
    succeeded: b.succeededCount,
    failed: b.failedCount,
    canceled: b.canceledCount,
    authorization: b.authorization && {
      decision: b.authorization.decision,
      policy_version: b.authorization.policyVersion,
      rule: b.authorization.rule,
    },
    approval: b.approvalId,
    created_by: b.createdBy,
    metadata: b.metadata,
    created_at: b.createdAt.toISOString(),
    updated_at: b.updatedAt.toISOString(),
    finished_at: isoOrNull(b.finishedAt),
  };
}

export function presentItem(currency: PaymentBatch['currency']) {
  return (item: PaymentBatchItem) => ({
    object: 'payment_batch_item',
    row: item.position,
    reference: item.reference,
    status: item.status,
    destination: item.destination,
    rail: item.rail,
    amount: formatAmount(item.amountMinor, currency),
    fee: formatAmount(item.fee?.feeMinor ?? 0n, currency),
    transfer: item.transferId,
    failure_code: item.failureCode,
    failure_detail: item.failureDetail,
    metadata: item.metadata,
    updated_at: item.updatedAt.toISOString(),
  });
}
