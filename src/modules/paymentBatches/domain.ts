/**
 * Payment batches, pure: the vocabulary, the limits, the CSV layout of an uploaded batch, and the batch's
 * status once its items have run.
 */

import type { Metadata } from '../../domain/metadata.ts';
import type { Currency } from '../../domain/money.ts';
import type { FeeDecision } from '../../domain/transferRecord.ts';
import type { Destination, Rail } from '../../domain/transfers.ts';

/** The most items one batch carries. */
export const PAYMENT_BATCH_ITEMS_MAX = 10_000;
/** Items the worker hands the ledger writer at once (each chunk is one transaction). */
export const PAYMENT_BATCH_CHUNK_ITEMS = 200;
/** A batch body may be this large (10,000 items of a few hundred bytes each, JSON or CSV). */
export const PAYMENT_BATCH_BODY_BYTES_MAX = 8 * 1024 * 1024;
/** How long the worker holds a batch while it runs a step; another worker takes it over after this. */
export const PAYMENT_BATCH_LEASE_MS = 60_000;
export const PAYMENT_BATCH_REFERENCE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;

export const PAYMENT_BATCH_STATUSES = [
  'validating',
  'pending_approval',
  'processing',
  'completed',
  'partially_failed',
  'failed',
  'canceled',
] as const;
export type PaymentBatchStatus = (typeof PAYMENT_BATCH_STATUSES)[number];

export const PAYMENT_BATCH_ITEM_STATUSES = ['pending', 'succeeded', 'failed', 'canceled'] as const;
export type PaymentBatchItemStatus = (typeof PAYMENT_BATCH_ITEM_STATUSES)[number];

export function isFinishedBatch(status: PaymentBatchStatus): boolean {
  return (
    status === 'completed' || status === 'partially_failed' || status === 'failed' || status === 'canceled'
  );
}

export interface PaymentBatch {
  id: string;
  organizationId: string;
  reference: string;
  sourceWalletId: string;
  currency: Currency;
  status: PaymentBatchStatus;
  failureCode: string | null;
  itemCount: number;
  /** The items' amounts. */
  totalMinor: bigint;
  /** The items' fees, decided when the batch was submitted: the batch holds total and fees. */
  feeTotalMinor: bigint;
  succeededCount: number;
  failedCount: number;
  canceledCount: number;
  reservationEntryId: string | null;
  reservedMinor: bigint;
  createdBy: string;
  approvalId: string | null;
  authorization: { decision: string; policyVersion: number; rule: string } | null;
  metadata: Metadata;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

export interface PaymentBatchItem {
  batchId: string;
  /** 1-based: the item's place in the request (its row in an uploaded CSV, after the header). */
  position: number;
  reference: string;
  destination: Destination;
  destinationWalletId: string | null;
  rail: Rail;
  amountMinor: bigint;
  /** The fee its transfer is charged, decided when the batch was submitted; null on batches made before fees. */
  fee: FeeDecision | null;
  metadata: Metadata;
  status: PaymentBatchItemStatus;
  transferId: string | null;
  failureCode: string | null;
  failureDetail: string | null;
  updatedAt: Date;
}

/** The status a batch ends in once no item is pending. */
export function finishedStatus(counts: {
  succeeded: number;
  failed: number;
  canceled: number;
}): PaymentBatchStatus {
  if (counts.canceled > 0) return 'canceled';
  if (counts.failed === 0) return 'completed';
  return counts.succeeded === 0 ? 'failed' : 'partially_failed';
}

/**
 * An uploaded batch's columns: `reference`, `amount`, then the destination: `type` and its fields
 * (`network`, `phone`, `name` for mobile_money; `bank_code`, `account_number`, `account_name` for
 * bank_account; `business_number`, `account_reference` for paybill; `till_number`; `token` for card;
 * `wallet` for a wallet), or just `wallet` (form B). Empty cells are absent fields.
 */
export const PAYMENT_BATCH_CSV_DESTINATION_FIELDS = [
  'network',
  'phone',
  'name',
  'bank_code',
  'account_number',
  'account_name',
  'business_number',
  'account_reference',
  'till_number',
  'token',
  'wallet',
  'asset',
  'address',
] as const;

/** One CSV row as the JSON item it stands for: the same checks then apply to both. */
export function itemOfCsvRow(row: Record<string, string>): Record<string, unknown> {
  const present = (key: string) => (row[key] ?? '').trim();
  const item: Record<string, unknown> = { reference: present('reference'), amount: present('amount') };
  const type = present('type');
  if (type === '' || type === 'wallet') {
    item.destination = present('wallet');
  } else {
    const destination: Record<string, string> = { type };
    for (const field of PAYMENT_BATCH_CSV_DESTINATION_FIELDS) {
      if (present(field) !== '') destination[field] = present(field);
    }
    item.destination = destination;
  }
  if (present('rail') !== '') item.rail = present('rail');
  return item;
}
