import type { Environment } from '../../domain/apiKeys.ts';
import type { Queryable } from '../store.ts';
import { toDate } from './rows.ts';

export interface ApiKeyRow {
  id: string;
  organizationId: string;
  environment: Environment;
  keyHash: string;
  displayPrefix: string;
  scopes: string[];
  createdAt: Date;
  revokedAt: Date | null;
}

const COLUMNS = 'id, organization_id, environment, key_hash, display_prefix, scopes, created_at, revoked_at';

function fromRow(row: Record<string, unknown>): ApiKeyRow {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    environment: row.environment as Environment,
    keyHash: String(row.key_hash),
    displayPrefix: String(row.display_prefix),
    scopes: row.scopes as string[],
    createdAt: toDate(row.created_at),
    revokedAt: row.revoked_at === null ? null : toDate(row.revoked_at),
  };
}

export async function insertApiKey(db: Queryable, key: ApiKeyRow): Promise<void> {
  await db.query(`INSERT INTO api_keys (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
    key.id,
    key.organizationId,
    key.environment,
    key.keyHash,
    key.displayPrefix,
    key.scopes,
    key.createdAt,
    key.revokedAt,
  ]);
}

export async function findApiKeyByHash(db: Queryable, keyHash: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db.query(`SELECT ${COLUMNS} FROM api_keys WHERE key_hash = $1`, [keyHash]);
  return row && fromRow(row);
}

export async function listApiKeys(db: Queryable, organizationId: string): Promise<ApiKeyRow[]> {
  const rows = await db.query(`SELECT ${COLUMNS} FROM api_keys WHERE organization_id = $1 ORDER BY id`, [
    organizationId,
  ]);
  return rows.map(fromRow);
}

export async function revokeApiKey(db: Queryable, id: string, now: Date): Promise<ApiKeyRow | undefined> {
  const [row] = await db.query(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, now],
  );
  return row && fromRow(row);
}
