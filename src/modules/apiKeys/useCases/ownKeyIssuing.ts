/**
 * Issuing a member's key of their own: the request checked and the key generated (planOwnApiKey), stored
 * with its evidence, and the pending form a key waiting for approval keeps until its approving vote stores
 * it (applyPendingOwnKey). ownApiKeys.ts asks the organization's policy which of the two a key takes.
 */

import type { Deps } from '../../../app/deps.ts';
import { SCOPES, type Scope, scopesOfRoles } from '../../../domain/access.ts';
import { normaliseEmail } from '../../../domain/contactDetails.ts';
import { AppError, invalidStateTransition, validationError } from '../../../domain/errors.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import { type ApiKeyRow, findApiKeyByHash } from '../../../store/repositories/apiKeys.ts';
import type { Queryable } from '../../../store/store.ts';
import type { Member } from '../../authorization/index.ts';
import { findMember } from '../../authorization/index.ts';
import { findApiKey, insertApiKey } from '../repository.ts';
import { API_KEY_DESCRIPTION_CHARS_MAX, type IssuedKey, newKey, recordKeyCreated } from './keys.ts';

/** Who asks for a key through the API or the console: the request's principal or the console's member. */
export interface KeyRequester {
  organizationId: string;
  /** The member signed in or the member the request's key acts for; null for a key that acts for none. */
  memberId: string | null;
  /** What the requester may do now: the new key never gets more. */
  scopes: readonly string[];
  actor: EvidenceActor;
}

export interface OwnKeyInput {
  scopes?: readonly string[] | undefined;
  description?: string | undefined;
  /** A member named by the request, by id or email (the console's form): anyone but the requester is refused. */
  memberId?: string | undefined;
  memberEmail?: string | undefined;
}

function ownKeysOnly(detail: string, code: AppError['code'], param?: string): AppError {
  return new AppError({ status: 403, code, title: 'Forbidden', detail, ...(param ? { param } : {}) });
}

/** A member's new key, checked and generated but not yet stored: the secret and the row to insert. */
export interface OwnKeyPlan {
  key: string;
  record: ApiKeyRow;
}

/**
 * Checks a member's request for a key of their own and generates it, storing nothing: it acts for the
 * requester, and its scopes are at most what both the requester's roles and the requester's own key grant,
 * so a key never mints a stronger one. A key that acts for no member cannot create keys at all. Keys for
 * another member, or server keys, come only from the operator's CLI (issueOperatorKey).
 */
export async function planOwnApiKey(
  tx: Queryable,
  deps: Deps,
  requester: KeyRequester,
  input: OwnKeyInput,
): Promise<OwnKeyPlan> {
  const member = await requestingMember(tx, requester, input);
  const scopes = ownKeyScopes(member, requester, input);
  const description = input.description?.trim() || null;
  if (description !== null && description.length > API_KEY_DESCRIPTION_CHARS_MAX) {
    throw validationError(
      'description',
      `description is at most ${API_KEY_DESCRIPTION_CHARS_MAX} characters`,
      'too_long',
    );
  }
  return newKey(deps, {
    organizationId: requester.organizationId,
    scopes,
    createdAt: deps.now(),
    memberId: member.id,
    createdBy: member.id,
    description,
  });
}

/** The active member the request acts for, who may ask only for a key of their own. */
async function requestingMember(tx: Queryable, requester: KeyRequester, input: OwnKeyInput): Promise<Member> {
  if (requester.memberId === null) {
    throw ownKeysOnly(
      'A key that acts for no member cannot create keys: a member creates their own, and server keys come from the operator’s CLI on the server (mkoba keys create).',
      'member_required',
    );
  }
  const member = await findMember(tx, requester.organizationId, requester.memberId);
  if (member?.status !== 'active') {
    throw ownKeysOnly('The member this request acts for has been removed.', 'member_required');
  }
  if (
    (input.memberId !== undefined && input.memberId !== member.id) ||
    (input.memberEmail !== undefined && normaliseEmail(input.memberEmail, 'member') !== member.email)
  ) {
    throw ownKeysOnly(
      'A member creates keys only for themself: a key for another member comes from the operator’s CLI on the server (mkoba keys create --member).',
      'own_keys_only',
      'member',
    );
  }
  return member;
}

/**
 * The scopes asked for (by default, all the ceiling holds), each a scope, none twice, at least one, and none
 * beyond the ceiling: what both the member's roles and the requester's own key grant.
 */
function ownKeyScopes(member: Member, requester: KeyRequester, input: OwnKeyInput): Scope[] {
  const held = new Set(requester.scopes);
  const ceiling = scopesOfRoles(member.roles).filter((scope) => held.has(scope));
  const scopes: Scope[] = [];
  (input.scopes ?? ceiling).forEach((scope, i) => {
    if (!(SCOPES as readonly string[]).includes(scope)) {
      throw validationError(
        `scopes.${i}`,
        `'${scope}' is not a scope; scopes are ${SCOPES.join(', ')}`,
        'invalid_value',
      );
    }
    if (!scopes.includes(scope as Scope)) scopes.push(scope as Scope);
  });
  if (scopes.length === 0) throw validationError('scopes', 'Choose at least one scope.', 'missing');
  const beyond = scopes.filter((scope) => !ceiling.includes(scope));
  if (beyond.length > 0) {
    throw ownKeysOnly(
      `Your roles (${member.roles.join(', ')}) and this key grant ${ceiling.join(', ') || 'no scope'}: a new key cannot hold ${beyond.join(', ')}.`,
      'beyond_member_roles',
      'scopes',
    );
  }
  return scopes;
}

/** Stores a planned key of a member's own, recorded as evidence: it authenticates from the commit on. */
export async function insertOwnApiKey(
  tx: Queryable,
  deps: Deps,
  record: ApiKeyRow,
  actor: EvidenceActor,
): Promise<void> {
  await insertApiKey(tx, record);
  await recordKeyCreated(tx, deps, record, actor);
}

/**
 * A member's new key, for themself only, stored at once (createOwnApiKeyGoverned in ownApiKeys.ts first asks
 * the organization's policy whether a key with more than `read`/`write` waits for approval).
 */
export async function createOwnApiKey(
  tx: Queryable,
  deps: Deps,
  requester: KeyRequester,
  input: OwnKeyInput,
): Promise<IssuedKey> {
  const { key, record } = await planOwnApiKey(tx, deps, requester, input);
  await insertOwnApiKey(tx, deps, record, requester.actor);
  return { key, record, organizationCreated: false };
}

/** What a key waiting for approval stores in its change: never the secret, only its hash (sealed there). */
export interface PendingKeyPayload {
  key_id: string;
  key_hash: string;
  display_prefix: string;
  scopes: Scope[];
  description: string | null;
}

export function pendingKeyPayload(record: ApiKeyRow): PendingKeyPayload {
  return {
    key_id: record.id,
    key_hash: record.keyHash,
    display_prefix: record.displayPrefix,
    scopes: record.scopes as Scope[],
    description: record.description,
  };
}

const KEY_HASH_PATTERN = /^[0-9a-f]{64}$/;

/** A stored pending key's payload, checked field by field (it is applied long after it was written). */
export function parsePendingKeyPayload(payload: Record<string, unknown>): PendingKeyPayload {
  const { key_id, key_hash, display_prefix, scopes, description } = payload;
  if (
    typeof key_id !== 'string' ||
    !key_id.startsWith('key_') ||
    typeof key_hash !== 'string' ||
    !KEY_HASH_PATTERN.test(key_hash) ||
    typeof display_prefix !== 'string' ||
    !Array.isArray(scopes) ||
    scopes.length === 0 ||
    !scopes.every((s) => (SCOPES as readonly unknown[]).includes(s)) ||
    (description !== null && typeof description !== 'string') ||
    Object.keys(payload).some(
      (k) => !['key_id', 'key_hash', 'display_prefix', 'scopes', 'description'].includes(k),
    )
  ) {
    throw validationError('payload', 'not a key waiting for approval', 'invalid_value');
  }
  return { key_id, key_hash, display_prefix, scopes: scopes as Scope[], description };
}

/**
 * An approved key of a member's own is stored: for the member who proposed it, never anyone else, in the
 * change's organization, with the requested scopes that the member's roles still grant now. Its secret was
 * shown to the proposer when the change was proposed; only its hash waited here, so the key authenticates
 * from this commit on and never before. A member no longer active, roles that grant none of the scopes, or
 * a hash already in use fail the change.
 */
export async function applyPendingOwnKey(
  tx: Queryable,
  deps: Deps,
  input: {
    organizationId: string;
    proposedBy: string;
    payload: Record<string, unknown>;
    actor: EvidenceActor;
  },
): Promise<ApiKeyRow> {
  const pending = parsePendingKeyPayload(input.payload);
  const member = await findMember(tx, input.organizationId, input.proposedBy);
  if (member?.status !== 'active') {
    throw ownKeysOnly(
      'A key waiting for approval is its proposer’s own: the member who proposed it is no longer active.',
      'member_required',
    );
  }
  const allowed = scopesOfRoles(member.roles);
  const scopes = pending.scopes.filter((scope) => allowed.includes(scope));
  if (scopes.length === 0) {
    throw ownKeysOnly(
      `${member.email}'s roles (${member.roles.join(', ')}) no longer grant any of ${pending.scopes.join(', ')}.`,
      'beyond_member_roles',
      'scopes',
    );
  }
  if (
    (await findApiKeyByHash(tx, pending.key_hash)) ||
    (await findApiKey(tx, input.organizationId, pending.key_id))
  ) {
    throw invalidStateTransition('Conflict', `Key ${pending.key_id} already exists.`);
  }
  const record: ApiKeyRow = {
    id: pending.key_id,
    organizationId: input.organizationId,
    environment: deps.environment,
    keyHash: pending.key_hash,
    displayPrefix: pending.display_prefix,
    scopes,
    createdAt: deps.now(),
    revokedAt: null,
    memberId: member.id,
    createdBy: member.id,
    description: pending.description,
  };
  await insertOwnApiKey(tx, deps, record, input.actor);
  return record;
}
