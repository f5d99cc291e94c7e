/**
 * Subscriptions' signing secrets: sealed at rest, rotated with a grace period, retired, and re-sealed when
 * the master keys change.
 */
import { type Keyring, open } from '../../../domain/sealing.ts';
import { WEBHOOK_SIGNING_SECRETS_MAX } from '../../../domain/signing.ts';
import { webhookSecretContext } from '../../../domain/webhooks.ts';
import { notWrappedByReader } from '../../../store/repositories/records.ts';
import { column, columnRows } from '../../../store/repositories/rowMappers.ts';
import { nullableText, toDate, toJsonObject } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

/** A secret as stored: sealed (src/domain/sealing.ts) under a data key wrapped by master key `keyId`. */
export interface SealedSecret {
  keyId: string;
  sealed: string;
}

/** Adds a subscription's secret: its first, or the new current one of a rotation. */
export async function insertSecret(db: Queryable, subscriptionId: string, secret: SealedSecret, now: Date) {
  await db.query(
    'INSERT INTO webhook_secrets (subscription_id, key_id, sealed_secret, created_at) VALUES ($1, $2, $3, $4)',
    [subscriptionId, secret.keyId, secret.sealed, now],
  );
}

/** A stored secret: sealed, or (written before secrets were sealed, until the next start seals it) in clear. */
export interface StoredSecret {
  id: string;
  subscriptionId: string;
  createdAt: Date;
  sealed: string | null;
  legacyPlaintext: string | null;
}

export const { columns: SECRET_COLUMNS, fromRow: secretFromRow } = columnRows<StoredSecret>({
  id: String,
  subscriptionId: String,
  createdAt: toDate,
  sealed: column('sealed_secret', nullableText),
  legacyPlaintext: column('legacy_plaintext_secret', nullableText),
});

/**
 * A subquery: the live secrets of the subscription `subscriptionId` names, still sealed, newest first, at
 * most `max` (SQL expressions, such as parameters), as one JSON array; read it with secretsFromJson.
 */
export const liveSecretsJson = (subscriptionId: string, now: string, max: string) =>
  `(SELECT COALESCE(json_agg(w ORDER BY w.created_at DESC, w.id DESC), '[]') FROM (
      SELECT ${SECRET_COLUMNS} FROM webhook_secrets
       WHERE subscription_id = ${subscriptionId} AND (expires_at IS NULL OR expires_at > ${now})
       ORDER BY created_at DESC, id DESC LIMIT ${max}
    ) w)`;

export const secretsFromJson = (value: unknown): StoredSecret[] =>
  toJsonObject<Record<string, unknown>[]>(value).map(secretFromRow);

/** A stored secret in clear. */
export function openStoredSecret(keyring: Keyring, secret: StoredSecret): string {
  if (secret.sealed !== null)
    return open(keyring, secret.sealed, webhookSecretContext(secret.subscriptionId));
  return secret.legacyPlaintext ?? '';
}

/** Secrets live now (the current one and rotated-out ones still inside their grace period), newest first. */
export async function liveSecrets(db: Queryable, subscriptionId: string, now: Date): Promise<StoredSecret[]> {
  const rows = await db.query(
    `SELECT ${SECRET_COLUMNS} FROM webhook_secrets WHERE subscription_id = $1 AND (expires_at IS NULL OR expires_at > $2)
      ORDER BY created_at DESC, id DESC`,
    [subscriptionId, now],
  );
  return rows.map(secretFromRow);
}

/**
 * Secrets that sign now, in clear, newest first. Never more than WEBHOOK_SIGNING_SECRETS_MAX: rotation keeps
 * within the bound, and the limit also covers rows written before it did.
 */
export async function activeSecrets(
  db: Queryable,
  keyring: Keyring,
  subscriptionId: string,
  now: Date,
): Promise<string[]> {
  const rows = await db.query(
    `SELECT ${SECRET_COLUMNS} FROM webhook_secrets WHERE subscription_id = $1 AND (expires_at IS NULL OR expires_at > $2)
      ORDER BY created_at DESC, id DESC LIMIT $3`,
    [subscriptionId, now, WEBHOOK_SIGNING_SECRETS_MAX],
  );
  return rows.map((row) => openStoredSecret(keyring, secretFromRow(row)));
}

/**
 * Adds a new current secret. Every other secret stops signing at graceUntil at the latest: the current one,
 * and an older one still in the grace of an earlier rotation (so a rotation with no grace revokes them all).
 */
export async function rotateSecret(
  db: Queryable,
  subscriptionId: string,
  secret: SealedSecret,
  now: Date,
  graceUntil: Date,
): Promise<void> {
  await db.query(
    'UPDATE webhook_secrets SET expires_at = $2 WHERE subscription_id = $1 AND (expires_at IS NULL OR expires_at > $2)',
    [subscriptionId, graceUntil],
  );
  await insertSecret(db, subscriptionId, secret, now);
}

/** Ends these secrets' signing now. */
export async function retireSecrets(db: Queryable, ids: readonly string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.query('UPDATE webhook_secrets SET expires_at = $2 WHERE id = ANY($1::bigint[])', [ids, now]);
}

/** Master keys that wrap stored secrets' data keys. */
export async function secretKeyIds(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ key_id: string }>(
    'SELECT DISTINCT key_id FROM webhook_secrets WHERE key_id IS NOT NULL ORDER BY key_id',
  );
  return rows.map((r) => r.key_id);
}

/** Up to rowsMax secrets still in clear (written before secrets were sealed). */
export async function legacySecrets(db: Queryable, rowsMax: number): Promise<StoredSecret[]> {
  const rows = await db.query(
    `SELECT ${SECRET_COLUMNS} FROM webhook_secrets WHERE legacy_plaintext_secret IS NOT NULL ORDER BY id LIMIT $1 FOR UPDATE`,
    [rowsMax],
  );
  return rows.map(secretFromRow);
}

/** Up to rowsMax sealed secrets whose data key another master key than `keyId` wraps. */
export const secretsNotWrappedBy = notWrappedByReader(
  { name: 'webhook_secrets', columns: SECRET_COLUMNS, fromRow: secretFromRow },
  'key_id',
);

/** Stores a secret's sealed form, dropping any plaintext the row held. */
export async function saveSealedSecret(db: Queryable, id: string, secret: SealedSecret): Promise<void> {
  await db.query(
    'UPDATE webhook_secrets SET key_id = $2, sealed_secret = $3, legacy_plaintext_secret = NULL WHERE id = $1',
    [id, secret.keyId, secret.sealed],
  );
}
