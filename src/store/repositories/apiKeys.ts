/**
 * API keys as authentication reads them: the key record (its columns and row form, shared with the API keys
 * module that issues, lists and revokes keys) and the lookup of a presented key by its hash, with its member.
 */

import type { Environment, MemberRole, MemberStatus } from '../../domain/access.ts';
import type { Queryable } from '../store.ts';
import { column, columnRows, rowMapper, stored } from './rowMappers.ts';
import { nullableDate, nullableText, toDate } from './rows.ts';

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

/** A key record's columns (in the order insertApiKey binds them) and the mapper of its row. */
export const { columns: API_KEY_COLUMNS, fromRow: apiKeyFromRow } = columnRows<ApiKeyRow>({
  id: String,
  organizationId: String,
  environment: stored,
  keyHash: String,
  displayPrefix: String,
  scopes: stored,
  createdAt: toDate,
  revokedAt: nullableDate,
  memberId: nullableText,
  createdBy: String,
  description: nullableText,
});

/** The member a key acts for, as the lookup by hash joins it. */
const keyMemberFromRow = rowMapper<NonNullable<ApiKeyWithMember['member']>>({
  id: column('member_id', String),
  email: column('member_email', String),
  roles: column('member_roles', stored<MemberRole[]>),
  status: column('member_status', stored<MemberStatus>),
});

export async function findApiKeyByHash(
  db: Queryable,
  keyHash: string,
): Promise<ApiKeyWithMember | undefined> {
  const [row] = await db.query(
    `SELECT ${API_KEY_COLUMNS.split(', ')
      .map((c) => `k.${c}`)
      .join(', ')}, m.email AS member_email, m.roles AS member_roles, m.status AS member_status
       FROM api_keys k LEFT JOIN members m ON m.id = k.member_id
      WHERE k.key_hash = $1`,
    [keyHash],
  );
  if (!row) return undefined;
  return {
    ...apiKeyFromRow(row),
    member: row.member_id === null ? null : keyMemberFromRow(row),
  };
}
