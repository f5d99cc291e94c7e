/** Digital-asset routes and Travel Rule settings, per organization. */
import type { DigitalAssetRoute } from '../../../domain/digitalAssets.ts';
import {
  allOrganizationRecordsLister,
  recordFinderBy,
  rowTable,
} from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import {
  fieldArrays,
  nullableBigInt,
  toBigInt,
  toDate,
  toJsonObject,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

const ROUTES = rowTable<DigitalAssetRoute>('digital_asset_routes', {
  organizationId: String,
  asset: stored,
  network: stored,
  status: stored,
  updatedAt: toDate,
  singleMaxMinor: nullableBigInt,
  dailyMaxMinor: nullableBigInt,
});
const { columns: ROUTE_COLUMNS, fromRow: routeFromRow } = ROUTES;

export async function hasDigitalAssetRoutes(db: Queryable, organizationId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM digital_asset_routes WHERE organization_id = $1 LIMIT 1', [
    organizationId,
  ]);
  return rows.length > 0;
}

/**
 * Adds routes the organization does not have yet, with one statement; returns those it added (none when
 * another transaction added them first: its insert is waited for, then skipped).
 */
export async function insertMissingRoutes(
  db: Queryable,
  routes: readonly DigitalAssetRoute[],
): Promise<DigitalAssetRoute[]> {
  if (routes.length === 0) return [];
  const rows = await db.query(
    `INSERT INTO digital_asset_routes (organization_id, asset, network, status, updated_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])
     ON CONFLICT (organization_id, asset, network) DO NOTHING
     RETURNING ${ROUTE_COLUMNS}`,
    [
      ...fieldArrays(routes, 'organizationId', 'asset', 'network', 'status'),
      routes.map((r) => r.updatedAt.toISOString()),
    ],
  );
  return rows.map(routeFromRow);
}

export const listDigitalAssetRoutes = allOrganizationRecordsLister(ROUTES, 'asset, network');

export const findDigitalAssetRoute = recordFinderBy(ROUTES, 'organization_id', 'asset', 'network');

export async function saveDigitalAssetRoute(db: Queryable, route: DigitalAssetRoute): Promise<void> {
  await db.query(
    `INSERT INTO digital_asset_routes (${ROUTE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (organization_id, asset, network)
     DO UPDATE SET status = $4, updated_at = $5, single_max_minor = $6, daily_max_minor = $7`,
    [
      route.organizationId,
      route.asset,
      route.network,
      route.status,
      route.updatedAt,
      route.singleMaxMinor?.toString() ?? null,
      route.dailyMaxMinor?.toString() ?? null,
    ],
  );
}

/** Travel Rule settings as stored: decimal strings, as the API shows them. */
export interface StoredTravelRuleSettings {
  organizationId: string;
  thresholds: Record<string, string>;
  rates: Record<string, string>;
  updatedAt: Date;
}

const SETTINGS = rowTable<StoredTravelRuleSettings>('travel_rule_settings', {
  organizationId: String,
  thresholds: toJsonObject<Record<string, string>>,
  rates: toJsonObject<Record<string, string>>,
  updatedAt: toDate,
});
const SETTINGS_COLUMNS = SETTINGS.columns;

/** The organization's settings (`forUpdate`: locked until the transaction ends). */
export const findTravelRuleSettings = recordFinderBy(SETTINGS, 'organization_id');

/** Writes the settings unless the organization has some; true when this call wrote them. */
export async function insertTravelRuleSettingsIfAbsent(
  db: Queryable,
  settings: StoredTravelRuleSettings,
): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO travel_rule_settings (${SETTINGS_COLUMNS}) VALUES ($1, $2::jsonb, $3::jsonb, $4)
     ON CONFLICT (organization_id) DO NOTHING RETURNING organization_id`,
    [
      settings.organizationId,
      JSON.stringify(settings.thresholds),
      JSON.stringify(settings.rates),
      settings.updatedAt,
    ],
  );
  return rows.length > 0;
}

export async function saveTravelRuleSettings(
  db: Queryable,
  settings: StoredTravelRuleSettings,
): Promise<void> {
  await db.query(
    `INSERT INTO travel_rule_settings (${SETTINGS_COLUMNS}) VALUES ($1, $2::jsonb, $3::jsonb, $4)
     ON CONFLICT (organization_id) DO UPDATE SET thresholds = $2::jsonb, rates = $3::jsonb, updated_at = $4`,
    [
      settings.organizationId,
      JSON.stringify(settings.thresholds),
      JSON.stringify(settings.rates),
      settings.updatedAt,
    ],
  );
}

/**
 * Locks the routes of a writer batch's withdrawals (in key order, so batches never deadlock on them) and
 * reads, for those with a daily limit, what the organization has withdrawn on each today: outbound
 * digital-asset transfers created since `dayStart` that moved or may still move money.
 */
export async function lockRoutesWithDayUsage(
  db: Queryable,
  keys: readonly { organizationId: string; asset: string; network: string }[],
  dayStart: Date,
): Promise<(DigitalAssetRoute & { usedTodayMinor: bigint })[]> {
  if (keys.length === 0) return [];
  const sorted = [
    ...new Map(keys.map((k) => [`${k.organizationId}\u0000${k.asset}\u0000${k.network}`, k])).entries(),
  ]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, k]) => k);
  const rows = await db.query(
    `WITH wanted AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS w (organization_id, asset, network)
     ), locked AS (
       SELECT r.* FROM digital_asset_routes r JOIN wanted w USING (organization_id, asset, network)
        ORDER BY r.organization_id, r.asset, r.network FOR UPDATE OF r
     )
     SELECT l.organization_id, l.asset, l.network, l.status, l.updated_at, l.single_max_minor, l.daily_max_minor,
            CASE WHEN l.daily_max_minor IS NULL THEN 0 ELSE (
              SELECT COALESCE(sum(t.amount_minor), 0) FROM transfers t
               WHERE t.organization_id = l.organization_id AND t.currency = l.asset
                 AND t.rail = 'digital_asset' AND t.direction = 'outbound' AND t.created_at >= $4
                 AND t.destination ->> 'network' = l.network
                 AND t.status NOT IN ('failed', 'canceled', 'rejected', 'expired')
            ) END AS used_today_minor
       FROM locked l`,
    [...fieldArrays(sorted, 'organizationId', 'asset', 'network'), dayStart],
  );
  return rows.map((row) => ({ ...routeFromRow(row), usedTodayMinor: toBigInt(row.used_today_minor) }));
}
