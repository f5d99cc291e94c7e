/** Collections: their rows, the lookups by partner and bank reference, and the worker's claim of due ones. */
import { ID_PREFIXES } from '../../domain/ids.ts';
import {
  byStatusAndWallet,
  dueRecordsClaimer,
  newestFirstLister,
  organizationRecordFinder,
  recordTable,
} from '../../store/repositories/records.ts';
import { stored, text } from '../../store/repositories/rowMappers.ts';
import { nullableDate, nullableText, toBigInt, toDate, toJsonObject } from '../../store/repositories/rows.ts';
import type { Queryable } from '../../store/store.ts';
import type { Collection, CollectionStatus } from './domain.ts';

const COLLECTIONS = recordTable<Collection>('collections', ID_PREFIXES.collection, {
  id: String,
  organizationId: String,
  walletId: String,
  amountMinor: toBigInt,
  currency: text,
  method: stored,
  rail: stored,
  network: nullableText,
  payerPhone: nullableText,
  bankReference: nullableText,
  payerName: nullableText,
  reference: String,
  description: String,
  status: stored,
  failureCode: nullableText,
  partnerReference: nullableText,
  nextCheckAt: nullableDate,
  transferId: nullableText,
  metadata: toJsonObject<Record<string, string>>,
  createdBy: nullableText,
  createdAt: toDate,
  updatedAt: toDate,
  expiresAt: toDate,
  succeededAt: nullableDate,
  failedAt: nullableDate,
});

export async function insertCollection(db: Queryable, c: Collection): Promise<void> {
  await db.query(
    `INSERT INTO collections (id, organization_id, wallet_id, amount_minor, currency, rail, network, payer_phone, reference,
       description, status, failure_code, partner_reference, next_check_at, transfer_id, metadata, created_by, created_at,
       updated_at, expires_at, succeeded_at, failed_at, method, bank_reference, payer_name)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16::jsonb, $17, $18, $19, $20, $21, $22,
       $23, $24, $25)`,
    [
      c.id,
      c.organizationId,
      c.walletId,
      c.amountMinor.toString(),
      c.currency,
      c.rail,
      c.network,
      c.payerPhone,
      c.reference,
      c.description,
      c.status,
      c.failureCode,
      c.partnerReference,
      c.nextCheckAt,
      c.transferId,
      JSON.stringify(c.metadata),
      c.createdBy,
      c.createdAt,
      c.updatedAt,
      c.expiresAt,
      c.succeededAt,
      c.failedAt,
      c.method,
      c.bankReference,
      c.payerName,
    ],
  );
}

export async function saveCollection(db: Queryable, c: Collection): Promise<void> {
  await db.query(
    `UPDATE collections SET status = $3, failure_code = $4, partner_reference = $5, next_check_at = $6, transfer_id = $7,
       updated_at = $8, succeeded_at = $9, failed_at = $10
     WHERE organization_id = $1 AND id = $2`,
    [
      c.organizationId,
      c.id,
      c.status,
      c.failureCode,
      c.partnerReference,
      c.nextCheckAt,
      c.transferId,
      c.updatedAt,
      c.succeededAt,
      c.failedAt,
    ],
  );
}

export const findCollection = organizationRecordFinder(COLLECTIONS);

/** The collection a partner's reference names, locked. */
export async function findCollectionByPartnerReference(
  db: Queryable,
  organizationId: string,
  partnerReference: string,
): Promise<Collection | undefined> {
  const [row] = await db.query(
    `SELECT ${COLLECTIONS.columns} FROM collections WHERE organization_id = $1 AND partner_reference = $2 LIMIT 1 FOR UPDATE`,
    [organizationId, partnerReference],
  );
  return row && COLLECTIONS.fromRow(row);
}

/** Due collections, claimed: skipped by any other worker until this transaction ends. */
export const claimDueCollections = dueRecordsClaimer(COLLECTIONS);

export const listCollections = newestFirstLister(COLLECTIONS, byStatusAndWallet<CollectionStatus>);

/** Whether the organization has recorded a bank deposit with this bank reference. */
export const findCollectionByBankReference = organizationRecordFinder(COLLECTIONS, 'bank_reference');

/**
 * Serialises bank deposit reports of one organization (its row locked until the transaction ends), so two
 * reports carrying the same deposit never both credit it: the second sees the first's record.
 */
export async function lockBankDepositReports(db: Queryable, organizationId: string): Promise<void> {
  // NO KEY UPDATE: it conflicts with another report's lock, not with the key-share locks that inserts
  // referencing the organization take, so transfers go on meanwhile.
  await db.query('SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [organizationId]);
}
