/** Issuing, listing, revoking and checking API keys. Keys are shown once and stored only as a hash. */
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
import { AppError, validationError } from '../domain/errors.ts';
import { effectiveScopes, type MemberRole, normaliseEmail, scopesOfRoles } from '../domain/members.ts';
import {
  type ApiKeyRow,
  type ApiKeyWithMember,
  findApiKeyByHash,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
} from '../store/repositories/apiKeys.ts';
import { findMemberByEmail } from '../store/repositories/members.ts';
import { ensureOrganization, findOrganizationByName } from '../store/repositories/organizations.ts';
import type { Queryable } from '../store/store.ts';
import type { Deps } from './deps.ts';

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
  };
  await insertApiKey(tx, record);
  return { key, record, organizationCreated: created };
}

export function issueApiKey(deps: Deps, input: IssueKeyInput): Promise<IssuedKey> {
  return deps.store.transaction((tx) => issueApiKeyIn(tx, deps, input));
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

/** One cache per database: processes share nothing, and tests with several databases stay apart. */
const caches = new WeakMap<object, Map<string, CachedKey>>();

function cacheOf(store: object): Map<string, CachedKey> {
  let cache = caches.get(store);
  if (!cache) {
    cache = new Map();
    caches.set(store, cache);
  }
  return cache;
}

/** The key's row by hash, from the cache while it is fresh. */
async function findKey(deps: Deps, keyHash: string): Promise<ApiKeyWithMember | undefined> {
  const cache = cacheOf(deps.store);
  const nowMs = deps.now().getTime();
  const cached = cache.get(keyHash);
  if (cached && nowMs - cached.fetchedAtMs < API_KEY_CACHE_TTL_MS && nowMs >= cached.fetchedAtMs) {
    return cached.record;
  }
  const record = await findApiKeyByHash(deps.store, keyHash);
  cache.delete(keyHash);
  if (record) {
    if (cache.size >= API_KEY_CACHE_ENTRIES_MAX) cache.delete(cache.keys().next().value as string);
    cache.set(keyHash, { record, fetchedAtMs: nowMs });
  }
  return record;
}

/**
 * Forgets every key this process holds, so a change to members (roles, removal) takes effect here at once;
 * other processes see it within API_KEY_CACHE_TTL_MS.
 */
export function forgetCachedKeys(deps: Deps): void {
  cacheOf(deps.store).clear();
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

/** Resolves an Authorization header to a principal, or throws the 401 that says exactly what is wrong. */
export async function authenticate(deps: Deps, authorization: string | undefined): Promise<Principal> {
  if (authorization === undefined || authorization.trim() === '') {
    throw unauthorized('api_key_missing', "Send your API key as 'Authorization: Bearer sk_…'.");
  }
  const match = /^Bearer +(\S+)$/i.exec(authorization.trim());
  const parsed = match?.[1] ? parseApiKey(match[1]) : { ok: false as const };
  if (!match?.[1] || !parsed.ok) {
    throw unauthorized(
      'api_key_malformed',
      "The Authorization header must be 'Bearer ' followed by a key starting with sk_sandbox_, sk_pilot_ or sk_live_.",
    );
  }
  if (parsed.environment !== deps.environment) {
    throw unauthorized(
      'api_key_environment_mismatch',
      `This is the ${deps.environment} environment; the key belongs to ${parsed.environment}.`,
    );
  }
  const record = await findKey(deps, hashApiKey(match[1]));
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
