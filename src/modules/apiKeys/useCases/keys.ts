/**
 * API keys as the server and admins handle them: issued by the seed or the operator's CLI, listed, and
 * revoked. Keys are shown once and stored only as a hash. A member's own keys are issued in
 * ownApiKeyIssuing.ts; requests are authenticated in apiKeyAuthentication.ts.
 */

import { forgetCachedKey, forgetCachedKeys } from '../../../app/apiKeyAuthentication.ts';
import type { Deps } from '../../../app/deps.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import { listPage } from '../../../app/reads.ts';
import { DEFAULT_SCOPES, SCOPES, type Scope, scopesOfRoles } from '../../../domain/access.ts';
import { displayPrefix, formatApiKey, hashApiKey } from '../../../domain/apiKeys.ts';
import { normaliseEmail } from '../../../domain/contactDetails.ts';
import { resourceMissing, validationError } from '../../../domain/errors.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import type { PageRequest } from '../../../domain/pagination.ts';
import type { ApiKeyRow } from '../../../store/repositories/apiKeys.ts';
import { findOrganizationByName } from '../../../store/repositories/organizations.ts';
import type { Queryable } from '../../../store/store.ts';
import { findMemberByEmail } from '../../authorization/index.ts';
import { ensureOrganizationNamed } from '../../organization/index.ts';
import { findApiKey, insertApiKey, listApiKeys, listApiKeysPage, revokeApiKey } from '../repository.ts';

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { ApiKeyRow } from '../../../store/repositories/apiKeys.ts';

/** The longest description a key may carry: a short note by its creator. */
export const API_KEY_DESCRIPTION_CHARS_MAX = 200;

export interface IssuedKey {
  key: string;
  record: ApiKeyRow;
  organizationCreated: boolean;
}

export interface IssueKeyInput {
  organizationName: string;
  scopes?: readonly Scope[];
  /** A caller-chosen key (MKOBA_SANDBOX_API_KEY); otherwise one is generated. */
  key?: string | undefined;
  /**
   * The email of the member the key acts for. Its scopes are a ceiling: each request gets those the
   * member's roles grant at that moment; without named scopes the key follows the roles entirely.
   */
  memberEmail?: string | undefined;
  /**
   * Who creates it, as the key records it: `operator:<user>` from the CLI (issueOperatorKey), `seed` from
   * the sandbox's seed; `operator` when server-side code issues it without naming anyone.
   */
  createdBy?: string | undefined;
}

export async function issueApiKeyIn(tx: Queryable, deps: Deps, input: IssueKeyInput): Promise<IssuedKey> {
  const now = deps.now();
  const { organization, created } = await ensureOrganizationNamed(tx, deps, input.organizationName);
  let memberId: string | null = null;
  let scopes = [...(input.scopes ?? DEFAULT_SCOPES)];
  if (input.memberEmail !== undefined) {
    const email = normaliseEmail(input.memberEmail, 'member');
    const member = await findMemberByEmail(tx, organization.id, email);
    if (member?.status !== 'active') {
      throw validationError(
        'member',
        `${email} is not an active member of ${input.organizationName}`,
        'unknown_member',
      );
    }
    memberId = member.id;
    const allowed = scopesOfRoles(member.roles);
    // Without named scopes the key follows the member: every scope, narrowed to the roles at each request.
    if (input.scopes === undefined) scopes = [...SCOPES];
    const beyond = input.scopes === undefined ? [] : scopes.filter((scope) => !allowed.includes(scope));
    if (beyond.length > 0) {
      throw validationError(
        'scopes',
        `${email} (${member.roles.join(', ')}) cannot hold the ${beyond.join(', ')} scope`,
        'beyond_member_roles',
      );
    }
  }
  const { key, record } = newKey(
    deps,
    {
      organizationId: organization.id,
      scopes,
      createdAt: now,
      memberId,
      createdBy: input.createdBy ?? 'operator',
      description: null,
    },
    input.key,
  );
  await insertApiKey(tx, record);
  return { key, record, organizationCreated: created };
}

/**
 * A new key of this deployment's environment (drawn now unless `given`) and its row, which keeps only the
 * key's hash and display prefix: the key itself is shown once and never stored.
 */
export function newKey(
  deps: Deps,
  fields: Pick<
    ApiKeyRow,
    'organizationId' | 'scopes' | 'createdAt' | 'memberId' | 'createdBy' | 'description'
  >,
  given?: string,
): { key: string; record: ApiKeyRow } {
  const key = given ?? formatApiKey(deps.environment, deps.randomBytes(64));
  const record: ApiKeyRow = {
    id: deps.newId('apiKey'),
    organizationId: fields.organizationId,
    environment: deps.environment,
    keyHash: hashApiKey(key),
    displayPrefix: displayPrefix(key),
    scopes: fields.scopes,
    createdAt: fields.createdAt,
    revokedAt: null,
    memberId: fields.memberId,
    createdBy: fields.createdBy,
    description: fields.description,
  };
  return { key, record };
}

/**
 * Issues a key on the server, outside every member's reach: the only way to a key for another member, or to
 * a key that acts for no member with more than `read` and `write`. Reached only by server-side code, which
 * the operator's CLI (`mkoba keys create`) is; never by the API or the console.
 */
export function issueApiKey(deps: Deps, input: IssueKeyInput): Promise<IssuedKey> {
  return deps.store.transaction((tx) => issueApiKeyIn(tx, deps, input));
}

/** The length an operator's name may have in `operator:<user>`. */
export const OPERATOR_NAME_CHARS_MAX = 64;

/** The name of the operator who ran a CLI command, as records keep it: trimmed, without spaces. */
export function checkOperatorName(name: string): string {
  const operator = name.trim();
  if (operator === '' || operator.length > OPERATOR_NAME_CHARS_MAX || /[\s\p{Cc}]/u.test(operator)) {
    throw validationError(
      'operator',
      `the operator's name must be 1 to ${OPERATOR_NAME_CHARS_MAX} characters without spaces`,
      'invalid_format',
    );
  }
  return operator;
}

/**
 * `mkoba keys create`: a key issued by the operator who ran the CLI on the server, for any member of the
 * organization or for none, with any scopes. The key records `operator:<user>` as its creator, and the
 * organization's evidence chain records who ran it, for which member and with which scopes.
 */
export function issueOperatorKey(
  deps: Deps,
  input: Omit<IssueKeyInput, 'createdBy' | 'key'> & { operator: string },
): Promise<IssuedKey> {
  const operator = checkOperatorName(input.operator);
  return deps.store.transaction(async (tx) => {
    const issued = await issueApiKeyIn(tx, deps, { ...input, createdBy: `operator:${operator}` });
    await recordKeyCreated(tx, deps, issued.record, SYSTEM_ACTOR, { operator });
    return issued;
  });
}

/** The key's creation in the organization's evidence chain. */
export async function recordKeyCreated(
  tx: Queryable,
  deps: Deps,
  record: ApiKeyRow,
  actor: EvidenceActor,
  extra: { operator?: string } = {},
): Promise<void> {
  await appendEvidence(tx, deps, [
    {
      organizationId: record.organizationId,
      kind: 'api_key.created',
      actor,
      data: {
        key_id: record.id,
        display_prefix: record.displayPrefix,
        scopes: record.scopes,
        member: record.memberId,
        created_by: record.createdBy,
        ...(extra.operator === undefined ? {} : { operator: extra.operator }),
      },
    },
  ]);
}

/** A newest-first page of the organization's keys (never their hashes outside this process). */
export const listKeysPage = listPage<PageRequest, ApiKeyRow>(listApiKeysPage);

/**
 * An admin revokes one of the organization's keys (any of them: revoking takes power away, it never gives
 * any). Another organization's key is a 404, as if it did not exist. Recorded as evidence.
 */
export async function revokeOrganizationKeyIn(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  keyId: string,
  actor: EvidenceActor,
): Promise<ApiKeyRow> {
  const key = await findApiKey(tx, organizationId, keyId);
  if (!key) throw resourceMissing('API key', keyId);
  if (key.revokedAt !== null) return key;
  const revoked = (await revokeApiKey(tx, keyId, deps.now())) ?? key;
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'api_key.revoked',
      actor,
      data: { key_id: key.id, display_prefix: key.displayPrefix, member: key.memberId },
    },
  ]);
  // This process stops accepting it at once (and reads keys afresh until the change has surely committed).
  forgetCachedKeys(deps);
  return revoked;
}

export async function listOrganizationKeys(deps: Deps, organizationName: string): Promise<ApiKeyRow[]> {
  const organization = await findOrganizationByName(deps.store, organizationName);
  return organization ? listApiKeys(deps.store, organization.id) : [];
}

export async function revokeKey(deps: Deps, keyId: string): Promise<ApiKeyRow | undefined> {
  const revoked = await revokeApiKey(deps.store, keyId, deps.now());
  // This process stops accepting it at once; others within API_KEY_CACHE_TTL_MS.
  if (revoked) forgetCachedKey(deps.store, revoked.keyHash);
  return revoked;
}
