/** Members of an organization: their records, found by id or email, and listed newest first. */
import type { MemberRole, MemberStatus } from '../../../domain/access.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import {
  byFields,
  newestFirstLister,
  organizationRecordFinder,
  recordTable,
} from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import { type KeysetFilter, nullableText, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { Member } from '../domain.ts';

const MEMBERS = recordTable<Member>('members', ID_PREFIXES.member, {
  id: String,
  organizationId: String,
  email: String,
  name: nullableText,
  roles: stored,
  status: stored,
  createdBy: String,
  createdAt: toDate,
  updatedAt: toDate,
});
const { columns: COLUMNS, fromRow } = MEMBERS;

/** Inserts a member, or returns undefined when the organization already has one with that email. */
export async function insertMember(db: Queryable, member: Member): Promise<Member | undefined> {
  const [row] = await db.query(
    `INSERT INTO members (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (organization_id, email) DO NOTHING RETURNING ${COLUMNS}`,
    [
      member.id,
      member.organizationId,
      member.email,
      member.name,
      member.roles,
      member.status,
      member.createdBy,
      member.createdAt,
      member.updatedAt,
    ],
  );
  return row && fromRow(row);
}

export const findMember = organizationRecordFinder(MEMBERS);

export const findMemberByEmail = organizationRecordFinder(MEMBERS, 'email');

/** Members by id, for presenting votes and initiators. */
export async function findMembers(db: Queryable, ids: readonly string[]): Promise<Map<string, Member>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query(`SELECT ${COLUMNS} FROM members WHERE id = ANY($1::text[])`, [
    [...new Set(ids)],
  ]);
  return new Map(rows.map((r) => [String(r.id), fromRow(r)]));
}

export async function saveMember(db: Queryable, member: Member): Promise<void> {
  await db.query('UPDATE members SET name = $2, roles = $3, status = $4, updated_at = $5 WHERE id = $1', [
    member.id,
    member.name,
    member.roles,
    member.status,
    member.updatedAt,
  ]);
}

export interface MemberFilter extends KeysetFilter {
  status?: MemberStatus | undefined;
  role?: MemberRole | undefined;
}

/** Newest first, served by (organization_id, id); a role is one of a member's roles. */
export const listMembers = newestFirstLister(MEMBERS, byFields<MemberFilter>('status'), (filter, params) => {
  if (filter.role === undefined) return [];
  params.push(filter.role);
  return [`$${params.length} = ANY(roles)`];
});
