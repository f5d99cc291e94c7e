/**
 * An organization's Smile ID configuration: `base_url` (checked under the deployment's outbound policy) and
 * `partner_id` shown back, the `api_key` sealed at rest with the same sealing as rail partners' credentials
 * (src/domain/sealing.ts), and the unguessable path token of its callback URL, made once and kept. Each
 * change is recorded as evidence naming what changed, never the key.
 */
import type { Deps } from '../../../../app/deps.ts';
import { appendEvidence } from '../../../../app/evidence.ts';
import { resourceMissing, validationError } from '../../../../domain/errors.ts';
import type { EvidenceActor } from '../../../../domain/evidence.ts';
import { checkOutboundUrl, outboundPolicyFor } from '../../../../domain/outboundAddresses.ts';
import { open, seal } from '../../../../domain/sealing.ts';
import type { Queryable } from '../../../../store/store.ts';
import { findSmileIdConfig, type SmileIdConfig, upsertSmileIdConfig } from '../../repository/smileId.ts';

/** Random bytes in a callback path token (base64url: 43 characters). */
const CALLBACK_TOKEN_BYTES = 32;
/** The longest partner id or API key taken. */
const SMILE_ID_FIELD_LENGTH_MAX = 200;

/** As rail partners are configured: the provider, its settings (shown back) and credentials (write-only). */
export interface SmileIdConfigInput {
  provider: 'smile_id';
  settings: { base_url: string; partner_id: string };
  credentials: { api_key: string };
}

export type { SmileIdConfig } from '../../repository/smileId.ts';

const credentialsContext = (organizationId: string) => `verification_provider_credentials:${organizationId}`;

function checkField(value: unknown, param: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > SMILE_ID_FIELD_LENGTH_MAX) {
    throw validationError(param, `${param} must be a string of 1 to ${SMILE_ID_FIELD_LENGTH_MAX} characters`);
  }
  return value;
}

export async function configureSmileId(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: SmileIdConfigInput,
  actor: EvidenceActor,
): Promise<SmileIdConfig> {
  if (input.provider !== 'smile_id') throw validationError('provider', 'provider must be smile_id');
  const baseUrl = checkField(input.settings?.base_url, 'settings.base_url').replace(/\/+$/, '');
  const verdict = checkOutboundUrl(baseUrl, outboundPolicyFor(deps.environment));
  if (!verdict.ok) throw validationError('settings.base_url', `base_url ${verdict.reason}`, 'invalid_url');
  const partnerId = checkField(input.settings?.partner_id, 'settings.partner_id');
  const apiKey = checkField(input.credentials?.api_key, 'credentials.api_key');
  const existing = await findSmileIdConfig(tx, organizationId);
  const now = deps.now();
  const config = await upsertSmileIdConfig(tx, {
    organizationId,
    settings: { base_url: baseUrl, partner_id: partnerId },
    sealedCredentials: seal(
      deps.keyring,
      JSON.stringify({ api_key: apiKey }),
      credentialsContext(organizationId),
      deps.randomBytes,
    ),
    callbackToken:
      existing?.callbackToken ?? Buffer.from(deps.randomBytes(CALLBACK_TOKEN_BYTES)).toString('base64url'),
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  });
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'verification_provider.update',
      actor,
      data: {
        provider: 'smile_id',
        base_url: baseUrl,
        partner_id: partnerId,
        credentials_changed: ['api_key'],
      },
    },
  ]);
  return config;
}

/** The API key, opened: only to sign a request to Smile ID or check its signature. */
export function openSmileIdApiKey(deps: Deps, config: SmileIdConfig): string {
  const opened = JSON.parse(
    open(deps.keyring, config.sealedCredentials, credentialsContext(config.organizationId)),
  );
  return (opened as { api_key: string }).api_key;
}

/** Where Smile ID POSTs this organization's results; null without the deployment's public URL. */
export function smileIdCallbackUrl(deps: Deps, config: SmileIdConfig): string | null {
  if (!deps.publicUrl) return null;
  return `${deps.publicUrl.replace(/\/+$/, '')}/v1/verification_provider/callbacks/${config.callbackToken}`;
}

/** The organization's configuration; 404 when it has configured no verification provider. */
export async function getSmileIdConfig(deps: Deps, organizationId: string): Promise<SmileIdConfig> {
  const config = await findSmileIdConfig(deps.store, organizationId);
  if (config === undefined) throw resourceMissing('verification_provider', organizationId);
  return config;
}

export { findSmileIdConfig };
