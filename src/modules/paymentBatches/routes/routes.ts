/** Payment batches: submitted as JSON or an uploaded CSV, listed and followed, their items paged, canceled. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { requiredUploadFields, rowsOfCsvUpload } from '../../../http/csvUpload.ts';
import { enumFilter, foundById, listAndRetrieveRoutes, pagedList } from '../../../http/readRoutes.ts';
import { actOnId, type BodyAndQuery, createFromRequest } from '../../../http/routeEffects.ts';
import {
  accessByScope,
  closedObjectSchema,
  cursorPageResponses,
  idempotentWrite,
  organizationOf,
  presentPage,
  readOperation,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { idParamsSchema, idSchema, pageLimitSchema } from '../../../http/schemas.ts';
import {
  PAYMENT_BATCH_BODY_BYTES_MAX,
  PAYMENT_BATCH_ITEM_STATUSES,
  PAYMENT_BATCH_ITEMS_MAX,
  PAYMENT_BATCH_STATUSES,
  type PaymentBatchItemStatus,
  type PaymentBatchStatus,
} from '../domain.ts';
import { cancelPaymentBatch, getPaymentBatch, listBatches, listBatchItems } from '../useCases/batches.ts';
import { itemsOfCsvRows } from '../useCases/csv.ts';
import { submitPaymentBatch } from '../useCases/submit.ts';
import { presentItem, presentPaymentBatch } from './presenters.ts';
import { paymentBatchBodySchema } from './schemas.ts';

const TAGS = ['Payment batches'];
const ACCESS = accessByScope(TAGS);
const batchParams = idParamsSchema(ID_PREFIXES.paymentBatch, 'Payment batch id.');

interface BatchBody {
  source: string;
  currency: string;
  reference: string;
  items: unknown[];
  metadata?: Record<string, string>;
}

/** Where a CSV upload's batch fields go: the query string, since the body is the items. */
interface UploadQuery {
  source?: string;
  currency?: string;
  reference?: string;
}

const uploadQuerySchema = closedObjectSchema({
  source: idSchema(ID_PREFIXES.wallet, 'With a CSV upload: the paying wallet.'),
  currency: { type: 'string', description: 'With a CSV upload: the paying wallet’s currency.' },
  reference: {
    type: 'string',
    maxLength: 100,
    description: 'With a CSV upload: the batch’s reference.',
  },
});

/** The batch a request submits: its JSON body, or a CSV upload's rows with the query string's fields. */
function batchOf({ body, query }: BodyAndQuery<BatchBody | string, UploadQuery>): BatchBody {
  if (typeof body !== 'string') return body;
  return {
    ...requiredUploadFields(query, ['source', 'currency', 'reference']),
    items: itemsOfCsvRows(rowsOfCsvUpload(body, PAYMENT_BATCH_ITEMS_MAX)),
  };
}

function submitPaymentBatchRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: BatchBody | string; Querystring: UploadQuery }>(
    '/v1/payment-batches',
    {
      ...writeOperation({
        ...ACCESS.write,
        config: { acceptsCsv: true },
        operationId: 'createPaymentBatch',
        summary: 'Submit a payment batch',
        description:
          'JSON (`application/json`), or a CSV upload (`text/csv`, RFC 4180, a header row with `reference`, `amount`, `type` and the destination’s fields, or `wallet`; `source`, `currency` and `reference` then go in the query string). Every item is checked first: a faulty item refuses the whole batch with 422 `payment_batch_invalid`, listing each fault with its `row` and `param`; nothing is submitted. An accepted batch is `validating` (202); follow it with `GET /v1/payment-batches/{id}` or the `payment_batch.*` events. A `reference` already used is a 409 `duplicate_reference`: a batch is paid once, and each item’s transfer carries its own idempotency key, so no item is ever paid twice.',
        querystring: uploadQuerySchema,
        body: {
          content: {
            'application/json': { schema: paymentBatchBodySchema },
            'text/csv': { schema: { type: 'string', description: 'The items as CSV with a header row.' } },
          },
        },
        responses: { 202: written('PaymentBatch', 'The batch, accepted.') },
      }),
      bodyLimit: PAYMENT_BATCH_BODY_BYTES_MAX,
    },
    idempotentWrite(deps, 202, createFromRequest(deps, batchOf, submitPaymentBatch, presentPaymentBatch)),
  );
}

function paymentBatchesReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/payment-batches',
    access: ACCESS.read,
    present: presentPaymentBatch,
    list: {
      operationId: 'listPaymentBatches',
      summary: 'List payment batches',
      description: 'Newest first.',
      ...pagedList('PaymentBatch', 'A page of payment batches.', ID_PREFIXES.paymentBatch, {
        status: enumFilter(PAYMENT_BATCH_STATUSES, 'Only batches in this status.'),
      }),
    },
    page: listBatches,
    filtersOf: (query: { status?: PaymentBatchStatus }) => ({ status: query.status }),
    retrieve: {
      operationId: 'getPaymentBatch',
      summary: 'Retrieve a payment batch',
      description: 'Its status and counts: poll it, or follow the `payment_batch.*` events.',
      ...foundById(batchParams, 'PaymentBatch', 'The batch.'),
    },
    get: getPaymentBatch,
  });
}

const itemsQuerySchema = closedObjectSchema({
  limit: pageLimitSchema('items'),
  starting_after: {
    type: 'integer',
    minimum: 0,
    description: 'The last row of the previous page (its `next_cursor`).',
  },
  status: enumFilter(PAYMENT_BATCH_ITEM_STATUSES, 'Only items in this status.'),
});

function listPaymentBatchItemsRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{
    Params: { id: string };
    Querystring: { limit: number; starting_after?: number; status?: PaymentBatchItemStatus };
  }>(
    '/v1/payment-batches/:id/items',
    readOperation({
      ...ACCESS.read,
      operationId: 'listPaymentBatchItems',
      summary: 'List a batch’s items',
      description: 'In row order, with each item’s result: the transfer it became, or why it failed.',
      params: batchParams,
      querystring: itemsQuerySchema,
      responses: cursorPageResponses(
        'PaymentBatchItem',
        { type: 'integer', param: 'starting_after' },
        'A page of items.',
      ),
    }),
    async (request) => {
      const organizationId = organizationOf(request);
      const batch = await getPaymentBatch(deps, organizationId, request.params.id);
      const page = await listBatchItems(deps, organizationId, batch.id, {
        limit: request.query.limit,
        afterPosition: request.query.starting_after,
        status: request.query.status,
      });
      return presentPage(page, presentItem(batch.currency), (item) => item.position);
    },
  );
}

function cancelPaymentBatchRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string } }>(
    '/v1/payment-batches/:id/cancel',
    writeOperation({
      ...ACCESS.write,
      operationId: 'cancelPaymentBatch',
      summary: 'Cancel a payment batch',
      description:
        'Cancels the items not yet run and releases what the batch holds; items already run stay as they are (their transfers follow their own course). A finished batch is a 409 `invalid_state_transition`.',
      params: batchParams,
      responses: { 200: written('PaymentBatch', 'The batch, canceled.') },
    }),
    idempotentWrite(deps, 200, actOnId(deps, cancelPaymentBatch, presentPaymentBatch)),
  );
}

/** Payment batches: submit (JSON or an uploaded CSV), follow, page the items, cancel. */
export const paymentBatchRoutes = routesInOrder(
  submitPaymentBatchRoute,
  paymentBatchesReadRoutes,
  listPaymentBatchItemsRoute,
  cancelPaymentBatchRoute,
);
