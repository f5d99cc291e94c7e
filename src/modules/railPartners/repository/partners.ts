/** Rail partner configurations: sealed credentials, the active partner of a rail, and rewrapping. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type { Rail } from '../../../domain/transfers.ts';
import {
  newestFirstLister,
  notWrappedByReader,
  organizationRecordFinder,
  recordFinderBy,
  recordTable,
} from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import { nullableText, toDate, toJsonObject } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { RailPartnerConfig } from '../domain.ts';

const CONFIGS = recordTable<RailPartnerConfig>('rail_partner_configs', ID_PREFIXES.railPartner, {
  id: String,
  organizationId: String,
  rail: stored,
  network: nullableText,
  partner: stored,
  status: stored,
  settings: toJsonObject<Record<string, string>>,
  credentialNames: toJsonObject<string[]>,
  sealedCredentials: String,
  callbackToken: String,
  createdAt: toDate,
  updatedAt: toDate,
});

/** What a configuration's update rewrites, in the order both its insert and its update write them. */
function settingsParams(config: RailPartnerConfig, credentialsKeyId: string): unknown[] {
  return [
    config.status,
    JSON.stringify(config.settings),
    JSON.stringify(config.credentialNames),
    config.sealedCredentials,
    credentialsKeyId,
  ];
}

/** False when the organization already has an active partner on the rail and network. */
export async function insertRailPartnerConfig(
  db: Queryable,
  config: RailPartnerConfig,
  credentialsKeyId: string,
): Promise<boolean> {
  const inserted = await db.query(
    `INSERT INTO rail_partner_configs (id, organization_id, rail, network, partner, status, settings, credential_names,
       sealed_credentials, credentials_key_id, callback_token, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10, $11, $12, $13)
     ON CONFLICT DO NOTHING RETURNING id`,
    [
      config.id,
      config.organizationId,
      config.rail,
      config.network,
      config.partner,
      ...settingsParams(config, credentialsKeyId),
      config.callbackToken,
      config.createdAt,
      config.updatedAt,
    ],
  );
  return inserted.length === 1;
}

export async function updateRailPartnerConfig(
  db: Queryable,
  config: RailPartnerConfig,
  credentialsKeyId: string,
): Promise<void> {
  await db.query(
    `UPDATE rail_partner_configs SET status = $3, settings = $4::jsonb, credential_names = $5::jsonb,
       sealed_credentials = $6, credentials_key_id = $7, updated_at = $8
     WHERE organization_id = $1 AND id = $2`,
    [config.organizationId, config.id, ...settingsParams(config, credentialsKeyId), config.updatedAt],
  );
}

export const findRailPartnerConfig = organizationRecordFinder(CONFIGS);

/** The configuration a callback path names, whatever its organization: the token is the credential. */
export const findRailPartnerConfigByToken = recordFinderBy(CONFIGS, 'callback_token');

/**
 * Serialises writers that read before configuring one organization's partner for a rail and network (the
 * sandbox servers pointing it at their simulators), for the rest of the transaction.
 */
export async function lockRailPartnerSlot(
  db: Queryable,
  organizationId: string,
  rail: Rail,
  network: string | null,
): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtext('mkoba.rail_partner'), hashtext($1))", [
    `${organizationId}/${rail}/${network ?? ''}`,
  ]);
}

/** The organization's active partner for a rail and network (a network-less one serves every network). */
export async function findActiveRailPartner(
  db: Queryable,
  organizationId: string,
  rail: Rail,
  network: string | null,
): Promise<RailPartnerConfig | undefined> {
  const [row] = await db.query(
    `SELECT ${CONFIGS.columns} FROM rail_partner_configs
     WHERE organization_id = $1 AND rail = $2 AND status = 'active' AND (network = $3 OR network IS NULL)
     ORDER BY network NULLS LAST LIMIT 1`,
    [organizationId, rail, network],
  );
  return row && CONFIGS.fromRow(row);
}

/** Every organization's active configuration of one partner, oldest first, at most `limit`. */
export async function activeRailPartnersOf(
  db: Queryable,
  partner: string,
  limit: number,
): Promise<RailPartnerConfig[]> {
  const rows = await db.query(
    `SELECT ${CONFIGS.columns} FROM rail_partner_configs WHERE partner = $1 AND status = 'active' ORDER BY id LIMIT $2`,
    [partner, limit],
  );
  return rows.map(CONFIGS.fromRow);
}

export const listRailPartnerConfigs = newestFirstLister(CONFIGS);

/** Key ids that sealed stored credentials: for refusing a keyring that cannot open them. */
export async function railPartnerCredentialKeyIds(db: Queryable): Promise<string[]> {
  const rows = await db.query('SELECT DISTINCT credentials_key_id FROM rail_partner_configs');
  return rows.map((r) => String(r.credentials_key_id));
}

/** Configurations whose credentials another key than `keyId` sealed, a page at a time (rewrap). */
export const railPartnerConfigsNotWrappedBy = notWrappedByReader(CONFIGS, 'credentials_key_id');
