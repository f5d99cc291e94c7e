/** Event types, payloads and the envelope (the spec's section 2.4, spelling 1: snake_case). */
import type { Environment } from './apiKeys.ts';
import { formatAmount } from './money.ts';
import type { Transfer } from './transferRecord.ts';
import { API_VERSION } from './version.ts';

export const TRANSFER_EVENT_TYPES = [
  'transfer.created',
  'transfer.processing',
  'transfer.settled',
  'transfer.failed',
  'transfer.canceled',
  'transfer.returned',
] as const;
export const EVENT_TYPES = [
  ...TRANSFER_EVENT_TYPES,
  'approval.updated',
  'ledger.matched',
  'webhook_subscription.disabled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export type TransferEventType = (typeof TRANSFER_EVENT_TYPES)[number];

/** The product family named in every event (spec 2.4 `product`). */
export const PRODUCT_NAME = 'mkoba';

/** An outbox row: written in the transaction of the change it announces, never changed afterwards. */
export interface EventRecord {
  id: string;
  organizationId: string;
  type: string;
  /** The object the event is about (a transfer id for transfer events). */
  resourceId: string | null;
  /** The resource as it stood when the event was written. */
  data: Record<string, unknown>;
  createdAt: Date;
}

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

/** The one wire form of an event: what `GET /v1/events` returns and what a webhook delivery carries. */
export interface EventEnvelope {
  id: string;
  object: 'event';
  type: string;
  created_at: string;
  environment: Environment;
  product: string;
  api_version: string;
  data: Record<string, unknown>;
}

/**
 * Wraps a stored event for the wire. The environment is the deployment's (a deployment serves one), so
 * it is not stored per row; the API version is the one that renders the event.
 */
export function eventEnvelope(event: EventRecord, environment: Environment): EventEnvelope {
  return {
    id: event.id,
    object: 'event',
    type: event.type,
    created_at: event.createdAt.toISOString(),
    environment,
    product: PRODUCT_NAME,
    api_version: API_VERSION,
    data: event.data,
  };
}
