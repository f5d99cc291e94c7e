/** Rail partners' callbacks: stored as they arrived (duplicates marked), then applied, deferred or listed. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import {
  byFields,
  newestFirstLister,
  organizationRecordFinder,
  recordTable,
} from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import {
  type KeysetFilter,
  nullableDate,
  nullableText,
  toDate,
  toJsonObject,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { RailCallbackStatus } from '../domain.ts';

export interface RailCallback {
  id: string;
  organizationId: string;
  configId: string;
  partner: string;
  path: string;
  headers: Record<string, string>;
  rawBody: string;
  bodySha256: string;
  status: RailCallbackStatus;
  transferId: string | null;
  detail: string | null;
  receivedAt: Date;
  nextAttemptAt: Date | null;
  processedAt: Date | null;
  /**
   * How the signature was verified before the callback was stored (`jwks`: a detached JWS against the
   * partner's published keys), or null when it is checked as it is applied.
   */
  verifiedBy: string | null;
}

const CALLBACKS = recordTable<RailCallback>('rail_callbacks', ID_PREFIXES.railCallback, {
  id: String,
  organizationId: String,
  configId: String,
  partner: String,
  path: String,
  headers: toJsonObject<Record<string, string>>,
  rawBody: String,
  bodySha256: String,
  status: stored,
  transferId: nullableText,
  detail: nullableText,
  receivedAt: toDate,
  nextAttemptAt: nullableDate,
  processedAt: nullableDate,
  verifiedBy: nullableText,
});

/**
 * Stores a callback as it arrived. The same bytes on the same path as an earlier one are stored too, as
 * `duplicate` of it: returned with `duplicateOf` set.
 */
export async function insertRailCallback(
  db: Queryable,
  callback: RailCallback,
): Promise<{ stored: RailCallback; duplicateOf?: string }> {
  const values = (status: RailCallbackStatus, processedAt: Date | null, nextAttemptAt: Date | null) => [
    callback.id,
    callback.organizationId,
    callback.configId,
    callback.partner,
    callback.path,
    JSON.stringify(callback.headers),
    callback.rawBody,
    callback.bodySha256,
    status,
    callback.receivedAt,
    nextAttemptAt,
    processedAt,
    callback.verifiedBy,
  ];
  const sql = `INSERT INTO rail_callbacks (id, organization_id, config_id, partner, path, headers, raw_body, body_sha256,
      status, received_at, next_attempt_at, processed_at, verified_by)
    VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11, $12, $13)`;
  const inserted = await db.query(
    `${sql} ON CONFLICT DO NOTHING RETURNING id`,
    values(callback.status, null, callback.receivedAt),
  );
  if (inserted.length === 1) return { stored: callback };
  const [first] = await db.query(
    `SELECT id FROM rail_callbacks WHERE config_id = $1 AND path = $2 AND body_sha256 = $3 AND status <> 'duplicate'`,
    [callback.configId, callback.path, callback.bodySha256],
  );
  await db.query(sql, values('duplicate', callback.receivedAt, null));
  return {
    stored: { ...callback, status: 'duplicate', processedAt: callback.receivedAt, nextAttemptAt: null },
    duplicateOf: first ? String(first.id) : undefined,
  };
}

/** The callback, locked, while it is still to be applied; undefined once another process took or applied it. */
export async function lockReceivedCallback(db: Queryable, id: string): Promise<RailCallback | undefined> {
  const [row] = await db.query(
    `SELECT ${CALLBACKS.columns} FROM rail_callbacks WHERE id = $1 AND status = 'received' FOR UPDATE SKIP LOCKED`,
    [id],
  );
  return row && CALLBACKS.fromRow(row);
}

export async function finishRailCallback(
  db: Queryable,
  id: string,
  outcome: {
    status: RailCallbackStatus;
    transferId: string | null;
    collectionId?: string | null;
    detail: string | null;
    at: Date;
  },
): Promise<void> {
  await db.query(
    `UPDATE rail_callbacks SET status = $2, transfer_id = $3, detail = $4, processed_at = $5, next_attempt_at = NULL,
       collection_id = $6
     WHERE id = $1`,
    [id, outcome.status, outcome.transferId, outcome.detail, outcome.at, outcome.collectionId ?? null],
  );
}

export async function deferRailCallback(
  db: Queryable,
  id: string,
  nextAttemptAt: Date,
  detail: string,
): Promise<void> {
  await db.query('UPDATE rail_callbacks SET next_attempt_at = $2, detail = $3 WHERE id = $1', [
    id,
    nextAttemptAt,
    detail,
  ]);
}

/** Callbacks still to be applied whose next attempt is due, oldest first. */
export async function dueRailCallbackIds(db: Queryable, now: Date, rowsMax: number): Promise<string[]> {
  const rows = await db.query(
    `SELECT id FROM rail_callbacks WHERE status = 'received' AND next_attempt_at <= $1
     ORDER BY next_attempt_at LIMIT $2`,
    [now, rowsMax],
  );
  return rows.map((r) => String(r.id));
}

export const findRailCallback = organizationRecordFinder(CALLBACKS);

export const listRailCallbacks = newestFirstLister(
  CALLBACKS,
  byFields<KeysetFilter & { status?: RailCallbackStatus | undefined; transferId?: string | undefined }>(
    'status',
    'transferId',
  ),
);
