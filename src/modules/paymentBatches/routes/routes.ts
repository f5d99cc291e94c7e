import type { FastifyInstance } from 'fastify';
import { actorIdOf } from '../../../app/apiKeys.ts';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { formatAmount } from '../../../domain/money.ts';
import { BEARER_SECURITY, principalOf, requestActor } from '../../../http/auth.ts';
import { requiredUploadFields, rowsOfCsvUpload } from '../../../http/csvUpload.ts';
import { type ListQuery, pageRequestOf, presentList } from '../../../http/presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../../../http/problems.ts';
import {
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  idSchema,
  listEnvelopeSchema,
  listQuerySchema,
  pageLimitSchema,
} from '../../../http/schemas.ts';
import { sendWrite } from '../../../http/writes.ts';
import {
  PAYMENT_BATCH_BODY_BYTES_MAX,
  PAYMENT_BATCH_ITEM_STATUSES,
  PAYMENT_BATCH_ITEMS_MAX,
  PAYMENT_BATCH_STATUSES,
  type PaymentBatch,
  type PaymentBatchItem,
  type PaymentBatchItemStatus,
  type PaymentBatchStatus,
} from '../domain.ts';
import { cancelPaymentBatch, getPaymentBatch, listBatches, listBatchItems } from '../useCases/batches.ts';
import { itemsOfCsvRows } from '../useCases/csv.ts';
import { paymentBatchEventData } from '../useCases/events.ts';
import { submitPaymentBatch } from '../useCases/submit.ts';
import { paymentBatchBodySchema } from './schemas.ts';

const TAGS = ['Payment batches'];
const batchParams = idParamsSchema(ID_PREFIXES.paymentBatch, 'Payment batch id.');

export function presentPaymentBatch(b: PaymentBatch) {
  const data = paymentBatchEventData(b);
  return {
    object: 'payment_batch',
    id: b.id,
    reference: b.reference,
    status: b.status,
    failure_code: b.failureCode,
    source: b.sourceWalletId,
    currency: b.currency,
    total: data.total,
    fees: formatAmount(b.feeTotalMinor, b.currency),
    reserved: formatAmount(b.reservedMinor, b.currency),
    items: b.itemCount,
    succeeded: b.succeededCount,
    failed: b.failedCount,
    canceled: b.canceledCount,
    authorization: b.authorization && {
      decision: b.authorization.decision,
      policy_version: b.authorization.policyVersion,
      rule: b.authorization.rule,
    },
    approval: b.approvalId,
    created_by: b.createdBy,
    metadata: b.metadata,
    created_at: b.createdAt.toISOString(),
    updated_at: b.updatedAt.toISOString(),
    finished_at: b.finishedAt?.toISOString() ?? null,
  };
}

export function presentItem(currency: PaymentBatch['currency']) {
  return (item: PaymentBatchItem) => ({
    object: 'payment_batch_item',
    row: item.position,
    reference: item.reference,
    status: item.status,
    destination: item.destination,
    rail: item.rail,
    amount: formatAmount(item.amountMinor, currency),
    fee: formatAmount(item.fee?.feeMinor ?? 0n, currency),
    transfer: item.transferId,
    failure_code: item.failureCode,
    failure_detail: item.failureDetail,
    metadata: item.metadata,
    updated_at: item.updatedAt.toISOString(),
  });
}

interface BatchBody {
  source: string;
  currency: string;
  reference: string;
  items: unknown[];
  metadata?: Record<string, string>;
}

/** Payment batches: submit (JSON or an uploaded CSV), follow, page the items, cancel. */
export function paymentBatchRoutes(app: FastifyInstance, deps: Deps): void {
  app.post<{
    Body: BatchBody | string;
    Querystring: { source?: string; currency?: string; reference?: string };
  }>(
    '/v1/payment-batches',
    {
      config: { scope: 'write', acceptsCsv: true },
      bodyLimit: PAYMENT_BATCH_BODY_BYTES_MAX,
      schema: {
        operationId: 'createPaymentBatch',
        summary: 'Submit a payment batch',
        description:
          'JSON (`application/json`), or a CSV upload (`text/csv`, RFC 4180, a header row with `reference`, `amount`, `type` and the destination’s fields, or `wallet`; `source`, `currency` and `reference` then go in the query string). Every item is checked first: a faulty item refuses the whole batch with 422 `payment_batch_invalid`, listing each fault with its `row` and `param`; nothing is submitted. An accepted batch is `validating` (202); follow it with `GET /v1/payment-batches/{id}` or the `payment_batch.*` events. A `reference` already used is a 409 `duplicate_reference`: a batch is paid once, and each item’s transfer carries its own idempotency key, so no item is ever paid twice.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            source: idSchema(ID_PREFIXES.wallet, 'With a CSV upload: the paying wallet.'),
            currency: { type: 'string', description: 'With a CSV upload: the paying wallet’s currency.' },
            reference: {
              type: 'string',
              maxLength: 100,
              description: 'With a CSV upload: the batch’s reference.',
            },
          },
        },
        body: {
          content: {
            'application/json': { schema: paymentBatchBodySchema },
            'text/csv': { schema: { type: 'string', description: 'The items as CSV with a header row.' } },
          },
        },
        response: {
          202: {
            description: 'The batch, accepted.',
            headers: idempotentWriteHeaders,
            $ref: 'PaymentBatch#',
          },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => {
        let input: BatchBody;
        if (typeof request.body === 'string') {
          input = {
            ...requiredUploadFields(request.query, ['source', 'currency', 'reference']),
            items: itemsOfCsvRows(rowsOfCsvUpload(request.body, PAYMENT_BATCH_ITEMS_MAX)),
          };
        } else {
          input = request.body;
        }
        const batch = await submitPaymentBatch(
          tx,
          deps,
          organizationId,
          input,
          actorIdOf(principalOf(request)),
        );
        return { status: 202, body: presentPaymentBatch(batch) };
      }),
  );

  app.get<{ Querystring: ListQuery & { status?: PaymentBatchStatus } }>(
    '/v1/payment-batches',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listPaymentBatches',
        summary: 'List payment batches',
        description: 'Newest first.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.paymentBatch, {
          status: {
            type: 'string',
            enum: PAYMENT_BATCH_STATUSES,
            description: 'Only batches in this status.',
          },
        }),
        response: {
          200: listEnvelopeSchema('PaymentBatch', 'A page of payment batches.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const page = await listBatches(deps, principalOf(request).organizationId, {
        ...pageRequestOf(request.query),
        status: request.query.status,
      });
      return presentList(page, presentPaymentBatch);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/payment-batches/:id',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getPaymentBatch',
        summary: 'Retrieve a payment batch',
        description: 'Its status and counts: poll it, or follow the `payment_batch.*` events.',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: batchParams,
        response: {
          200: { description: 'The batch.', $ref: 'PaymentBatch#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentPaymentBatch(
        await getPaymentBatch(deps, principalOf(request).organizationId, request.params.id),
      ),
  );

  app.get<{
    Params: { id: string };
    Querystring: { limit: number; starting_after?: number; status?: PaymentBatchItemStatus };
  }>(
    '/v1/payment-batches/:id/items',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listPaymentBatchItems',
        summary: 'List a batch’s items',
        description: 'In row order, with each item’s result: the transfer it became, or why it failed.',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: batchParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            limit: pageLimitSchema('items'),
            starting_after: {
              type: 'integer',
              minimum: 0,
              description: 'The last row of the previous page (its `next_cursor`).',
            },
            status: {
              type: 'string',
              enum: PAYMENT_BATCH_ITEM_STATUSES,
              description: 'Only items in this status.',
            },
          },
        },
        response: {
          200: {
            description: 'A page of items.',
            type: 'object',
            required: ['object', 'data', 'has_more', 'next_cursor'],
            properties: {
              object: { type: 'string', enum: ['list'] },
              data: { type: 'array', items: { $ref: 'PaymentBatchItem#' } },
              has_more: { type: 'boolean' },
              next_cursor: {
                type: ['integer', 'null'],
                description: 'Pass as `starting_after` for the next page.',
              },
            },
          },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) => {
      const organizationId = principalOf(request).organizationId;
      const batch = await getPaymentBatch(deps, organizationId, request.params.id);
      const page = await listBatchItems(deps, organizationId, batch.id, {
        limit: request.query.limit,
        afterPosition: request.query.starting_after,
        status: request.query.status,
      });
      const last = page.data.at(-1);
      return {
        object: 'list',
        data: page.data.map(presentItem(batch.currency)),
        has_more: page.hasMore,
        next_cursor: page.hasMore && last ? last.position : null,
      };
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v1/payment-batches/:id/cancel',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'cancelPaymentBatch',
        summary: 'Cancel a payment batch',
        description:
          'Cancels the items not yet run and releases what the batch holds; items already run stay as they are (their transfers follow their own course). A finished batch is a 409 `invalid_state_transition`.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: batchParams,
        response: {
          200: {
            description: 'The batch, canceled.',
            headers: idempotentWriteHeaders,
            $ref: 'PaymentBatch#',
          },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentPaymentBatch(
          await cancelPaymentBatch(tx, deps, organizationId, request.params.id, requestActor(request)),
        ),
      })),
  );
}
