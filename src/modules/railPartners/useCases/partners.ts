/**
 * Rail partner configuration: an organization names the partner that carries a rail and network for it,
 * with settings shown back and credentials sealed at rest (never shown again). Each change is one
 * transaction with its evidence record; the callback path token is made once and kept.
 */

import type { Deps } from '../../../app/deps.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import { getById, listPage, lockById } from '../../../app/reads.ts';
import { SQLSTATE, sqlState } from '../../../domain/databaseErrors.ts';
import { AppError, validationError } from '../../../domain/errors.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import {
  checkResolvedAddresses,
  isIpAddress,
  outboundPolicyFor,
  urlHost,
} from '../../../domain/outboundAddresses.ts';
import type { PageRequest } from '../../../domain/pagination.ts';
import { open, seal, sealedKeyId } from '../../../domain/sealing.ts';
import { resolveWithin } from '../../../outbound/guard.ts';
import type { Queryable } from '../../../store/store.ts';
import { releaseSavepoint, rollbackToSavepoint, setSavepoint } from '../../../store/transactions.ts';
import {
  CALLBACK_TOKEN_BYTES,
  checkRailPartnerFields,
  RAIL_PARTNER_SHAPES,
  type RailPartnerConfig,
  type RailPartnerName,
  type RailPartnerStatus,
  railPartnerCredentialsContext,
} from '../domain.ts';
import {
  findActiveRailPartner,
  findRailPartnerConfig,
  insertRailPartnerConfig,
  listRailPartnerConfigs,
  lockRailPartnerSlot,
  updateRailPartnerConfig,
} from '../repository/partners.ts';

export interface ConfigureRailPartnerInput {
  partner: RailPartnerName;
  settings: unknown;
  credentials: unknown;
}

export interface UpdateRailPartnerInput {
  settings?: unknown;
  /** The credentials to change (the others are kept): a rotation gives the new ones. */
  credentials?: unknown;
  status?: RailPartnerStatus;
}

function railPartnerExists(config: { rail: string; network: string | null }): AppError {
  return new AppError({
    status: 409,
    code: 'rail_partner_exists',
    title: 'Rail partner already configured',
    detail: `An active partner already carries ${config.rail}${config.network ? ` (${config.network})` : ''} for this organization: disable it first.`,
    param: 'partner',
  });
}

function sealCredentials(deps: Deps, configId: string, credentials: Record<string, string>): string {
  return seal(
    deps.keyring,
    JSON.stringify(credentials),
    railPartnerCredentialsContext(configId),
    deps.randomBytes,
  );
}

/** The partner credentials, opened: only for building the adapter that calls the partner. */
export function openRailPartnerCredentials(deps: Deps, config: RailPartnerConfig): Record<string, string> {
  return JSON.parse(
    open(deps.keyring, config.sealedCredentials, railPartnerCredentialsContext(config.id)),
  ) as Record<string, string>;
}

const callbackToken = (deps: Deps) =>
  Buffer.from(deps.randomBytes(CALLBACK_TOKEN_BYTES)).toString('base64url');

/** The evidence of a change to a partner configuration (`rail_partner.update`), naming fields, never values. */
export async function recordChange(
  tx: Queryable,
  deps: Deps,
  config: RailPartnerConfig,
  actor: EvidenceActor,
  change: { action: string; settings: string[]; credentials: string[] },
): Promise<void> {
  await appendEvidence(tx, deps, [
    {
      organizationId: config.organizationId,
      kind: 'rail_partner.update',
      actor,
      data: {
        rail_partner_id: config.id,
        partner: config.partner,
        rail: config.rail,
        network: config.network,
        status: config.status,
        action: change.action,
        // Which fields changed, never their values: credentials stay sealed.
        settings_changed: change.settings,
        credentials_changed: change.credentials,
      },
    },
  ]);
}

/** How long a base URL's host name may take to resolve when it is configured. */
export const RAIL_PARTNER_URL_RESOLVE_TIMEOUT_MS = 5_000;

/**
 * Where a base URL's host name points now: an address the outbound guard forbids (a private, link-local or
 * reserved one; loopback outside the sandbox) is refused like a bad form. A name that does not resolve now
 * is accepted (the partner may be down); the adapter's connect-time check refuses it later if it then
 * points somewhere forbidden.
 */
async function checkBaseUrlAddresses(deps: Deps, baseUrl: string | undefined): Promise<void> {
  if (baseUrl === undefined || !deps.resolveHost) return;
  const host = urlHost(new URL(baseUrl));
  if (isIpAddress(host)) return;
  let addresses: string[];
  try {
    addresses = await resolveWithin(deps.resolveHost, host, RAIL_PARTNER_URL_RESOLVE_TIMEOUT_MS);
  } catch {
    return;
  }
  const verdict = checkResolvedAddresses(host, addresses, outboundPolicyFor(deps.environment));
  if (!verdict.ok) throw validationError('settings.base_url', `base_url ${verdict.reason}`, 'invalid_url');
}

export async function configureRailPartner(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: ConfigureRailPartnerInput,
  actor: EvidenceActor,
): Promise<RailPartnerConfig> {
  const shape = RAIL_PARTNER_SHAPES[input.partner];
  const fields = checkRailPartnerFields(input.partner, input, {
    partial: false,
    addressPolicy: outboundPolicyFor(deps.environment),
  });
  await checkBaseUrlAddresses(deps, fields.settings?.base_url);
  const settings = fields.settings ?? {};
  const credentials = fields.credentials ?? {};
  const now = deps.now();
  const id = deps.newId('railPartner');
  const sealed = sealCredentials(deps, id, credentials);
  const config: RailPartnerConfig = {
    id,
    organizationId,
    rail: shape.rail,
    network: shape.network,
    partner: input.partner,
    status: 'active',
    settings,
    credentialNames: Object.keys(credentials).sort(),
    sealedCredentials: sealed,
    callbackToken: callbackToken(deps),
    createdAt: now,
    updatedAt: now,
  };
  if (!(await insertRailPartnerConfig(tx, config, sealedKeyId(sealed)))) throw railPartnerExists(config);
  await recordChange(tx, deps, config, actor, {
    action: 'configure',
    settings: Object.keys(settings).sort(),
    credentials: config.credentialNames,
  });
  return config;
}

const lockRailPartnerConfig = lockById(findRailPartnerConfig, 'rail_partner');

export async function updateRailPartner(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  input: UpdateRailPartnerInput,
  actor: EvidenceActor,
): Promise<RailPartnerConfig> {
  const current = await lockRailPartnerConfig(tx, organizationId, id);
  const fields = checkRailPartnerFields(current.partner, input, {
    partial: true,
    addressPolicy: outboundPolicyFor(deps.environment),
  });
  await checkBaseUrlAddresses(deps, fields.settings?.base_url);
  const credentials = fields.credentials
    ? { ...openRailPartnerCredentials(deps, current), ...fields.credentials }
    : undefined;
  const sealed = credentials ? sealCredentials(deps, current.id, credentials) : current.sealedCredentials;
  const updated: RailPartnerConfig = {
    ...current,
    status: input.status ?? current.status,
    settings: { ...current.settings, ...fields.settings },
    credentialNames: credentials ? Object.keys(credentials).sort() : current.credentialNames,
    sealedCredentials: sealed,
    updatedAt: deps.now(),
  };
  try {
    await setSavepoint(tx, 'rail_partner_update');
    await updateRailPartnerConfig(tx, updated, sealedKeyId(sealed));
    await releaseSavepoint(tx, 'rail_partner_update');
  } catch (error) {
    if (sqlState(error) !== SQLSTATE.uniqueViolation) throw error;
    // Activating it while another partner is active on the same rail and network.
    await rollbackToSavepoint(tx, 'rail_partner_update');
    throw railPartnerExists(updated);
  }
  await recordChange(tx, deps, updated, actor, {
    action: input.status && input.status !== current.status ? input.status : 'update',
    settings: Object.keys(fields.settings ?? {}).sort(),
    credentials: Object.keys(fields.credentials ?? {}).sort(),
  });
  return updated;
}

export const getRailPartner = getById<RailPartnerConfig>(findRailPartnerConfig, 'rail_partner');

export const listRailPartners = listPage<PageRequest, RailPartnerConfig>(listRailPartnerConfigs);

/** Where the partner sends callbacks for this configuration, or null without a public URL to build it on. */
export function callbackBaseUrl(deps: Deps, config: RailPartnerConfig): string | null {
  if (!deps.publicUrl) return null;
  return `${deps.publicUrl.replace(/\/+$/, '')}/v1/rails/${config.rail}/callbacks/${config.callbackToken}`;
}

/**
 * Points the organization's partner for a rail and network at a local simulator (the sandbox server's own),
 * configuring it the first time and moving it to this run's address after. A partner someone configured
 * elsewhere (not on this machine) is left alone.
 */
export async function ensureSimulatedRailPartner(
  deps: Deps,
  organizationId: string,
  input: ConfigureRailPartnerInput & {
    settings: Record<string, string>;
    credentials: Record<string, string>;
  },
): Promise<RailPartnerConfig | undefined> {
  const shape = RAIL_PARTNER_SHAPES[input.partner];
  return deps.store.transaction(async (tx) => {
    // Replicas starting together would each find none and each insert: the second insert would conflict.
    await lockRailPartnerSlot(tx, organizationId, shape.rail, shape.network);
    const current = await findActiveRailPartner(tx, organizationId, shape.rail, shape.network);
    if (!current) return configureRailPartner(tx, deps, organizationId, input, SYSTEM_ACTOR);
    const base = current.settings.base_url ?? '';
    // A path is allowed: Fireblocks' base URL ends in `/v1`.
    const local = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?(\/[\w./-]*)?$/.test(base);
    if (current.partner !== input.partner || !local) return undefined;
    if (base === input.settings.base_url) return current;
    return updateRailPartner(
      tx,
      deps,
      organizationId,
      current.id,
      { settings: input.settings, credentials: input.credentials },
      SYSTEM_ACTOR,
    );
  });
}
