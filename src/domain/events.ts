/** Event types, payloads and the envelope (the spec's section 2.4, spelling 1: snake_case). */
import type { Environment } from './access.ts';
import { CONVERSION_EVENT_TYPES } from './conversions.ts';
import { formatAmount } from './money.ts';
import {
  PAYLOAD_VERSION_LATEST,
  type PayloadVersion,
  productOfEvent,
  renderPayloadVersion,
} from './payloadVersions.ts';
import { DEPOSIT_EVENT_TYPES } from './stablecoins.ts';
import { feeOf, type Transfer } from './transferRecord.ts';
import type { Wallet } from './wallets.ts';
import { type PayloadFormat, toCamelCase } from './webhooks.ts';

export const TRANSFER_EVENT_TYPES = [
  'transfer.created',
  'transfer.processing',
  'transfer.settled',
  'transfer.failed',
  'transfer.canceled',
  'transfer.returned',
  'transfer.rejected',
  'transfer.expired',
] as const;
/** A wallet frozen or unfrozen by an operator, or closed; its metadata changed. */
export const WALLET_EVENT_TYPES = [
  'wallet.frozen',
  'wallet.unfrozen',
  'wallet.closed',
  'wallet.updated',
] as const;
/** A customer's verification changed status (submitted, decided); its details changed. */
export const CUSTOMER_EVENT_TYPES = ['customer.verification.updated', 'customer.updated'] as const;
/** An AML rule opened an alert; an operator resolved one. */
export const AML_ALERT_EVENT_TYPES = ['aml.alert.opened', 'aml.alert.resolved'] as const;
/** A payment batch was accepted, and each status it moved to after. */
export const PAYMENT_BATCH_EVENT_TYPES = [
  'payment_batch.created',
  'payment_batch.pending_approval',
  'payment_batch.processing',
  'payment_batch.completed',
  'payment_batch.partially_failed',
  'payment_batch.failed',
  'payment_batch.canceled',
] as const;
/** A savings account opened, a withdrawal notice given, a withdrawal made, a month's interest capitalised. */
export const SAVINGS_EVENT_TYPES = [
  'savings.account.opened',
  'savings.notice.given',
  'savings.withdrawal.completed',
  'savings.interest.capitalized',
] as const;
/** Money asked of a payer, from the request to the rail's answer. */
export const COLLECTION_EVENT_TYPES = [
  'collection.created',
  'collection.processing',
  'collection.succeeded',
  'collection.failed',
] as const;

/** A loan's life, from application to paid off or written off. */
export const LOAN_EVENT_TYPES = [
  'loan.applied',
  'loan.approved',
  'loan.rejected',
  'loan.canceled',
  'loan.disbursed',
  'loan.repayment_received',
  'loan.overdue',
  'loan.paid_off',
  'loan.written_off',
] as const;

export const EVENT_TYPES = [
  ...TRANSFER_EVENT_TYPES,
  ...WALLET_EVENT_TYPES,
  ...CUSTOMER_EVENT_TYPES,
  ...AML_ALERT_EVENT_TYPES,
  ...PAYMENT_BATCH_EVENT_TYPES,
  ...COLLECTION_EVENT_TYPES,
  ...DEPOSIT_EVENT_TYPES,
  ...CONVERSION_EVENT_TYPES,
  ...LOAN_EVENT_TYPES,
  'approval.updated',
  'policy.updated',
  'fee_schedule.updated',
  'export.ready',
  'export.failed',
  'ledger.matched',
  'reconciliation.statement.imported',
  'reconciliation.exception.opened',
  'reconciliation.exception.resolved',
  'webhook_subscription.disabled',
  'rail_partner.paused',
  'rail_partner.resumed',
  'rail_reversal.updated',
  'safeguarding.shortfall',
  'test_clock.advanced',
  'safeguarding.sweep.recorded',
  'launch_gate.updated',
  'change.updated',
  ...SAVINGS_EVENT_TYPES,
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export type TransferEventType = (typeof TRANSFER_EVENT_TYPES)[number];

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
  rejected: 'transfer.rejected',
  expired: 'transfer.expired',
};

export function transferEventData(t: Transfer): Record<string, unknown> {
  return {
    transfer_id: t.id,
    status: t.status,
    rail: t.rail,
    ledger_state: t.ledgerState,
    amount: formatAmount(t.amountMinor, t.currency),
    fee: formatAmount(feeOf(t), t.currency),
    currency: t.currency,
    direction: t.direction,
    source: t.sourceWalletId,
    destination: t.destination,
    failure_code: t.failureCode,
    metadata: t.metadata,
  };
}

/** The `data` of a `wallet.*` event: the wallet's status as it changed; balances are not part of it. */
export function walletEventData(wallet: Wallet): Record<string, unknown> {
  return {
    wallet_id: wallet.id,
    owner: wallet.ownerId,
    currency: wallet.currency,
    status: wallet.status,
    status_reason: wallet.statusReason,
    status_changed_at: wallet.statusChangedAt?.toISOString() ?? null,
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
 * Wraps a stored event for the wire, rendered in a payload version (the newest unless a subscription is
 * pinned to an older one). The environment is the deployment's (a deployment serves one), so it is not
 * stored per row; the product is the family the event's resource belongs to.
 */
export function eventEnvelope(
  event: EventRecord,
  environment: Environment,
  version: PayloadVersion = PAYLOAD_VERSION_LATEST,
): EventEnvelope {
  const { product, data } = renderPayloadVersion(
    { type: event.type, product: productOfEvent(event.type, event.data), data: event.data },
    version,
  );
  return {
    id: event.id,
    object: 'event',
    type: event.type,
    created_at: event.createdAt.toISOString(),
    environment,
    product,
    api_version: version,
    data,
  };
}

/** An event as it goes on the wire: in a payload version, and in the spelling asked for. */
export function renderEvent(
  event: EventRecord,
  environment: Environment,
  version: PayloadVersion,
  format: PayloadFormat,
): Record<string, unknown> {
  const envelope = eventEnvelope(event, environment, version);
  return (format === 'camel_case' ? toCamelCase(envelope) : envelope) as Record<string, unknown>;
}
