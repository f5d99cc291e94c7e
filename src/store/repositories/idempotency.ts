/**
 * Idempotency records' rows: the per-key transaction lock, the stored answer found, written and deleted (one
 * key or a batch of them), and the claims taken before an outbound send.
 */

import { prepared } from '../preparedStatements.ts';
import type { Queryable } from '../store.ts';
import { column, rowMapper } from './rowMappers.ts';
import { fieldArrays, nullableDate, toDate } from './rows.ts';

export interface IdempotencyRecord {
  organizationId: string;
  key: string;
  fingerprint: string;
  method: string;
  path: string;
  responseStatus: number;
  /** The response body exactly as sent. */
  responseText: string;
  createdAt: Date;
  /**
   * Set on a claim taken before an outbound send (src/app/idempotencyClaims.ts): the key is in flight until
   * then, and free after it. Undefined or null on a completed record.
   */
  claimedUntil?: Date | null;
}

/**
 * Takes the per-key transaction lock without waiting. False means another transaction holds the key now:
 * the caller answers 409 instead of queueing behind it. Released at commit or rollback.
 */
export async function tryLockIdempotencyKey(
  db: Queryable,
  organizationId: string,
  key: string,
): Promise<boolean> {
  const [locked] = await tryLockIdempotencyKeys(db, [{ organizationId, key }]);
  return locked === true;
}

export interface ScopedKey {
  organizationId: string;
  key: string;
}

const lockName = ({ organizationId, key }: ScopedKey) => `idempotency:${organizationId}:${key}`;

/**
 * tryLockIdempotencyKey for many keys in one statement (the batch writer's), in the order given; true
 * where the lock was taken. A key given twice is taken twice (the lock is re-entrant).
 */
export async function tryLockIdempotencyKeys(db: Queryable, keys: readonly ScopedKey[]): Promise<boolean[]> {
  if (keys.length === 0) return [];
  const rows = await db.query<{ locked: boolean }>(
    `SELECT pg_try_advisory_xact_lock(hashtextextended(v.name, 0)) AS locked
       FROM unnest($1::text[]) WITH ORDINALITY AS v(name, n) ORDER BY v.n`,
    [keys.map(lockName)],
  );
  return rows.map((r) => r.locked === true);
}

const RECORD_COLUMNS =
  'organization_id, idempotency_key, fingerprint, method, path, response_status, response_text, created_at';
/** What a read returns: the record and, on a claim, how long it stands. */
const READ_COLUMNS = `${RECORD_COLUMNS}, claimed_until`;

const FIND_RECORD_SQL = prepared(
  `SELECT ${READ_COLUMNS} FROM idempotency_records WHERE organization_id = $1 AND idempotency_key = $2`,
);

const recordFromRow = rowMapper<IdempotencyRecord>({
  organizationId: String,
  key: column('idempotency_key', String),
  fingerprint: String,
  method: String,
  path: String,
  responseStatus: Number,
  responseText: String,
  createdAt: toDate,
  claimedUntil: nullableDate,
});

export async function findIdempotencyRecord(
  db: Queryable,
  organizationId: string,
  key: string,
): Promise<IdempotencyRecord | undefined> {
  const [row] = await db.query(FIND_RECORD_SQL, [organizationId, key]);
  return row && recordFromRow(row);
}

/**
 * The records of many keys in one statement. Run it after the keys' locks are taken, as a statement of its
 * own, so that it sees what a transaction that held a lock committed before letting it go.
 */
export async function findIdempotencyRecords(
  db: Queryable,
  keys: readonly ScopedKey[],
): Promise<IdempotencyRecord[]> {
  if (keys.length === 0) return [];
  const rows = await db.query(
    `SELECT ${READ_COLUMNS.split(', ')
      .map((c) => `r.${c}`)
      .join(', ')}
       FROM idempotency_records r
       JOIN unnest($1::text[], $2::text[]) AS v(organization_id, idempotency_key)
         ON r.organization_id = v.organization_id AND r.idempotency_key = v.idempotency_key`,
    fieldArrays(keys, 'organizationId', 'key'),
  );
  return rows.map(recordFromRow);
}

export async function deleteIdempotencyRecord(
  db: Queryable,
  organizationId: string,
  key: string,
): Promise<void> {
  await db.query('DELETE FROM idempotency_records WHERE organization_id = $1 AND idempotency_key = $2', [
    organizationId,
    key,
  ]);
}

export async function insertIdempotencyRecord(db: Queryable, r: IdempotencyRecord): Promise<void> {
  await insertIdempotencyRecords(db, [r]);
}

/**
 * Inserts records with one statement, however many. The response texts travel as one JSON array of strings
 * (`json_array_elements_text` gives each back to the letter), not as elements of a text array, whose literal
 * would escape every quote of every response again.
 */
export async function insertIdempotencyRecords(
  db: Queryable,
  records: readonly IdempotencyRecord[],
): Promise<void> {
  if (records.length === 0) return;
  await db.query(
    `INSERT INTO idempotency_records (${RECORD_COLUMNS})
     SELECT * FROM ROWS FROM (unnest($1::text[]), unnest($2::text[]), unnest($3::text[]), unnest($4::text[]),
                              unnest($5::text[]), unnest($6::int[]), json_array_elements_text($7::json),
                              unnest($8::timestamptz[]))`,
    [
      ...fieldArrays(records, 'organizationId', 'key', 'fingerprint', 'method', 'path', 'responseStatus'),
      JSON.stringify(records.map((r) => r.responseText)),
      records.map((r) => r.createdAt.toISOString()),
    ],
  );
}

/** Inserts a claim: a record whose answer stands only until `claimedUntil` (src/app/idempotencyClaims.ts). */
export async function insertIdempotencyClaim(
  db: Queryable,
  claim: IdempotencyRecord & { claimedUntil: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO idempotency_records (${RECORD_COLUMNS}, claimed_until)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      claim.organizationId,
      claim.key,
      claim.fingerprint,
      claim.method,
      claim.path,
      claim.responseStatus,
      claim.responseText,
      claim.createdAt,
      claim.claimedUntil,
    ],
  );
}

/**
 * The claim with this answer (`claimText`, unique to the request that took it), locked; false when the key
 * holds something else now (the claim ran out and another request took the key).
 */
export async function lockOwnIdempotencyClaim(
  db: Queryable,
  organizationId: string,
  key: string,
  claimText: string,
): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 FROM idempotency_records
      WHERE organization_id = $1 AND idempotency_key = $2 AND claimed_until IS NOT NULL AND response_text = $3
        FOR UPDATE`,
    [organizationId, key, claimText],
  );
  return rows.length > 0;
}

/** Turns the request's own claim into its record: the answer it gives, standing from now on. */
export async function completeIdempotencyClaim(
  db: Queryable,
  organizationId: string,
  key: string,
  claimText: string,
  answer: { responseStatus: number; responseText: string },
): Promise<void> {
  await db.query(
    `UPDATE idempotency_records SET response_status = $4, response_text = $5, claimed_until = NULL
      WHERE organization_id = $1 AND idempotency_key = $2 AND claimed_until IS NOT NULL AND response_text = $3`,
    [organizationId, key, claimText, answer.responseStatus, answer.responseText],
  );
}

/** Gives the request's own claim up (its send or its checks failed): the key is free again. */
export async function releaseIdempotencyClaim(
  db: Queryable,
  organizationId: string,
  key: string,
  claimText: string,
): Promise<void> {
  await db.query(
    `DELETE FROM idempotency_records
      WHERE organization_id = $1 AND idempotency_key = $2 AND claimed_until IS NOT NULL AND response_text = $3`,
    [organizationId, key, claimText],
  );
}

/** Deletes up to rowsMax records created before the cutoff; returns how many went. */
export async function pruneIdempotencyRecords(
  db: Queryable,
  createdBefore: Date,
  rowsMax: number,
): Promise<number> {
  const rows = await db.query(
    `DELETE FROM idempotency_records WHERE ctid IN (
       SELECT ctid FROM idempotency_records WHERE created_at < $1 LIMIT $2
     ) RETURNING 1`,
    [createdBefore, rowsMax],
  );
  return rows.length;
}

/**
 * Keys of up to rowsMax records whose stored response contains `fragment`, after (organizationId, key) in
 * key order: how stored responses carrying a secret are found to be sealed, or re-wrapped under a new
 * master key. Read as text, whatever the column's type.
 */
export async function idempotencyKeysContaining(
  db: Queryable,
  fragment: string,
  after: { organizationId: string; key: string } | undefined,
  rowsMax: number,
): Promise<{ organizationId: string; key: string }[]> {
  const pattern = `%${fragment.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = await db.query<{ organization_id: string; idempotency_key: string }>(
    `SELECT organization_id, idempotency_key FROM idempotency_records
      WHERE response_text LIKE $1 AND (organization_id, idempotency_key) > ($2, $3)
      ORDER BY organization_id, idempotency_key LIMIT $4`,
    [pattern, after?.organizationId ?? '', after?.key ?? '', rowsMax],
  );
  return rows.map((r) => ({ organizationId: r.organization_id, key: r.idempotency_key }));
}
