/** Issuing, listing, revoking and checking API keys. Keys are shown once and stored only as a hash. */
import {
  displayPrefix,
  type Environment,
  formatApiKey,
  hashApiKey,
  parseApiKey,
  SCOPES,
  type Scope,
} from '../domain/apiKeys.ts';
import { AppError } from '../domain/errors.ts';
import {
  type ApiKeyRow,
  findApiKeyByHash,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
} from '../store/repositories/apiKeys.ts';
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
}

export async function issueApiKeyIn(tx: Queryable, deps: Deps, input: IssueKeyInput): Promise<IssuedKey> {
  const now = deps.now();
  const { organization, created } = await ensureOrganization(tx, {
    id: deps.newId('organization'),
    name: input.organizationName,
    // Production organizations subscribe to webhooks once the operator enables it; the sandbox's can at once.
    webhookSubscriptionsEnabled: deps.environment === 'sandbox',
    createdAt: now,
  });
  const key = input.key ?? formatApiKey(deps.environment, deps.randomBytes(64));
  const record: ApiKeyRow = {
    id: deps.newId('apiKey'),
    organizationId: organization.id,
    environment: deps.environment,
    keyHash: hashApiKey(key),
    displayPrefix: displayPrefix(key),
    scopes: [...(input.scopes ?? SCOPES)],
    createdAt: now,
    revokedAt: null,
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
  return revokeApiKey(deps.store, keyId, deps.now());
}

export interface Principal {
  organizationId: string;
  keyId: string;
  scopes: string[];
  environment: Environment;
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
      "The Authorization header must be 'Bearer ' followed by a key starting with sk_sandbox_ or sk_live_.",
    );
  }
  if (parsed.environment !== deps.environment) {
    throw unauthorized(
      'api_key_environment_mismatch',
      `This is the ${deps.environment} environment; the key belongs to ${parsed.environment}.`,
    );
  }
  const record = await findApiKeyByHash(deps.store, hashApiKey(match[1]));
  if (!record) throw unauthorized('invalid_api_key', 'The API key is not recognised.');
  if (record.revokedAt !== null) throw unauthorized('api_key_revoked', 'The API key has been revoked.');
  return {
    organizationId: record.organizationId,
    keyId: record.id,
    scopes: record.scopes,
    environment: record.environment,
  };
}
