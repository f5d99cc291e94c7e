/**
 * An organization's members: adding, changing roles and removing, each recorded as evidence. Keys that act
 * for a member follow the change at once in this process (the key cache is dropped) and within
 * API_KEY_CACHE_TTL_MS elsewhere.
 */

import { forgetCachedKeys } from '../../../app/apiKeyAuthentication.ts';
import type { Deps } from '../../../app/deps.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import { getById, listPage, lockById } from '../../../app/reads.ts';
import type { MemberRole } from '../../../domain/access.ts';
import { normaliseEmail } from '../../../domain/contactDetails.ts';
import { AppError, invalidStateTransition, validationError } from '../../../domain/errors.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import { findOrganizationByName } from '../../../store/repositories/organizations.ts';
import type { Queryable } from '../../../store/store.ts';
import { ensureOrganizationNamed } from '../../organization/index.ts';
import { MEMBER_NAME_CHARS_MAX, type Member, parseRoles } from '../domain.ts';
import {
  findMember,
  findMemberByEmail,
  insertMember,
  listMembers as listMemberRows,
  type MemberFilter,
  saveMember,
} from '../repository/members.ts';

/** The member with this id, its row locked for the transaction; 404 when there is none. */
const lockMember = lockById(findMember, 'member');

export interface AddMemberInput {
  email: string;
  roles: readonly string[];
  name?: string | undefined;
}

function checkName(name: string | undefined): string | null {
  if (name === undefined) return null;
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > MEMBER_NAME_CHARS_MAX) {
    throw validationError('name', `name must be 1 to ${MEMBER_NAME_CHARS_MAX} characters`, 'out_of_range');
  }
  return trimmed;
}

/** 409 `member_exists` on `email`: the organization has an active member with that email. */
function memberExists(detail: string): AppError {
  return new AppError({ status: 409, code: 'member_exists', title: 'Member exists', detail, param: 'email' });
}

function actorId(actor: EvidenceActor): string {
  if (actor.type === 'system') return 'system';
  return actor.member ?? actor.id;
}

async function recordMemberChange(
  tx: Queryable,
  deps: Deps,
  member: Member,
  change: 'added' | 'roles_changed' | 'removed' | 'restored',
  previousRoles: readonly MemberRole[] | null,
  actor: EvidenceActor,
): Promise<void> {
  await appendEvidence(tx, deps, [
    {
      organizationId: member.organizationId,
      kind: 'member.update',
      actor,
      data: {
        member_id: member.id,
        email: member.email,
        change,
        roles: member.roles,
        previous_roles: previousRoles === null ? null : [...previousRoles],
        status: member.status,
      },
    },
  ]);
}

/**
 * Adds a member. An email already in the organization is a 409 `member_exists`, unless that member was
 * removed: then they are restored with the roles given.
 */
export async function addMember(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: AddMemberInput,
  actor: EvidenceActor,
): Promise<Member> {
  const email = normaliseEmail(input.email);
  const roles = parseRoles(input.roles);
  const name = checkName(input.name);
  const now = deps.now();
  const existing = await findMemberByEmail(tx, organizationId, email, { forUpdate: true });
  if (existing) {
    if (existing.status === 'active') {
      throw memberExists(
        `${email} is already a member (${existing.id}); change their roles with PATCH /v1/members/${existing.id}.`,
      );
    }
    const restored: Member = {
      ...existing,
      roles,
      name: name ?? existing.name,
      status: 'active',
      updatedAt: now,
    };
    await saveMember(tx, restored);
    await recordMemberChange(tx, deps, restored, 'restored', existing.roles, actor);
    forgetCachedKeys(deps);
    return restored;
  }
  const member: Member = {
    id: deps.newId('member'),
    organizationId,
    email,
    name,
    roles,
    status: 'active',
    createdBy: actorId(actor),
    createdAt: now,
    updatedAt: now,
  };
  const inserted = await insertMember(tx, member);
  if (!inserted) {
    // Another request added the same email between the look-up and the insert.
    throw memberExists(`${email} is already a member.`);
  }
  await recordMemberChange(tx, deps, member, 'added', null, actor);
  return member;
}

export const getMember = getById<Member>(findMember, 'member');

export const listMembers = listPage<MemberFilter, Member>(listMemberRows);

export interface UpdateMemberInput {
  roles?: readonly string[] | undefined;
  name?: string | undefined;
}

/** Changes a member's roles or name; a removed member is changed only by adding them again. */
export async function updateMember(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  input: UpdateMemberInput,
  actor: EvidenceActor,
): Promise<Member> {
  const member = await lockMember(tx, organizationId, id);
  if (member.status !== 'active') {
    throw invalidStateTransition(
      'Member removed',
      `${member.email} was removed; add them again with POST /v1/members.`,
    );
  }
  const roles = input.roles === undefined ? member.roles : parseRoles(input.roles);
  const updated: Member = {
    ...member,
    roles,
    name: input.name === undefined ? member.name : checkName(input.name),
    updatedAt: deps.now(),
  };
  await saveMember(tx, updated);
  if (input.roles !== undefined)
    await recordMemberChange(tx, deps, updated, 'roles_changed', member.roles, actor);
  forgetCachedKeys(deps);
  return updated;
}

/** Removes a member: their keys stop working, their past votes and actions stay as they were. */
export async function removeMember(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  actor: EvidenceActor,
): Promise<Member> {
  const member = await lockMember(tx, organizationId, id);
  if (member.status === 'removed') return member;
  const removed: Member = { ...member, status: 'removed', updatedAt: deps.now() };
  await saveMember(tx, removed);
  await recordMemberChange(tx, deps, removed, 'removed', member.roles, actor);
  forgetCachedKeys(deps);
  return removed;
}

/** The CLI's `members add`: into the organization of that name (created if new), by the operator. */
export function addMemberToOrganization(
  deps: Deps,
  organizationName: string,
  input: AddMemberInput,
): Promise<Member> {
  return deps.store.transaction(async (tx) => {
    const { organization } = await ensureOrganizationNamed(tx, deps, organizationName);
    return addMember(tx, deps, organization.id, input, SYSTEM_ACTOR);
  });
}

/** The CLI's `members list`: every member of the organization of that name. */
export async function listMembersOfOrganization(
  deps: Deps,
  organizationName: string,
  rowsMax: number,
): Promise<Member[]> {
  const organization = await findOrganizationByName(deps.store, organizationName);
  return organization ? listMemberRows(deps.store, organization.id, {}, rowsMax) : [];
}

/** The CLI's `members remove`: by email, in the organization of that name. */
export function removeMemberOfOrganization(
  deps: Deps,
  organizationName: string,
  email: string,
): Promise<Member | undefined> {
  return deps.store.transaction(async (tx) => {
    const organization = await findOrganizationByName(tx, organizationName);
    if (!organization) return undefined;
    const member = await findMemberByEmail(tx, organization.id, normaliseEmail(email));
    return member && removeMember(tx, deps, organization.id, member.id, SYSTEM_ACTOR);
  });
}
