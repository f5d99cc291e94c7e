import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import type { LedgerWriter } from '../../app/ledgerWriter.ts';
import {
  type CreateTransferRequest,
  cancelTransfer,
  createTransfer,
  getTransfer,
  listTransfers,
} from '../../app/transfers.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import {
  METADATA_KEY_LENGTH_MAX,
  METADATA_KEYS_MAX,
  METADATA_VALUE_LENGTH_MAX,
} from '../../domain/metadata.ts';
import { SUPPORTED_CURRENCIES } from '../../domain/money.ts';
import {
  DESTINATION_TYPES,
  LEDGER_STATES,
  RAILS,
  TRANSFER_STATUSES,
  type TransferStatus,
} from '../../domain/transfers.ts';
import { BEARER_SECURITY, principalOf } from '../auth.ts';
import { type ListQuery, pageRequestOf, presentList, presentTransfer } from '../presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../problems.ts';
import { idempotencyContextOf, sendOutcome, sendWrite } from '../writes.ts';

const TAGS = ['Transfers'];
const DESTINATION_FIELD_LENGTH_MAX = 64;
const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;
const walletId = (description: string) => ({
  type: 'string',
  pattern: `^${ID_PREFIXES.wallet}_[0-9a-hjkmnp-tv-z]{26}$`,
  description,
});
const metadata = {
  type: 'object',
  maxProperties: METADATA_KEYS_MAX,
  propertyNames: { minLength: 1, maxLength: METADATA_KEY_LENGTH_MAX },
  additionalProperties: { type: 'string', maxLength: METADATA_VALUE_LENGTH_MAX },
  description: 'Your own key/value pairs, e.g. `customer_ref`.',
} as const;

export const transferSchema = {
  $id: 'Transfer',
  type: 'object',
  description: 'A movement of money out of (or into) a wallet, with its status and ledger state.',
  required: [
    'id',
    'object',
    'direction',
    'source',
    'destination',
    'amount',
    'currency',
    'rail',
    'status',
    'failure_code',
    'ledger_state',
    'metadata',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'string', description: 'Transfer id (`tr_…`).' },
    object: { type: 'string', enum: ['transfer'] },
    direction: { type: 'string', enum: ['outbound', 'inbound'] },
    source: { type: ['string', 'null'], description: 'The paying wallet; null for inbound collections.' },
    destination: {
      type: 'object',
      description: 'Where the money goes: `{type, …}` with the fields of that destination type.',
      required: ['type'],
      properties: { type: { type: 'string' } },
      additionalProperties: { type: 'string' },
    },
    amount: {
      type: 'string',
      description: 'Decimal string at the currency exponent.',
      examples: ['1500.00'],
    },
    currency: { type: 'string', enum: SUPPORTED_CURRENCIES },
    rail: { type: 'string', enum: RAILS },
    status: { type: 'string', enum: TRANSFER_STATUSES },
    status_reason: {
      type: ['string', 'null'],
      description: 'Why it is in this status, e.g. `rail_timeout` while processing.',
    },
    failure_code: {
      type: ['string', 'null'],
      description: 'Why it failed, e.g. `recipient_not_registered`.',
    },
    ledger_state: { type: 'string', enum: LEDGER_STATES },
    metadata,
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    processing_at: nullableTimestamp,
    settled_at: nullableTimestamp,
    failed_at: nullableTimestamp,
    canceled_at: nullableTimestamp,
    returned_at: nullableTimestamp,
  },
} as const;

const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['source', 'destination', 'amount', 'currency'],
  properties: {
    source: walletId('The paying wallet.'),
    destination: {
      type: ['string', 'object'],
      description: `Form B: a wallet id (\`wallet_…\`, rail \`internal\`). Form A: an object with \`type\` (${DESTINATION_TYPES.join(', ')}) and its fields: mobile_money {network, phone, name?}; bank_account {bank_code, account_number, account_name?}; paybill {business_number, account_reference}; till {till_number}; card {token}; wallet {wallet}.`,
      maxLength: DESTINATION_FIELD_LENGTH_MAX,
      required: ['type'],
      maxProperties: 4,
      additionalProperties: { type: 'string', maxLength: DESTINATION_FIELD_LENGTH_MAX },
    },
    amount: {
      type: ['string', 'number'],
      description:
        'A decimal string ("1500.00"); a JSON number is accepted only when exact at the currency exponent.',
    },
    currency: {
      type: 'string',
      enum: SUPPORTED_CURRENCIES,
      description: 'Must be the source wallet currency.',
    },
    rail: {
      type: 'string',
      enum: RAILS,
      description: 'Optional; must match the destination type when given.',
    },
    metadata,
  },
} as const;

const transferParams = {
  type: 'object',
  required: ['id'],
  properties: {
    id: {
      type: 'string',
      pattern: `^${ID_PREFIXES.transfer}_[0-9a-hjkmnp-tv-z]{26}$`,
      description: 'Transfer id.',
    },
  },
} as const;

export function transferRoutes(app: FastifyInstance, deps: Deps, writer: LedgerWriter): void {
  app.addSchema(transferSchema);

  app.post<{ Body: CreateTransferRequest }>(
    '/v1/transfers',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'createTransfer',
        summary: 'Create a transfer',
        description:
          'Holds the amount on the source wallet (available goes down, pending goes up) and hands the transfer to its rail; wallet-to-wallet transfers on the `internal` rail settle at once. Lack of funds is a 422 `insufficient_funds` that writes nothing.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: {
          type: 'object',
          properties: {
            'idempotency-key': {
              type: 'string',
              pattern: '^[\\x21-\\x7E]{1,255}$',
              description: 'Makes the request safe to retry.',
            },
          },
        },
        body: createBody,
        response: {
          201: { description: 'The transfer.', $ref: 'Transfer#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      const outcome = await createTransfer(
        { deps, writer },
        principalOf(request).organizationId,
        request.body,
        idempotencyContextOf(request),
        presentTransfer,
      );
      return sendOutcome(reply, settle(outcome));
    },
  );

  app.get<{ Querystring: ListQuery & { status?: TransferStatus; wallet?: string } }>(
    '/v1/transfers',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listTransfers',
        summary: 'List transfers',
        description: 'Newest first; filter by status, wallet (as source or destination) and creation time.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
            starting_after: transferParams.properties.id,
            'created[gte]': { type: 'string', format: 'date-time' },
            'created[lte]': { type: 'string', format: 'date-time' },
            status: { type: 'string', enum: TRANSFER_STATUSES },
            wallet: walletId('Only transfers from or to this wallet.'),
          },
        },
        response: {
          200: {
            description: 'A page of transfers.',
            type: 'object',
            required: ['object', 'data', 'has_more', 'next_cursor'],
            properties: {
              object: { type: 'string', enum: ['list'] },
              data: { type: 'array', items: { $ref: 'Transfer#' } },
              has_more: { type: 'boolean' },
              next_cursor: { type: ['string', 'null'] },
            },
          },
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const page = await listTransfers(deps, principalOf(request).organizationId, {
        ...pageRequestOf(request.query),
        status: request.query.status,
        walletId: request.query.wallet,
      });
      return presentList(page, presentTransfer);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/transfers/:id',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getTransfer',
        summary: 'Retrieve a transfer',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: transferParams,
        response: {
          200: { description: 'The transfer.', $ref: 'Transfer#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentTransfer(await getTransfer(deps, principalOf(request).organizationId, request.params.id)),
  );

  app.post<{ Params: { id: string } }>(
    '/v1/transfers/:id/cancel',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'cancelTransfer',
        summary: 'Cancel a transfer',
        description:
          'Only before the transfer is handed to its rail (status `pending`); releases the hold. Later, a 409 `invalid_state_transition`.',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: transferParams,
        response: {
          200: { description: 'The canceled transfer.', $ref: 'Transfer#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentTransfer(await cancelTransfer(tx, deps, organizationId, request.params.id)),
      })),
  );
}

import { settleOutcome as settle } from '../../app/idempotency.ts';
