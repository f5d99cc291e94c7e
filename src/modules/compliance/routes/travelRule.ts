/**
 * The Travel Rule's routes: the organization's settings (thresholds and USD rates) and the approved
 * digital-asset routes with their limits (a governed change), both changed with the `compliance` scope and
 * recorded as evidence; and a transfer's Travel Rule data as its evidence recorded it.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { presentTravelRuleSettings } from '../../../domain/decisions/travelRule.ts';
import {
  DIGITAL_ASSET_NETWORKS,
  DIGITAL_ASSETS,
  type DigitalAsset,
  type DigitalAssetNetwork,
  type DigitalAssetRoute,
  ROUTE_STATUSES,
  type RouteStatus,
} from '../../../domain/digitalAssets.ts';
import type { EvidenceRecord } from '../../../domain/evidence.ts';
import { formatAmount } from '../../../domain/money.ts';
import { routeLimitMinor } from '../../../domain/stablecoins.ts';
import type { Transfer } from '../../../domain/transferRecord.ts';
import { requestKeyActor } from '../../../http/auth.ts';
import { WRITE_PROBLEMS } from '../../../http/problems.ts';
import { retrieveOwn } from '../../../http/readRoutes.ts';
import {
  closedObjectSchema,
  found,
  idempotentWrite,
  LIST_PROBLEMS,
  readOperation,
  retrieveWholeList,
  wholeListSchema,
  withoutNotFound,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { nullableStringSchema } from '../../../http/schemas.ts';
import { governedIdempotentWrite, pendingChangeResponse } from '../../authorization/index.ts';
import { listRoutes, setRouteStatus } from '../useCases/digitalAssetRoutes.ts';
import {
  getTravelRuleSettings,
  putTravelRuleSettings,
  type TravelRuleSettingsView,
} from '../useCases/travelRule.ts';
import { travelRuleSettingsFields } from './travelRuleSchemas.ts';

export const TRAVEL_RULE_TAGS = ['Travel Rule'];
const TAGS = TRAVEL_RULE_TAGS;

function presentRoute(route: DigitalAssetRoute) {
  return {
    object: 'digital_asset_route',
    asset: route.asset,
    network: route.network,
    status: route.status,
    limits: {
      single_max: route.singleMaxMinor === null ? null : formatAmount(route.singleMaxMinor, route.asset),
      daily_max: route.dailyMaxMinor === null ? null : formatAmount(route.dailyMaxMinor, route.asset),
    },
    updated_at: route.updatedAt.toISOString(),
  };
}

function presentSettings(view: TravelRuleSettingsView) {
  return {
    object: 'travel_rule_settings',
    ...presentTravelRuleSettings(view.settings),
    updated_at: view.updatedAt.toISOString(),
  };
}

/** The evidence record's data, as the operator's read shows it. */
export function presentTravelRuleRecord(transfer: Transfer, record: EvidenceRecord) {
  const d = record.data;
  return {
    object: 'travel_rule',
    reference: record.id,
    transfer_id: transfer.id,
    required: d.required,
    jurisdiction: d.jurisdiction,
    threshold: d.threshold,
    amount_usd: d.amount_usd,
    rate: d.rate,
    asset: d.asset,
    network: d.network,
    address: d.address,
    originator: d.originator,
    beneficiary: d.beneficiary,
    created_at: record.createdAt.toISOString(),
  };
}

const routeParams = {
  type: 'object',
  required: ['asset', 'network'],
  properties: {
    asset: { type: 'string', enum: DIGITAL_ASSETS, description: 'The stablecoin.' },
    network: { type: 'string', enum: DIGITAL_ASSET_NETWORKS, description: 'The network.' },
  },
};

const routeBody = closedObjectSchema(
  {
    status: { type: 'string', enum: ROUTE_STATUSES },
    limits: closedObjectSchema({
      single_max: nullableStringSchema(
        'The largest single withdrawal, a decimal string in the asset; null for none.',
      ),
      daily_max: nullableStringSchema(
        'The most the organization may withdraw on the route per UTC day; null for none.',
      ),
    }),
  },
  ['status'],
);

interface RouteUpdate {
  Params: { asset: DigitalAsset; network: DigitalAssetNetwork };
  Body: { status: RouteStatus; limits?: { single_max?: string | null; daily_max?: string | null } };
}

function listDigitalAssetRoutesRoute(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/v1/digital-asset-routes',
    readOperation({
      scope: 'read',
      product: 'stablecoins',
      operationId: 'listDigitalAssetRoutes',
      summary: 'List digital-asset routes',
      description:
        'Every asset and network the organization has a route for, enabled or not. An organization starts with USDC on ethereum, polygon, solana and base, and USDT on ethereum and tron, all enabled.',
      tags: TAGS,
      responses: { 200: found(wholeListSchema('DigitalAssetRoute'), 'Every route.') },
      problems: LIST_PROBLEMS,
    }),
    retrieveWholeList(deps, listRoutes, presentRoute),
  );
}

function setDigitalAssetRouteRoute(app: FastifyInstance, deps: Deps): void {
  app.put<RouteUpdate>(
    '/v1/digital-asset-routes/:asset/:network',
    writeOperation({
      scope: 'compliance',
      product: 'stablecoins',
      operationId: 'setDigitalAssetRoute',
      summary: 'Enable or disable a digital-asset route',
      description:
        'Sets the route’s status, adding the route if the organization has none for this asset and network, and its withdrawal limits when `limits` is given (a limit left out is kept; null removes it). A change is recorded as evidence (`digital_asset.routes.update`, limits before and after) and applies to the next transfer. Needs the `compliance` scope.',
      tags: TAGS,
      params: routeParams,
      body: routeBody,
      responses: { 200: written('DigitalAssetRoute', 'The route.'), 202: pendingChangeResponse },
    }),
    governedIdempotentWrite(
      deps,
      200,
      ({ params, body }) => ({
        kind: 'digital_asset_route',
        action: 'set',
        targetId: `${params.asset}:${params.network}`,
        payload: { ...params, ...body },
      }),
      async (tx, organizationId, request) => {
        const { params, body } = request;
        const route = {
          ...params,
          status: body.status,
          singleMaxMinor: routeLimitMinor(body.limits?.single_max, params.asset, 'limits.single_max'),
          dailyMaxMinor: routeLimitMinor(body.limits?.daily_max, params.asset, 'limits.daily_max'),
        };
        return presentRoute(await setRouteStatus(tx, deps, organizationId, route, requestKeyActor(request)));
      },
    ),
  );
}

function getTravelRuleSettingsRoute(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/v1/travel-rule/settings',
    readOperation({
      scope: 'read',
      operationId: 'getTravelRuleSettings',
      summary: 'Retrieve the Travel Rule settings',
      description:
        'The USD thresholds per jurisdiction at or above which a digital-asset transfer needs `travel_rule` data, and the rates that convert amounts to USD. An organization starts with a `default` threshold of 1,000.00 USD and the default rates.',
      tags: TAGS,
      responses: { 200: found('TravelRuleSettings', 'The settings.') },
      problems: LIST_PROBLEMS,
    }),
    retrieveOwn(deps, getTravelRuleSettings, presentSettings),
  );
}

function setTravelRuleSettingsRoute(app: FastifyInstance, deps: Deps): void {
  app.put<{ Body: { thresholds: Record<string, string>; rates: Record<string, string> } }>(
    '/v1/travel-rule/settings',
    writeOperation({
      scope: 'compliance',
      operationId: 'setTravelRuleSettings',
      summary: 'Replace the Travel Rule settings',
      description:
        'Replaces both tables whole. Recorded as evidence (`travel_rule.settings.update`, before and after); applies to the next transfer. Needs the `compliance` scope.',
      tags: TAGS,
      body: closedObjectSchema(travelRuleSettingsFields, ['thresholds', 'rates']),
      responses: { 200: written('TravelRuleSettings', 'The settings.') },
      problems: withoutNotFound(WRITE_PROBLEMS),
    }),
    idempotentWrite(deps, 200, async (tx, organizationId, request) =>
      presentSettings(
        await putTravelRuleSettings(tx, deps, organizationId, request.body, requestKeyActor(request)),
      ),
    ),
  );
}

/**
 * Digital-asset routes and Travel Rule settings: anyone may read them (`read`), operators change them
 * (`compliance`). A transfer's Travel Rule data, for operators only, is a transfers route.
 */
export const travelRuleRoutes = routesInOrder(
  listDigitalAssetRoutesRoute,
  setDigitalAssetRouteRoute,
  getTravelRuleSettingsRoute,
  setTravelRuleSettingsRoute,
);
