/**
 * Secrets at rest: webhook signing secrets and the stored idempotent responses that carry one are sealed
 * (src/domain/sealing.ts) with the keyring in Deps. Also the start-up duties (refuse a keyring that cannot
 * open what is stored, seal what was stored in clear before) and the master-key rotation (`rewrap`).
 */
import { keyringIds, open, rewrap, seal, sealedKeyId } from '../domain/sealing.ts';
import { WEBHOOK_SECRET_PREFIX } from '../domain/signing.ts';
import { webhookSecretContext } from '../domain/webhooks.ts';
import {
  deleteIdempotencyRecord,
  findIdempotencyRecord,
  idempotencyKeysContaining,
  insertIdempotencyRecord,
  tryLockIdempotencyKey,
} from '../store/repositories/idempotency.ts';
import {
  railPartnerConfigsNotWrappedBy,
  railPartnerCredentialKeyIds,
  updateRailPartnerConfig,
} from '../store/repositories/railPartners.ts';
import { claimSeed, seedClaimed } from '../store/repositories/seeds.ts';
import {
  legacySecrets,
  type SealedSecret,
  saveSealedSecret,
  secretKeyIds,
  secretsNotWrappedBy,
} from '../store/repositories/webhooks.ts';
import type { Deps } from './deps.ts';

/** Rows one transaction seals or re-wraps at most, so a large table never holds one long transaction. */
export const SECRETS_RESEAL_BATCH_ROWS = 500;
/** Marks (in the seeds table) that stored responses kept in clear by an earlier version have been sealed. */
const CLEAR_RESPONSES_SEALED = 'sealed_clear_idempotent_responses';

export function sealWebhookSecret(deps: Deps, subscriptionId: string, secret: string): SealedSecret {
  const sealed = seal(deps.keyring, secret, webhookSecretContext(subscriptionId), deps.randomBytes);
  return { keyId: sealedKeyId(sealed), sealed };
}

/** A stored response body that carries a secret, sealed for the one Idempotency-Key it answers. */
interface SealedResponse {
  sealed_response: string;
}

const responseContext = (organizationId: string, key: string) =>
  `idempotent_response:${organizationId}:${key}`;

function isSealedResponse(body: unknown): body is SealedResponse {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as Partial<SealedResponse>).sealed_response === 'string' &&
    Object.keys(body).length === 1
  );
}

/** The body to store for a response that carries a secret. */
export function sealResponseBody(
  deps: Deps,
  target: { organizationId: string; key: string },
  body: unknown,
): SealedResponse {
  return {
    sealed_response: seal(
      deps.keyring,
      JSON.stringify(body),
      responseContext(target.organizationId, target.key),
      deps.randomBytes,
    ),
  };
}

/** The text to store for a response that carries a secret: the exact text sent, sealed. */
export function sealResponseText(
  deps: Deps,
  target: { organizationId: string; key: string },
  text: string,
): string {
  const sealed: SealedResponse = {
    sealed_response: seal(
      deps.keyring,
      text,
      responseContext(target.organizationId, target.key),
      deps.randomBytes,
    ),
  };
  return JSON.stringify(sealed);
}

/** A stored response text as the client receives it again: a sealed one opened (byte for byte), any other as it is. */
export function openResponseText(
  deps: Deps,
  target: { organizationId: string; key: string },
  text: string,
): string {
  if (!text.startsWith('{"sealed_response":')) return text;
  const body: unknown = JSON.parse(text);
  if (!isSealedResponse(body)) return text;
  return open(deps.keyring, body.sealed_response, responseContext(target.organizationId, target.key));
}

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
