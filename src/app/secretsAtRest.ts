/**
 * Secrets at rest across the service, as an operator's and a starting process's duties: refuse a keyring
 * that cannot open what is stored, seal what an earlier version stored in clear (webhook secrets, and
 * idempotent responses that carry one), and the master-key rotation (`rewrap`) over webhook secrets,
 * stored responses and rail partner credentials. How each is sealed is its owner's: webhook secrets the
 * webhooks', responses encryption.ts's, credentials the rail partners'.
 */
import { keyringIds, rewrap, sealedKeyId } from '../domain/sealing.ts';
import { WEBHOOK_SECRET_PREFIX } from '../domain/signing.ts';
import {
  railPartnerConfigsNotWrappedBy,
  railPartnerCredentialKeyIds,
  updateRailPartnerConfig,
} from '../modules/railPartners/index.ts';
import {
  legacySecrets,
  saveSealedSecret,
  sealWebhookSecret,
  secretKeyIds,
  secretsNotWrappedBy,
} from '../modules/webhooks/index.ts';
import {
  deleteIdempotencyRecord,
  findIdempotencyRecord,
  idempotencyKeysContaining,
  insertIdempotencyRecord,
  tryLockIdempotencyKey,
} from '../store/repositories/idempotency.ts';
import { claimSeed, seedClaimed } from '../store/repositories/seeds.ts';
import type { Deps } from './deps.ts';
import { isSealedResponse, type SealedResponse, sealResponseBody } from './encryption.ts';

/** Rows one transaction seals or re-wraps at most, so a large table never holds one long transaction. */
export const SECRETS_RESEAL_BATCH_ROWS = 500;

/** Marks (in the seeds table) that stored responses kept in clear by an earlier version have been sealed. */
const CLEAR_RESPONSES_SEALED = 'sealed_clear_idempotent_responses';

/**
 * Master keys that wrap stored webhook secrets or rail partner credentials but that the keyring lacks:
 * non-empty means it cannot sign, or cannot call a partner.
 */
export async function missingMasterKeys(deps: Deps): Promise<string[]> {
  const known = new Set(keyringIds(deps.keyring));
  const stored = new Set([
    ...(await secretKeyIds(deps.store)),
    ...(await railPartnerCredentialKeyIds(deps.store)),
  ]);
  return [...stored].filter((id) => !known.has(id));
}

export interface ResealCounts {
  /** Webhook secrets sealed, or re-wrapped under the current master key. */
  secrets: number;
  /** Stored idempotent responses likewise. */
  responses: number;
}

/** What a master-key rotation re-wrapped: also the rail partner credentials (never stored in clear). */
export interface RewrapCounts extends ResealCounts {
  railPartnerCredentials: number;
}

/** Stored responses that carry a secret in clear (written before responses were sealed), sealed. */
function sealClearResponse(deps: Deps, target: { organizationId: string; key: string }, body: unknown) {
  const secret = (body as { secret?: unknown } | null)?.secret;
  if (isSealedResponse(body) || typeof secret !== 'string' || !secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    return undefined;
  }
  return sealResponseBody(deps, target, body);
}

function rewrapResponse(deps: Deps, body: unknown): SealedResponse | undefined {
  if (!isSealedResponse(body) || sealedKeyId(body.sealed_response) === deps.keyring.current?.id)
    return undefined;
  return { sealed_response: rewrap(deps.keyring, body.sealed_response, deps.randomBytes) };
}

/**
 * Rewrites, one record per transaction under the key's lock, every stored response containing `fragment`
 * that `transform` changes (it returns undefined to leave one alone). A record in use is skipped.
 */
async function rewriteResponses(
  deps: Deps,
  fragment: string,
  transform: (target: { organizationId: string; key: string }, body: unknown) => unknown,
): Promise<number> {
  let rewritten = 0;
  let after: { organizationId: string; key: string } | undefined;
  for (;;) {
    const targets = await idempotencyKeysContaining(deps.store, fragment, after, SECRETS_RESEAL_BATCH_ROWS);
    for (const target of targets) {
      const done = await deps.store.transaction(async (tx) => {
        if (!(await tryLockIdempotencyKey(tx, target.organizationId, target.key))) return false;
        const record = await findIdempotencyRecord(tx, target.organizationId, target.key);
        const body = record && transform(target, JSON.parse(record.responseText));
        if (!record || body === undefined) return false;
        await deleteIdempotencyRecord(tx, target.organizationId, target.key);
        await insertIdempotencyRecord(tx, { ...record, responseText: JSON.stringify(body) });
        return true;
      });
      if (done) rewritten++;
    }
    if (targets.length < SECRETS_RESEAL_BATCH_ROWS) return rewritten;
    after = targets.at(-1);
  }
}

/**
 * Seals what was stored in clear before secrets were sealed: webhook secrets, and idempotent responses
 * that carry one. Runs at every start (serve, worker); a no-op once done.
 */
export async function sealClearSecrets(deps: Deps): Promise<ResealCounts> {
  let secrets = 0;
  for (;;) {
    const batch = await deps.store.transaction(async (tx) => {
      const rows = await legacySecrets(tx, SECRETS_RESEAL_BATCH_ROWS);
      for (const row of rows) {
        await saveSealedSecret(
          tx,
          row.id,
          sealWebhookSecret(deps, row.subscriptionId, row.legacyPlaintext ?? ''),
        );
      }
      return rows.length;
    });
    secrets += batch;
    if (batch < SECRETS_RESEAL_BATCH_ROWS) break;
  }
  // Responses in clear can only predate sealing, so they are looked for once (the scan reads every record).
  if (await seedClaimed(deps.store, CLEAR_RESPONSES_SEALED)) return { secrets, responses: 0 };
  const responses = await rewriteResponses(deps, WEBHOOK_SECRET_PREFIX, (target, body) =>
    sealClearResponse(deps, target, body),
  );
  await claimSeed(deps.store, CLEAR_RESPONSES_SEALED, deps.now());
  return { secrets, responses };
}

/**
 * Master-key rotation: re-wraps every stored data key that an older master key wraps under the current one
 * (the sealed values themselves are not re-encrypted), and seals anything still in clear. Afterwards the
 * older keys open nothing and may be removed.
 */
export async function rewrapSecrets(deps: Deps): Promise<RewrapCounts> {
  const current = deps.keyring.current;
  if (!current) throw new Error('no current master key to re-wrap under');
  const missing = await missingMasterKeys(deps);
  if (missing.length > 0) {
    throw new Error(
      `stored secrets are sealed under master key ${missing.join(', ')}, which this process lacks: add it to MKOBA_ENCRYPTION_KEYS_PREVIOUS first`,
    );
  }
  const cleared = await sealClearSecrets(deps);
  let secrets = cleared.secrets;
  for (;;) {
    const batch = await deps.store.transaction(async (tx) => {
      const rows = await secretsNotWrappedBy(tx, current.id, SECRETS_RESEAL_BATCH_ROWS);
      for (const row of rows) {
        const sealed = rewrap(deps.keyring, row.sealed ?? '', deps.randomBytes);
        await saveSealedSecret(tx, row.id, { keyId: sealedKeyId(sealed), sealed });
      }
      return rows.length;
    });
    secrets += batch;
    if (batch < SECRETS_RESEAL_BATCH_ROWS) break;
  }
  const responses = await rewriteResponses(deps, 'sealed.v1.', (_target, body) => rewrapResponse(deps, body));
  let railPartnerCredentials = 0;
  for (;;) {
    const batch = await deps.store.transaction(async (tx) => {
      const configs = await railPartnerConfigsNotWrappedBy(tx, current.id, SECRETS_RESEAL_BATCH_ROWS);
      for (const config of configs) {
        const sealed = rewrap(deps.keyring, config.sealedCredentials, deps.randomBytes);
        await updateRailPartnerConfig(tx, { ...config, sealedCredentials: sealed }, sealedKeyId(sealed));
      }
      return configs.length;
    });
    railPartnerCredentials += batch;
    if (batch < SECRETS_RESEAL_BATCH_ROWS) break;
  }
  return { secrets, responses: cleared.responses + responses, railPartnerCredentials };
}
