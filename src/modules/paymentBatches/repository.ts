/** Payment batches and their items: rows, the runner's lease, and items' outcomes written in bulk. */
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Metadata } from '../../domain/metadata.ts';
import type { Destination } from '../../domain/transfers.ts';
import {
  byStatus,
  newestFirstLister,
  organizationRecordFinder,
  type RecordTable,
  type StatusFilter,
} from '../../store/repositories/records.ts';
import { column, computed, rowMapper, stored } from '../../store/repositories/rowMappers.ts';
import {
  feeDecisionFromRow,
  fieldArrays,
  nullableDate,
  nullableText,
  toBigInt,
  toDate,
  toJsonObject,
} from '../../store/repositories/rows.ts';
import type { Queryable } from '../../store/store.ts';
import type { PaymentBatch, PaymentBatchItem, PaymentBatchItemStatus, PaymentBatchStatus } from './domain.ts';

const COLUMNS = `id, organization_id, reference, source_wallet_id, currency, status, failure_code, item_count,
  total_minor, succeeded_count, failed_count, canceled_count, reservation_entry_id, reserved_minor, created_by,
  approval_id, authorization_decision, metadata, created_at, updated_at, finished_at, fee_total_minor`;

/** The authorization decision stored with the batch, if it was decided by policy. */
function batchAuthorizationOf(value: unknown): PaymentBatch['authorization'] {
  const stored = value === null ? null : toJsonObject<Record<string, unknown>>(value);
  return (
    stored && {
      decision: String(stored.decision),
      policyVersion: Number(stored.policy_version),
      rule: String(stored.rule),
    }
  );
}

const fromRow = rowMapper<PaymentBatch>({
  id: String,
  organizationId: String,
  reference: String,
  sourceWalletId: String,
  currency: stored,
  status: stored,
  failureCode: nullableText,
  itemCount: Number,
  totalMinor: toBigInt,
  feeTotalMinor: toBigInt,
  succeededCount: Number,
  failedCount: Number,
  canceledCount: Number,
  reservationEntryId: nullableText,
  reservedMinor: toBigInt,
  createdBy: String,
  approvalId: nullableText,
  authorization: column('authorization_decision', batchAuthorizationOf),
  metadata: toJsonObject<Metadata>,
  createdAt: toDate,
  updatedAt: toDate,
  finishedAt: nullableDate,
});

const BATCHES: RecordTable<PaymentBatch> = {
  name: 'payment_batches',
  columns: COLUMNS,
  prefix: ID_PREFIXES.paymentBatch,
  fromRow,
};

/** Inserts a batch, or returns undefined when its reference is taken in the organization. */
export async function insertPaymentBatch(db: Queryable, b: PaymentBatch): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO payment_batches (id, organization_id, reference, source_wallet_id, currency, status, item_count,
        total_minor, created_by, metadata, created_at, updated_at, fee_total_minor)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $11, $12)
     ON CONFLICT (organization_id, reference) DO NOTHING RETURNING id`,
    [
      b.id,
      b.organizationId,
      b.reference,
      b.sourceWalletId,
      b.currency,
      b.status,
      b.itemCount,
      b.totalMinor.toString(),
      b.createdBy,
      JSON.stringify(b.metadata),
      b.createdAt,
      b.feeTotalMinor.toString(),
    ],
  );
  return rows.length === 1;
}

export const findPaymentBatchByReference = organizationRecordFinder(BATCHES, 'reference');

/** Writes a batch's items with one statement per thousand. */
export async function insertPaymentBatchItems(
  db: Queryable,
  items: readonly PaymentBatchItem[],
): Promise<void> {
  const CHUNK = 1_000;
  for (let i = 0; i < items.length; i += CHUNK) {
    const part = items.slice(i, i + CHUNK);
    await db.query(
      `INSERT INTO payment_batch_items (batch_id, position, reference, destination, destination_wallet_id, rail,
          amount_minor, metadata, status, updated_at, fee_minor, fee_schedule_version, fee_rule)
       SELECT v.batch_id, v.position, v.reference, v.destination::jsonb, v.destination_wallet_id, v.rail,
              v.amount_minor, v.metadata::jsonb, 'pending', v.updated_at, v.fee_minor, v.fee_schedule_version,
              v.fee_rule
         FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[],
                     $9::timestamptz[], $10::bigint[], $11::int[], $12::text[])
           AS v(batch_id, position, reference, destination, destination_wallet_id, rail, amount_minor, metadata,
                updated_at, fee_minor, fee_schedule_version, fee_rule)`,
      [
        ...fieldArrays(part, 'batchId', 'position', 'reference'),
        part.map((x) => JSON.stringify(x.destination)),
        ...fieldArrays(part, 'destinationWalletId', 'rail'),
        part.map((x) => x.amountMinor.toString()),
        part.map((x) => JSON.stringify(x.metadata)),
        part.map((x) => x.updatedAt.toISOString()),
        part.map((x) => (x.fee?.feeMinor ?? 0n).toString()),
        part.map((x) => x.fee?.scheduleVersion ?? null),
        part.map((x) => x.fee?.rule ?? null),
      ],
    );
  }
}

export const findPaymentBatch = organizationRecordFinder(BATCHES);

/** Writes every mutable field of a batch. */
export async function savePaymentBatch(db: Queryable, b: PaymentBatch): Promise<void> {
  await db.query(
    `UPDATE payment_batches SET status = $2, failure_code = $3, succeeded_count = $4, failed_count = $5,
        canceled_count = $6, reservation_entry_id = $7, reserved_minor = $8, approval_id = $9,
        authorization_decision = $10::jsonb, updated_at = $11, finished_at = $12
      WHERE id = $1`,
    [
      b.id,
      b.status,
      b.failureCode,
      b.succeededCount,
      b.failedCount,
      b.canceledCount,
      b.reservationEntryId,
      b.reservedMinor.toString(),
      b.approvalId,
      b.authorization &&
        JSON.stringify({
          decision: b.authorization.decision,
          policy_version: b.authorization.policyVersion,
          rule: b.authorization.rule,
        }),
      b.updatedAt,
      b.finishedAt,
    ],
  );
}

/**
 * Takes a batch with a step to run (validating or processing) whose lease is free, for `leaseMs`: any number
 * of workers share the queue, and a worker that died leaves its batch to the next once the lease runs out.
 */
export async function leaseRunnableBatch(
  db: Queryable,
  now: Date,
  leaseMs: number,
): Promise<{ id: string; organizationId: string } | undefined> {
  const [row] = await db.query(
    `UPDATE payment_batches SET lease_until = $2
      WHERE id = (SELECT id FROM payment_batches
                   WHERE status IN ('validating', 'processing') AND (lease_until IS NULL OR lease_until <= $1)
                   ORDER BY updated_at LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING id, organization_id`,
    [now, new Date(now.getTime() + leaseMs)],
  );
  return row && { id: String(row.id), organizationId: String(row.organization_id) };
}

export async function releaseBatchLease(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE payment_batches SET lease_until = NULL WHERE id = $1', [id]);
}

const itemFromRow = rowMapper<PaymentBatchItem>({
  batchId: String,
  position: Number,
  reference: String,
  destination: toJsonObject<Destination>,
  destinationWalletId: nullableText,
  rail: stored,
  amountMinor: toBigInt,
  fee: computed(feeDecisionFromRow),
  metadata: toJsonObject<Metadata>,
  status: stored,
  transferId: nullableText,
  failureCode: nullableText,
  failureDetail: nullableText,
  updatedAt: toDate,
});

const ITEM_COLUMNS = `batch_id, position, reference, destination, destination_wallet_id, rail, amount_minor, metadata,
  status, transfer_id, failure_code, failure_detail, updated_at, fee_minor, fee_schedule_version, fee_rule`;

/** The next pending items in order, served by the partial index of pending items. */
export async function nextPendingItems(
  db: Queryable,
  batchId: string,
  rowsMax: number,
): Promise<PaymentBatchItem[]> {
  const rows = await db.query(
    `SELECT ${ITEM_COLUMNS} FROM payment_batch_items WHERE batch_id = $1 AND status = 'pending'
      ORDER BY position LIMIT $2`,
    [batchId, rowsMax],
  );
  return rows.map(itemFromRow);
}

/** Records items' outcomes with one statement. */
export async function saveItemOutcomes(db: Queryable, items: readonly PaymentBatchItem[]): Promise<void> {
  if (items.length === 0) return;
  await db.query(
    `UPDATE payment_batch_items i SET status = v.status, transfer_id = v.transfer_id, failure_code = v.failure_code,
        failure_detail = v.failure_detail, updated_at = v.updated_at
       FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
         AS v(batch_id, position, status, transfer_id, failure_code, failure_detail, updated_at)
      WHERE i.batch_id = v.batch_id AND i.position = v.position`,
    [
      ...fieldArrays(items, 'batchId', 'position', 'status', 'transferId', 'failureCode', 'failureDetail'),
      items.map((x) => x.updatedAt.toISOString()),
    ],
  );
}

/** Cancels every pending item; returns how many. */
export async function cancelPendingItems(db: Queryable, batchId: string, now: Date): Promise<number> {
  const rows = await db.query(
    `UPDATE payment_batch_items SET status = 'canceled', updated_at = $2
      WHERE batch_id = $1 AND status = 'pending' RETURNING position`,
    [batchId, now],
  );
  return rows.length;
}

export interface ItemFilter {
  status?: PaymentBatchItemStatus | undefined;
  afterPosition?: number | undefined;
}

/** Items in position order, paged by position; served by the primary key. */
export async function listItems(
  db: Queryable,
  batchId: string,
  filter: ItemFilter,
  rowsMax: number,
): Promise<PaymentBatchItem[]> {
  const rows = await db.query(
    `SELECT ${ITEM_COLUMNS} FROM payment_batch_items
      WHERE batch_id = $1 AND position > $2 AND ($3::text IS NULL OR status = $3)
      ORDER BY position LIMIT $4`,
    [batchId, filter.afterPosition ?? 0, filter.status ?? null, rowsMax],
  );
  return rows.map(itemFromRow);
}

export type BatchFilter = StatusFilter<PaymentBatchStatus>;

export const listPaymentBatches = newestFirstLister(BATCHES, byStatus<PaymentBatchStatus>);

/** Fails every pending item with one reason (a batch refused before it ran); returns how many. */
export async function failPendingItems(
  db: Queryable,
  batchId: string,
  code: string,
  detail: string,
  now: Date,
): Promise<number> {
  const rows = await db.query(
    `UPDATE payment_batch_items SET status = 'failed', failure_code = $2, failure_detail = $3, updated_at = $4
      WHERE batch_id = $1 AND status = 'pending' RETURNING position`,
    [batchId, code, detail, now],
  );
  return rows.length;
}

/** Whether any item is still pending. */
export async function hasPendingItems(db: Queryable, batchId: string): Promise<boolean> {
  const [row] = await db.query(
    "SELECT 1 AS found FROM payment_batch_items WHERE batch_id = $1 AND status = 'pending' LIMIT 1",
    [batchId],
  );
  return row !== undefined;
}
