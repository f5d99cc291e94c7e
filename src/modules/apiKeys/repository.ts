/**
 * API keys' records as the organization manages them: issued, listed, found and revoked. A key read to
 * authenticate a request is the core's (src/store/repositories/apiKeys.ts), which defines the record.
 */
import { ID_PREFIXES } from '../../domain/ids.ts';
import { API_KEY_COLUMNS, type ApiKeyRow, apiKeyFromRow } from '../../store/repositories/apiKeys.ts';
import {
  allOrganizationRecordsLister,
  newestFirstLister,
  organizationRecordFinder,
  type RecordTable,
} from '../../store/repositories/records.ts';
import type { Queryable } from '../../store/store.ts';

export async function insertApiKey(db: Queryable, key: ApiKeyRow): Promise<void> {
  await db.query(
    `INSERT INTO api_keys (${API_KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      key.id,
      key.organizationId,
      key.environment,
      key.keyHash,
      key.displayPrefix,
      key.scopes,
      key.createdAt,
      key.revokedAt,
      key.memberId,
      key.createdBy,
      key.description,
    ],
  );
}

const API_KEYS: RecordTable<ApiKeyRow> = {
  name: 'api_keys',
  columns: API_KEY_COLUMNS,
  prefix: ID_PREFIXES.apiKey,
  fromRow: apiKeyFromRow,
};

export const listApiKeys = allOrganizationRecordsLister(API_KEYS, 'id');

/** A newest-first page of the organization's keys (limit + 1 rows: toPage says whether more exist). */
export const listApiKeysPage = newestFirstLister(API_KEYS);

export const findApiKey = organizationRecordFinder(API_KEYS);

export async function revokeApiKey(db: Queryable, id: string, now: Date): Promise<ApiKeyRow | undefined> {
  const [row] = await db.query(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING ${API_KEY_COLUMNS}`,
    [id, now],
  );
  return row && apiKeyFromRow(row);
}
