import type { Environment } from '../../domain/apiKeys.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { MemberRole, MemberStatus } from '../../domain/members.ts';
import type { Queryable } from '../store.ts';
import { type KeysetFilter, keysetConditions, toDate } from './rows.ts';

export interface ApiKeyRow {
  id: string;
  organizationId: string;
  environment: Environment;
  keyHash: string;
  displayPrefix: string;
  scopes: string[];
  createdAt: Date;
  revokedAt: Date | null;
  /** The member the key acts for, if any. */
  memberId: string | null;
  /** Who created it: a member id, `operator:<user>` (the server's CLI), `seed`, or `unrecorded` (older keys). */
  createdBy: string;
  description: string | null;
}

/** A key as authentication needs it: with the member it acts for, as that member stands now. */
export interface ApiKeyWithMember extends ApiKeyRow {
  member: { id: string; email: string; roles: MemberRole[]; status: MemberStatus } | null;
}

const COLUMNS =
  'id, organization_id, environment, key_hash, display_prefix, scopes, created_at, revoked_at, member_id, created_by, description';

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
    memberId: row.member_id === null || row.member_id === undefined ? null : String(row.member_id),
    createdBy: String(row.created_by),
    description: row.description === null || row.description === undefined ? null : String(row.description),
  };
}

export async function insertApiKey(db: Queryable, key: ApiKeyRow): Promise<void> {
  await db.query(`INSERT INTO api_keys (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, [
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
  ]);
}

export async function findApiKeyByHash(
  db: Queryable,
  keyHash: string,
): Promise<ApiKeyWithMember | undefined> {
  const [row] = await db.query(
    `SELECT ${COLUMNS.split(', ')
      .map((c) => `k.${c}`)
      .join(', ')}, m.email AS member_email, m.roles AS member_roles, m.status AS member_status
       FROM api_keys k LEFT JOIN members m ON m.id = k.member_id
      WHERE k.key_hash = $1`,
    [keyHash],
  );
  if (!row) return undefined;
  return {
    ...fromRow(row),
    member:
      row.member_id === null
        ? null
        : {
            id: String(row.member_id),
            email: String(row.member_email),
            roles: row.member_roles as MemberRole[],
            status: row.member_status as MemberStatus,
          },
  };
}

export async function listApiKeys(db: Queryable, organizationId: string): Promise<ApiKeyRow[]> {
  const rows = await db.query(`SELECT ${COLUMNS} FROM api_keys WHERE organization_id = $1 ORDER BY id`, [
    organizationId,
  ]);
  return rows.map(fromRow);
}

/** A newest-first page of the organization's keys (limit + 1 rows: toPage says whether more exist). */
export async function listApiKeysPage(
  db: Queryable,
  organizationId: string,
  filter: KeysetFilter,
  rowsMax: number,
): Promise<ApiKeyRow[]> {
  const params: unknown[] = [organizationId];
  const conditions = ['organization_id = $1', ...keysetConditions(filter, params, '', ID_PREFIXES.apiKey)];
  params.push(rowsMax);
  const rows = await db.query(
    `SELECT ${COLUMNS} FROM api_keys WHERE ${conditions.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map(fromRow);
}

export async function findApiKey(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<ApiKeyRow | undefined> {
  const [row] = await db.query(`SELECT ${COLUMNS} FROM api_keys WHERE organization_id = $1 AND id = $2`, [
    organizationId,
    id,
  ]);
  return row && fromRow(row);
}

export async function revokeApiKey(db: Queryable, id: string, now: Date): Promise<ApiKeyRow | undefined> {
  const [row] = await db.query(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, now],
  );
  return row && fromRow(row);
}
