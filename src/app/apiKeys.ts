/**
 * Issuing, listing, revoking and checking API keys. Keys are shown once and stored only as a hash.
 *
 * Past 400 lines: issuing (seed, operator, a member's own), listing, revoking and authenticating with its
 * per-process cache belong to one record and its rules; authentication is the next piece to move out.
 */
import {
  DEFAULT_SCOPES,
  displayPrefix,
  type Environment,
  formatApiKey,
  hashApiKey,
  parseApiKey,
  SCOPES,
  type Scope,
} from '../domain/apiKeys.ts';
import { AppError, resourceMissing, validationError } from '../domain/errors.ts';
import type { EvidenceActor } from '../domain/evidence.ts';
import { effectiveScopes, type MemberRole, normaliseEmail, scopesOfRoles } from '../domain/members.ts';
import { type Page, type PageRequest, toPage } from '../domain/pagination.ts';
import {
  type ApiKeyRow,
  type ApiKeyWithMember,
  findApiKey,
  findApiKeyByHash,
  insertApiKey,
  listApiKeys,
  listApiKeysPage,
  revokeApiKey,
} from '../store/repositories/apiKeys.ts';
import { findMember, findMemberByEmail } from '../store/repositories/members.ts';
import { ensureOrganization, findOrganizationByName } from '../store/repositories/organizations.ts';
import type { Queryable } from '../store/store.ts';
import type { Deps } from './deps.ts';
import { appendEvidence, SYSTEM_ACTOR } from './evidence.ts';

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { ApiKeyRow } from '../store/repositories/apiKeys.ts';

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

/** The organization of that name, created if new (the CLI's way in). */
export function ensureOrganizationNamed(tx: Queryable, deps: Deps, name: string) {
  return ensureOrganization(tx, {
    id: deps.newId('organization'),
    name,
    // Production organizations subscribe to webhooks once the operator enables it; the sandbox's can at once.
    webhookSubscriptionsEnabled: deps.environment === 'sandbox',
    createdAt: deps.now(),
  });
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
  const key = input.key ?? formatApiKey(deps.environment, deps.randomBytes(64));
  const record: ApiKeyRow = {
    id: deps.newId('apiKey'),
    organizationId: organization.id,
    environment: deps.environment,
    keyHash: hashApiKey(key),
    displayPrefix: displayPrefix(key),
    scopes,
    createdAt: now,
    revokedAt: null,
    memberId,
    createdBy: input.createdBy ?? 'operator',
    description: null,
  };
  await insertApiKey(tx, record);
  return { key, record, organizationCreated: created };
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

async function recordKeyCreated(
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
  const description = input.description?.trim() || null;
  if (description !== null && description.length > API_KEY_DESCRIPTION_CHARS_MAX) {
    throw validationError(
      'description',
      `description is at most ${API_KEY_DESCRIPTION_CHARS_MAX} characters`,
      'too_long',
    );
  }
  const key = formatApiKey(deps.environment, deps.randomBytes(64));
  const record: ApiKeyRow = {
    id: deps.newId('apiKey'),
    organizationId: requester.organizationId,
    environment: deps.environment,
    keyHash: hashApiKey(key),
    displayPrefix: displayPrefix(key),
    scopes,
    createdAt: deps.now(),
    revokedAt: null,
    memberId: member.id,
    createdBy: member.id,
    description,
  };
  return { key, record };
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
    throw new AppError({
      status: 409,
      code: 'invalid_state_transition',
      title: 'Conflict',
      detail: `Key ${pending.key_id} already exists.`,
    });
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

/** A newest-first page of the organization's keys (never their hashes outside this process). */
export async function listKeysPage(
  deps: Deps,
  organizationId: string,
  page: PageRequest,
): Promise<Page<ApiKeyRow>> {
  return toPage(await listApiKeysPage(deps.store, organizationId, page, page.limit + 1), page.limit);
}

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
  if (revoked) cacheOf(deps.store).delete(revoked.keyHash);
  return revoked;
}

/**
 * How long a process keeps a found API key without looking at it again: a key revoked by another process
 * (a CLI on PostgreSQL, another server) stops working here within this bound; in the revoking process, at
 * once. Keys that are not found are never kept, so a new key works at once everywhere.
 */
export const API_KEY_CACHE_TTL_MS = 5_000;
/** Keys one process keeps at most; the oldest go first. */
export const API_KEY_CACHE_ENTRIES_MAX = 10_000;

interface CachedKey {
  record: ApiKeyWithMember;
  fetchedAtMs: number;
}

interface KeyCache {
  entries: Map<string, CachedKey>;
  /**
   * Until then nothing is kept: a change to members or keys clears the cache inside its transaction, and a
   * request read between that and the commit would otherwise keep the old roles for a whole TTL.
   */
  uncachedUntilMs: number;
}

/** One cache per database: processes share nothing, and tests with several databases stay apart. */
const caches = new WeakMap<object, KeyCache>();

function keyCacheOf(store: object): KeyCache {
  let cache = caches.get(store);
  if (!cache) {
    cache = { entries: new Map(), uncachedUntilMs: Number.NEGATIVE_INFINITY };
    caches.set(store, cache);
  }
  return cache;
}

function cacheOf(store: object): Map<string, CachedKey> {
  return keyCacheOf(store).entries;
}

/** The key's row by hash, from the cache while it is fresh. */
async function findKey(deps: Deps, keyHash: string): Promise<ApiKeyWithMember | undefined> {
  const keyCache = keyCacheOf(deps.store);
  const cache = keyCache.entries;
  const nowMs = deps.now().getTime();
  const cached = cache.get(keyHash);
  if (cached && nowMs - cached.fetchedAtMs < API_KEY_CACHE_TTL_MS && nowMs >= cached.fetchedAtMs) {
    return cached.record;
  }
  const record = await findApiKeyByHash(deps.store, keyHash);
  cache.delete(keyHash);
  if (record && nowMs >= keyCache.uncachedUntilMs) {
    if (cache.size >= API_KEY_CACHE_ENTRIES_MAX) cache.delete(cache.keys().next().value as string);
    cache.set(keyHash, { record, fetchedAtMs: nowMs });
  }
  return record;
}

/**
 * Forgets every key this process holds, so a change to members (roles, removal) or keys takes effect here
 * at once; other processes see it within API_KEY_CACHE_TTL_MS. Called inside the changing transaction, so
 * for API_KEY_CACHE_TTL_MS after it keys are read afresh on every request, never kept: a read between the
 * call and the commit cannot keep what the change undoes.
 */
export function forgetCachedKeys(deps: Deps): void {
  const cache = keyCacheOf(deps.store);
  cache.entries.clear();
  cache.uncachedUntilMs = deps.now().getTime() + API_KEY_CACHE_TTL_MS;
}

/** The member a key acts for, as authentication found them. */
export interface PrincipalMember {
  id: string;
  email: string;
  roles: MemberRole[];
}

export interface Principal {
  organizationId: string;
  keyId: string;
  /** What the key may do: its own scopes, narrowed to its member's roles when it acts for one. */
  scopes: string[];
  environment: Environment;
  member: PrincipalMember | null;
}

/** Who did something, as it is recorded (`created_by`, `initiated_by`): the member, else the key. */
export function actorIdOf(principal: Pick<Principal, 'keyId' | 'member'>): string {
  return principal.member?.id ?? principal.keyId;
}

function unauthorized(code: AppError['code'], detail: string): AppError {
  return new AppError({ status: 401, code, title: 'Unauthorized', detail });
}

/** A key that is not one by its shape: the Authorization header is the offending input, named as `param`. */
function malformed(code: string, detail: string): AppError {
  return new AppError({
    status: 401,
    code: 'api_key_malformed',
    title: 'Unauthorized',
    detail,
    param: 'Authorization',
    errors: [{ param: 'Authorization', code, message: detail }],
  });
}

/** Resolves an Authorization header to a principal, or throws the 401 that says exactly what is wrong. */
export async function authenticate(deps: Deps, authorization: string | undefined): Promise<Principal> {
  if (authorization === undefined || authorization.trim() === '') {
    throw unauthorized('api_key_missing', "Send your API key as 'Authorization: Bearer sk_…'.");
  }
  const [scheme, key, ...more] = authorization.trim().split(/ +/);
  if (scheme?.toLowerCase() !== 'bearer' || key === undefined || more.length > 0) {
    const why =
      scheme?.toLowerCase() !== 'bearer'
        ? "it does not start with 'Bearer '"
        : key === undefined
          ? "no key follows 'Bearer '"
          : "more than one word follows 'Bearer '";
    throw malformed(
      'bearer_scheme',
      `The Authorization header must be 'Bearer ' followed by your API key; ${why}.`,
    );
  }
  const parsed = parseApiKey(key);
  if (!parsed.ok) throw malformed(parsed.fault.code, parsed.fault.message);
  if (parsed.environment !== deps.environment) {
    throw unauthorized(
      'api_key_environment_mismatch',
      `This is the ${deps.environment} environment; the key belongs to ${parsed.environment}.`,
    );
  }
  const record = await findKey(deps, hashApiKey(key));
  if (!record) throw unauthorized('invalid_api_key', 'The API key is not recognised.');
  if (record.revokedAt !== null) throw unauthorized('api_key_revoked', 'The API key has been revoked.');
  if (record.member !== null && record.member.status !== 'active') {
    throw unauthorized('api_key_revoked', 'The API key acts for a member who has been removed.');
  }
  return {
    organizationId: record.organizationId,
    keyId: record.id,
    scopes: record.member ? effectiveScopes(record.scopes, record.member.roles) : record.scopes,
    environment: record.environment,
    member: record.member && { id: record.member.id, email: record.member.email, roles: record.member.roles },
  };
}
