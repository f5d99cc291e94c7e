/**
 * Approved digital-asset routes as data per organization: an organization starts with the defaults (written,
 * with their evidence, the first time its routes are needed), then its operators turn routes on and off.
 * A transfer to a crypto address must name a route that is enabled.
 */

import type { Deps } from '../../../app/deps.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import {
  DEFAULT_DIGITAL_ASSET_ROUTES,
  type DigitalAsset,
  type DigitalAssetNetwork,
  type DigitalAssetRoute,
  type RouteStatus,
} from '../../../domain/digitalAssets.ts';
import { AppError } from '../../../domain/errors.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import { formatAmount } from '../../../domain/money.ts';
import type { Queryable } from '../../../store/store.ts';
import {
  findDigitalAssetRoute,
  hasDigitalAssetRoutes,
  insertMissingRoutes,
  listDigitalAssetRoutes,
  saveDigitalAssetRoute,
} from '../repository/travelRule.ts';

/** Writes the default routes in the caller's transaction if the organization has none yet. */
async function ensureDefaultRoutes(tx: Queryable, deps: Deps, organizationId: string): Promise<void> {
  if (await hasDigitalAssetRoutes(tx, organizationId)) return;
  const now = deps.now();
  const added = await insertMissingRoutes(
    tx,
    DEFAULT_DIGITAL_ASSET_ROUTES.map((r) => ({
      ...r,
      organizationId,
      status: 'enabled',
      singleMaxMinor: null,
      dailyMaxMinor: null,
      updatedAt: now,
    })),
  );
  if (added.length === 0) return;
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'digital_asset.routes.update',
      actor: SYSTEM_ACTOR,
      data: {
        change: 'defaults',
        routes: added.map((r) => ({ asset: r.asset, network: r.network, status: r.status })),
      },
    },
  ]);
}

async function withDefaultRoutes(deps: Deps, organizationId: string): Promise<void> {
  if (!(await hasDigitalAssetRoutes(deps.store, organizationId))) {
    await deps.store.transaction((tx) => ensureDefaultRoutes(tx, deps, organizationId));
  }
}

/** The organization's routes, by asset and network, the defaults written first if need be. */
export async function listRoutes(deps: Deps, organizationId: string): Promise<DigitalAssetRoute[]> {
  await withDefaultRoutes(deps, organizationId);
  return listDigitalAssetRoutes(deps.store, organizationId);
}

/** A route limit on the wire: a decimal string in the asset, or null. */
const limitText = (minor: bigint | null, asset: DigitalAsset) =>
  minor === null ? null : formatAmount(minor, asset);

/**
 * Turns a route on or off (adding it when it is not listed yet) and sets its withdrawal limits when given
 * (`undefined` keeps a limit, `null` removes it); a change is recorded as evidence, limits before and after.
 */
export async function setRouteStatus(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  route: {
    asset: DigitalAsset;
    network: DigitalAssetNetwork;
    status: RouteStatus;
    singleMaxMinor?: bigint | null | undefined;
    dailyMaxMinor?: bigint | null | undefined;
  },
  actor: EvidenceActor,
): Promise<DigitalAssetRoute> {
  await ensureDefaultRoutes(tx, deps, organizationId);
  const before = await findDigitalAssetRoute(tx, organizationId, route.asset, route.network, {
    forUpdate: true,
  });
  const singleMaxMinor =
    route.singleMaxMinor === undefined ? (before?.singleMaxMinor ?? null) : route.singleMaxMinor;
  const dailyMaxMinor =
    route.dailyMaxMinor === undefined ? (before?.dailyMaxMinor ?? null) : route.dailyMaxMinor;
  if (
    before?.status === route.status &&
    before.singleMaxMinor === singleMaxMinor &&
    before.dailyMaxMinor === dailyMaxMinor
  ) {
    return before;
  }
  const after: DigitalAssetRoute = {
    organizationId,
    asset: route.asset,
    network: route.network,
    status: route.status,
    singleMaxMinor,
    dailyMaxMinor,
    updatedAt: deps.now(),
  };
  await saveDigitalAssetRoute(tx, after);
  const limitsChanged =
    (before?.singleMaxMinor ?? null) !== singleMaxMinor || (before?.dailyMaxMinor ?? null) !== dailyMaxMinor;
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'digital_asset.routes.update',
      actor,
      data: {
        change: before?.status !== route.status ? 'status' : 'limits',
        asset: route.asset,
        network: route.network,
        from_status: before?.status ?? null,
        to_status: route.status,
        ...(limitsChanged
          ? {
              from_limits: {
                single_max: limitText(before?.singleMaxMinor ?? null, route.asset),
                daily_max: limitText(before?.dailyMaxMinor ?? null, route.asset),
              },
              to_limits: {
                single_max: limitText(singleMaxMinor, route.asset),
                daily_max: limitText(dailyMaxMinor, route.asset),
              },
            }
          : {}),
      },
    },
  ]);
  return after;
}

/**
 * The 422 `limit_exceeded` of a withdrawal over its route's single limit, or over what is left of its
 * daily limit (`usedTodayMinor` already withdrawn on the route today); undefined when it fits.
 */
export function routeLimitRefusal(
  route: Pick<DigitalAssetRoute, 'asset' | 'network' | 'singleMaxMinor' | 'dailyMaxMinor'>,
  amountMinor: bigint,
  usedTodayMinor?: bigint,
): AppError | undefined {
  const refuse = (limit: 'route_single' | 'route_daily', maxMinor: bigint, remainingMinor: bigint) =>
    new AppError({
      status: 422,
      code: 'limit_exceeded',
      title: 'Limit exceeded',
      detail: `This withdrawal would pass the organization's ${limit === 'route_single' ? 'single-withdrawal' : 'daily'} limit on ${route.asset} over ${route.network}, ${formatAmount(maxMinor, route.asset)} ${route.asset}; ${formatAmount(remainingMinor, route.asset)} may still be sent under it. Nothing was written.`,
      param: 'amount',
      extensions: { limit: limit, remaining: formatAmount(remainingMinor, route.asset) },
    });
  if (route.singleMaxMinor !== null && amountMinor > route.singleMaxMinor) {
    return refuse('route_single', route.singleMaxMinor, route.singleMaxMinor);
  }
  if (usedTodayMinor !== undefined && route.dailyMaxMinor !== null) {
    const remaining = route.dailyMaxMinor > usedTodayMinor ? route.dailyMaxMinor - usedTodayMinor : 0n;
    if (amountMinor > remaining) return refuse('route_daily', route.dailyMaxMinor, remaining);
  }
  return undefined;
}

/** A 422 `route_not_approved` on `destination.network` unless the asset's route on the network is enabled. */
export async function requireApprovedRoute(
  deps: Deps,
  organizationId: string,
  asset: DigitalAsset,
  network: DigitalAssetNetwork,
  param = 'destination.network',
): Promise<DigitalAssetRoute> {
  await withDefaultRoutes(deps, organizationId);
  const route = await findDigitalAssetRoute(deps.store, organizationId, asset, network);
  if (route?.status === 'enabled') return route;
  throw new AppError({
    status: 422,
    code: 'route_not_approved',
    title: 'Route not approved',
    detail: route
      ? `${asset} on ${network} is disabled for this organization; nothing was written.`
      : `${asset} on ${network} is not an approved route for this organization; nothing was written.`,
    param,
  });
}
