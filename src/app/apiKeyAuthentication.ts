/**
 * Authenticating a request by its API key: the Authorization header checked and the key found by its hash,
 * through a short per-process cache that a change to members or keys clears; the principal it yields.
 */

import { type Environment, effectiveScopes, type MemberRole } from '../domain/access.ts';
import { hashApiKey, parseApiKey } from '../domain/apiKeys.ts';
import { AppError } from '../domain/errors.ts';
import { type ApiKeyWithMember, findApiKeyByHash } from '../store/repositories/apiKeys.ts';
import type { Deps } from './deps.ts';

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

/** Forgets one key in this process: revoked, it stops working here at once. */
export function forgetCachedKey(store: object, keyHash: string): void {
  keyCacheOf(store).entries.delete(keyHash);
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
