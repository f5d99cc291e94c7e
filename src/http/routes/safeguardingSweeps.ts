/**
 * Sweeps (operators: the `compliance` scope): money moved between a rail partner's float and the trust
 * account, recorded and posted to the ledger's trust account.
 */
import type { FastifyInstance } from 'fastify';
import { actorIdOf } from '../../app/apiKeys.ts';
import type { Deps } from '../../app/deps.ts';
import {
  getSweep,
  listOrganizationSweeps,
  type RecordSweepInput,
  recordSweep,
  sweepEventData,
} from '../../app/trustLedger.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { type Currency, SUPPORTED_CURRENCIES } from '../../domain/money.ts';
import {
  type SafeguardingSweep,
  SWEEP_DIRECTIONS,
  SWEEP_RAILS,
  SWEEP_REFERENCE_LENGTH_MAX,
} from '../../domain/trustLedger.ts';
import { BEARER_SECURITY, principalOf, requestActor } from '../auth.ts';
import { type ListQuery, pageRequestOf, presentList } from '../presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../problems.ts';
import {
  currencySchema,
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  idSchema,
  listEnvelopeSchema,
  listQuerySchema,
  nullableIdSchema,
  timestampSchema,
} from '../schemas.ts';
import { sendWrite } from '../writes.ts';

const TAGS = ['Safeguarding'];

const railSchema = {
  type: 'string',
  enum: SWEEP_RAILS,
  description:
    'The rail whose partner holds the float (its `rail_settlement` ledger account in the currency). USDC and USDT move on `digital_asset`, which carries nothing else.',
} as const;
const directionSchema = {
  type: 'string',
  enum: SWEEP_DIRECTIONS,
  description:
    '`to_trust`: from the rail partner’s float into the trust account (debits the ledger’s `trust` account, credits the rail’s `rail_settlement`). `from_trust`: out of trust to the float (the reverse).',
} as const;

export const safeguardingSweepSchema = {
  $id: 'SafeguardingSweep',
  type: 'object',
  description:
    'Money an operator moved between a rail partner’s float and the trust account, posted once to the ledger as a balanced entry between the rail’s settlement account and the currency’s trust account.',
  required: [
    'object',
    'id',
    'currency',
    'rail',
    'direction',
    'amount',
    'reference',
    'value_date',
    'trust_account',
    'journal_entry',
    'created_by',
    'created_at',
  ],
  properties: {
    object: { type: 'string', enum: ['safeguarding_sweep'] },
    id: idSchema(ID_PREFIXES.safeguardingSweep, 'Sweep id.'),
    currency: currencySchema,
    rail: railSchema,
    direction: directionSchema,
    amount: {
      type: 'string',
      pattern: '^[0-9]+(\\.[0-9]+)?$',
      description: 'Decimal string at the currency exponent.',
      examples: ['250000.00'],
    },
    reference: {
      type: 'string',
      description: 'The bank’s or partner’s reference of the movement; unique per rail and currency.',
    },
    value_date: { type: 'string', format: 'date', description: 'The day the money moved.' },
    trust_account: nullableIdSchema(ID_PREFIXES.trustAccount, 'The trust account it went to or came from.'),
    journal_entry: idSchema(ID_PREFIXES.journalEntry, 'Its ledger entry.'),
    created_by: { type: 'string', description: 'The member or API key that recorded it.' },
    created_at: timestampSchema,
  },
} as const;

export const SAFEGUARDING_SWEEP_SCHEMAS = [safeguardingSweepSchema];

function presentSweep(s: SafeguardingSweep) {
  const { sweep_id, ...fields } = sweepEventData(s);
  return {
    object: 'safeguarding_sweep',
    id: sweep_id,
    ...fields,
    created_by: s.createdBy,
    created_at: s.createdAt.toISOString(),
  };
}

export function safeguardingSweepRoutes(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: RecordSweepInput }>(
    '/v1/safeguarding/sweeps',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'recordSafeguardingSweep',
        summary: 'Record a sweep between a rail’s float and the trust account',
        description:
          'Money moved at the banks between a rail partner’s float (e.g. the M-Pesa utility account) and the trust account, in either direction, posted at once as one balanced ledger entry: `to_trust` debits the currency’s `trust` account and credits the rail’s `rail_settlement` account, `from_trust` the reverse. `reference` identifies the movement: the same reference (rail and currency) with the same figures is a 200 with the recorded sweep; with other figures a 409 `duplicate_reference`. `value_date` is today (UTC) or earlier; a `trust_account`, if named, holds the currency and counts on that day. Event `safeguarding.sweep.recorded`; evidence `safeguarding.sweep`.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          required: ['currency', 'rail', 'direction', 'amount', 'reference', 'value_date'],
          additionalProperties: false,
          properties: {
            currency: currencySchema,
            rail: railSchema,
            direction: directionSchema,
            amount: {
              type: 'string',
              maxLength: 40,
              description: 'A positive decimal string at the currency’s precision.',
              examples: ['250000.00'],
            },
            reference: {
              type: 'string',
              minLength: 1,
              maxLength: SWEEP_REFERENCE_LENGTH_MAX,
              description: 'The bank’s or partner’s reference of the movement.',
            },
            value_date: { type: 'string', format: 'date', description: 'The day the money moved.' },
            trust_account: idSchema(
              ID_PREFIXES.trustAccount,
              'The trust account that received or paid it, when there are several.',
            ),
          },
        },
        response: {
          200: {
            description: 'The same sweep was recorded before: the recorded one.',
            headers: idempotentWriteHeaders,
            $ref: 'SafeguardingSweep#',
          },
          201: {
            description: 'The sweep, recorded and posted.',
            headers: idempotentWriteHeaders,
            $ref: 'SafeguardingSweep#',
          },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => {
        const { sweep, created } = await recordSweep(
          tx,
          deps,
          organizationId,
          request.body,
          requestActor(request),
          actorIdOf(principalOf(request)),
        );
        return { status: created ? 201 : 200, body: presentSweep(sweep) };
      }),
  );

  app.get<{ Querystring: ListQuery & { currency?: Currency } }>(
    '/v1/safeguarding/sweeps',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'listSafeguardingSweeps',
        summary: 'List sweeps',
        description: 'Newest first.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.safeguardingSweep, {
          currency: {
            type: 'string',
            enum: SUPPORTED_CURRENCIES,
            description: 'Only sweeps in this currency.',
          },
        }),
        response: {
          200: listEnvelopeSchema('SafeguardingSweep', 'A page of sweeps.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) =>
      presentList(
        await listOrganizationSweeps(deps, principalOf(request).organizationId, {
          ...pageRequestOf(request.query),
          currency: request.query.currency,
        }),
        presentSweep,
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/safeguarding/sweeps/:id',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'getSafeguardingSweep',
        summary: 'Retrieve a sweep',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: idParamsSchema(ID_PREFIXES.safeguardingSweep, 'Sweep id.'),
        response: {
          200: { description: 'The sweep.', $ref: 'SafeguardingSweep#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentSweep(await getSweep(deps, principalOf(request).organizationId, request.params.id)),
  );
}
