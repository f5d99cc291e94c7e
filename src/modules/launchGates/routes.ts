/**
 * The launch gates: what must pass, per product, before pilot or production keys are issued. In the sandbox
 * a read evaluates them (recording any change with its event and evidence); in pilot and production it
 * shows the sandbox's record with this deployment's overrides (docs/GOING-LIVE.md).
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { LAUNCH_PRODUCTS, type LaunchProduct } from '../../domain/organizationProfile.ts';
import { enumFilter } from '../../http/readRoutes.ts';
import { closedObjectSchema, LIST_PROBLEMS, organizationOf, readOperation } from '../../http/routeKit.ts';
import { apiObjectSchema } from '../../http/schemaBuilders.ts';
import { listEnvelopeSchema, nullableIdSchema, timestampSchema } from '../../http/schemas.ts';
import { LAUNCH_GATE_STATES, LAUNCH_GATES, type LaunchGateView } from './domain.ts';
import { launchGatesOf } from './useCases.ts';

const TAGS = ['Launch gates'];

export const launchGateSchema = apiObjectSchema(
  'LaunchGate',
  'launch_gate',
  'One check of one product that must pass before pilot or production keys are issued: `business_verified` (the legal entity’s KYB), `contacts_named` (technical, compliance, finance), `policies_configured` (a policy you wrote), `webhook_endpoint_verified` (an endpoint answered 2xx to a signed test event), `sandbox_scenario_completed` (payouts on the product’s rails settled, failed, timed out and returned), `reconciliation_run` (a statement for one of its rails imported).',
  {
    product: { type: 'string', enum: LAUNCH_PRODUCTS },
    gate: { type: 'string', enum: LAUNCH_GATES },
    state: {
      type: 'string',
      enum: LAUNCH_GATE_STATES,
      description:
        '`open`, `passed`, or `overridden` (an operator issued keys past it; pilot and production only).',
    },
    evidence: {
      type: 'object',
      additionalProperties: true,
      description:
        'What decided it: the ids and times of the facts that passed it, or `missing` naming what is still needed.',
    },
    evidence_record: nullableIdSchema(
      ID_PREFIXES.evidence,
      'The evidence chain’s record of its last change of state (GET /v1/evidence), or null before any.',
    ),
    override: {
      type: ['object', 'null'],
      required: ['reason', 'at', 'evidence_record'],
      properties: {
        reason: { type: 'string' },
        at: timestampSchema,
        evidence_record: { type: 'string' },
      },
      description: 'The operator’s override recorded in this deployment, if any.',
    },
    updated_at: {
      ...timestampSchema,
      description: 'When the state last changed; for a passed gate, when what passed it happened.',
    },
  },
);

function presentLaunchGate(g: LaunchGateView) {
  return {
    object: 'launch_gate',
    product: g.product,
    gate: g.gate,
    state: g.state,
    evidence: g.evidence,
    evidence_record: g.evidenceRecordId,
    override: g.override && {
      reason: g.override.reason,
      at: g.override.at.toISOString(),
      evidence_record: g.override.evidenceRecordId,
    },
    updated_at: g.updatedAt.toISOString(),
  };
}

export function launchGateRoutes(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: { product?: LaunchProduct } }>(
    '/v1/launch-gates',
    readOperation({
      scope: 'read',
      operationId: 'listLaunchGates',
      summary: 'List your launch gates',
      description:
        'Every gate of every product you launch, in a fixed order (one page). In the sandbox this evaluates them now, recording each change with a `launch_gate.updated` event and an evidence record; in pilot and production it shows the sandbox’s record for the organization of the same name, with the overrides recorded here. Keys for pilot or production are issued only when no gate is `open`.',
      tags: TAGS,
      querystring: closedObjectSchema({
        product: enumFilter(LAUNCH_PRODUCTS, 'Only this product’s gates.'),
      }),
      responses: { 200: listEnvelopeSchema('LaunchGate', 'The gates.') },
      problems: LIST_PROBLEMS,
    }),
    async (request) => {
      // Found by its id, the organization's own name is the one its gates are read under.
      const { gates } = await launchGatesOf(deps, { id: organizationOf(request), name: '' });
      const product = request.query.product;
      return {
        object: 'list',
        data: gates.filter((g) => product === undefined || g.product === product).map(presentLaunchGate),
        has_more: false,
        next_cursor: null,
      };
    },
  );
}
