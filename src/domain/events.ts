/** Event types and payloads (the spec's section 2.4, spelling 1: snake_case). */
import { formatAmount } from './money.ts';
import type { Transfer } from './transferRecord.ts';

export const TRANSFER_EVENT_TYPES = [
  'transfer.created',
  'transfer.processing',
  'transfer.settled',
  'transfer.failed',
  'transfer.canceled',
  'transfer.returned',
] as const;
export const EVENT_TYPES = [...TRANSFER_EVENT_TYPES, 'approval.updated', 'ledger.matched'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export type TransferEventType = (typeof TRANSFER_EVENT_TYPES)[number];

/** The product family named in every event (spec 2.4 `product`). */
export const PRODUCT_NAME = 'mkoba';

export const TRANSFER_EVENT_BY_STATUS: Partial<Record<Transfer['status'], TransferEventType>> = {
  processing: 'transfer.processing',
  settled: 'transfer.settled',
  failed: 'transfer.failed',
  canceled: 'transfer.canceled',
  returned: 'transfer.returned',
};

export function transferEventData(t: Transfer): Record<string, unknown> {
  return {
    transfer_id: t.id,
    status: t.status,
    rail: t.rail,
    ledger_state: t.ledgerState,
    amount: formatAmount(t.amountMinor, t.currency),
    currency: t.currency,
    direction: t.direction,
    source: t.sourceWalletId,
    destination: t.destination,
    failure_code: t.failureCode,
    metadata: t.metadata,
  };
}
