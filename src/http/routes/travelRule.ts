import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { listRoutes, setRouteStatus } from '../../app/digitalAssetRoutes.ts';
import { apiKeyActor } from '../../app/evidence.ts';
import {
  getTransferTravelRule,
  getTravelRuleSettings,
  putTravelRuleSettings,
  type TravelRuleSettingsView,
} from '../../app/travelRule.ts';
import { presentTravelRuleSettings } from '../../domain/decisions/travelRule.ts';
import {
  DIGITAL_ASSET_NETWORKS,
  DIGITAL_ASSETS,
  type DigitalAsset,
  type DigitalAssetNetwork,
  type DigitalAssetRoute,
  ROUTE_STATUSES,
  type RouteStatus,
} from '../../domain/digitalAssets.ts';
import type { EvidenceRecord } from '../../domain/evidence.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { formatAmount } from '../../domain/money.ts';
import { routeLimitMinor } from '../../domain/stablecoins.ts';
import type { Transfer } from '../../domain/transferRecord.ts';
import { BEARER_SECURITY, principalOf } from '../auth.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../problems.ts';
import { idempotencyHeadersSchema, idempotentWriteHeaders, idParamsSchema } from '../schemas.ts';
import { travelRuleSettingsFields } from '../travelRuleSchemas.ts';
import { sendWrite } from '../writes.ts';
import { governedWrite, pendingChangeResponse } from './changes.ts';

const TAGS = ['Travel Rule'];

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
function presentTravelRuleRecord(transfer: Transfer, record: EvidenceRecord) {
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

/**
 * Digital-asset routes and Travel Rule settings: anyone may read them (`read`), operators change them
 * (`compliance`); a transfer's Travel Rule data is for operators only.
 */
export function travelRuleRoutes(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/v1/digital-asset-routes',
    {
      config: { scope: 'read', product: 'stablecoins' },
      schema: {
        operationId: 'listDigitalAssetRoutes',
        summary: 'List digital-asset routes',
        description:
          'Every asset and network the organization has a route for, enabled or not. An organization starts with USDC on ethereum, polygon, solana and base, and USDT on ethereum and tron, all enabled.',
        tags: TAGS,
        security: BEARER_SECURITY,
        response: {
          200: {
            description: 'Every route.',
            type: 'object',
            required: ['object', 'data'],
            properties: {
              object: { type: 'string', enum: ['list'] },
              data: { type: 'array', items: { $ref: 'DigitalAssetRoute#' } },
            },
          },
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => ({
      object: 'list',
      data: (await listRoutes(deps, principalOf(request).organizationId)).map(presentRoute),
    }),
  );

  app.put<{
    Params: { asset: DigitalAsset; network: DigitalAssetNetwork };
    Body: { status: RouteStatus; limits?: { single_max?: string | null; daily_max?: string | null } };
  }>(
    '/v1/digital-asset-routes/:asset/:network',
    {
      config: { scope: 'compliance', product: 'stablecoins' },
      schema: {
        operationId: 'setDigitalAssetRoute',
        summary: 'Enable or disable a digital-asset route',
        description:
          'Sets the route’s status, adding the route if the organization has none for this asset and network, and its withdrawal limits when `limits` is given (a limit left out is kept; null removes it). A change is recorded as evidence (`digital_asset.routes.update`, limits before and after) and applies to the next transfer. Needs the `compliance` scope.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: {
          type: 'object',
          required: ['asset', 'network'],
          properties: {
            asset: { type: 'string', enum: DIGITAL_ASSETS, description: 'The stablecoin.' },
            network: { type: 'string', enum: DIGITAL_ASSET_NETWORKS, description: 'The network.' },
          },
        },
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['status'],
          properties: {
            status: { type: 'string', enum: ROUTE_STATUSES },
            limits: {
              type: 'object',
              additionalProperties: false,
              properties: {
                single_max: {
                  type: ['string', 'null'],
                  description: 'The largest single withdrawal, a decimal string in the asset; null for none.',
                },
                daily_max: {
                  type: ['string', 'null'],
                  description:
                    'The most the organization may withdraw on the route per UTC day; null for none.',
                },
              },
            },
          },
        },
        response: {
          200: { description: 'The route.', headers: idempotentWriteHeaders, $ref: 'DigitalAssetRoute#' },
          202: pendingChangeResponse,
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) =>
        governedWrite(
          tx,
          deps,
          organizationId,
          request,
          {
            kind: 'digital_asset_route',
            action: 'set',
            targetId: `${request.params.asset}:${request.params.network}`,
            payload: { ...request.params, ...request.body },
          },
          async () => ({
            status: 200,
            body: presentRoute(
              await setRouteStatus(
                tx,
                deps,
                organizationId,
                {
                  ...request.params,
                  status: request.body.status,
                  singleMaxMinor: routeLimitMinor(
                    request.body.limits?.single_max,
                    request.params.asset,
                    'limits.single_max',
                  ),
                  dailyMaxMinor: routeLimitMinor(
                    request.body.limits?.daily_max,
                    request.params.asset,
                    'limits.daily_max',
                  ),
                },
                apiKeyActor(principalOf(request).keyId),
              ),
            ),
          }),
        ),
      ),
  );

  app.get(
    '/v1/travel-rule/settings',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getTravelRuleSettings',
        summary: 'Retrieve the Travel Rule settings',
        description:
          'The USD thresholds per jurisdiction at or above which a digital-asset transfer needs `travel_rule` data, and the rates that convert amounts to USD. An organization starts with a `default` threshold of 1,000.00 USD and the default rates.',
        tags: TAGS,
        security: BEARER_SECURITY,
        response: {
          200: { description: 'The settings.', $ref: 'TravelRuleSettings#' },
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) =>
      presentSettings(await getTravelRuleSettings(deps, principalOf(request).organizationId)),
  );

  app.put<{ Body: { thresholds: Record<string, string>; rates: Record<string, string> } }>(
    '/v1/travel-rule/settings',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'setTravelRuleSettings',
        summary: 'Replace the Travel Rule settings',
        description:
          'Replaces both tables whole. Recorded as evidence (`travel_rule.settings.update`, before and after); applies to the next transfer. Needs the `compliance` scope.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['thresholds', 'rates'],
          properties: travelRuleSettingsFields,
        },
        response: {
          200: { description: 'The settings.', headers: idempotentWriteHeaders, $ref: 'TravelRuleSettings#' },
          ...problemResponses(...WRITE_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentSettings(
          await putTravelRuleSettings(
            tx,
            deps,
            organizationId,
            request.body,
            apiKeyActor(principalOf(request).keyId),
          ),
        ),
      })),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/transfers/:id/travel-rule',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'getTransferTravelRule',
        summary: 'Retrieve a transfer’s Travel Rule data',
        description:
          'The originator and beneficiary data the transfer carried, with the threshold, jurisdiction and converted amount that applied; 404 when it carried none. Needs the `compliance` scope.',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: idParamsSchema(ID_PREFIXES.transfer, 'Transfer id.'),
        response: {
          200: { description: 'The Travel Rule data.', $ref: 'TravelRuleRecord#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) => {
      const { transfer, record } = await getTransferTravelRule(
        deps,
        principalOf(request).organizationId,
        request.params.id,
      );
      return presentTravelRuleRecord(transfer, record);
    },
  );
}
