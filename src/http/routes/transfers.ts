import type { FastifyInstance } from 'fastify';
import { actorIdOf } from '../../app/apiKeys.ts';
import type { Deps } from '../../app/deps.ts';
import { settleOutcome } from '../../app/idempotency.ts';
import type { LedgerWriter } from '../../app/posting/writer.ts';
import {
  type CreateTransferRequest,
  cancelTransfer,
  createTransfer,
  getTransfer,
  listTransfers,
} from '../../app/transfers.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { TRANSFER_STATUSES, type TransferStatus } from '../../domain/transfers.ts';
import { BEARER_SECURITY, principalOf, requestActor } from '../auth.ts';
import { type ListQuery, pageRequestOf, presentList, presentTransfer } from '../presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../problems.ts';
import {
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  idSchema,
  listEnvelopeSchema,
  listQuerySchema,
  transferCreateBodySchema,
} from '../schemas.ts';
import { idempotencyContextOf, sendOutcome, sendWrite } from '../writes.ts';

const TAGS = ['Transfers'];
const transferParams = idParamsSchema(ID_PREFIXES.transfer, 'Transfer id.');

export function transferRoutes(app: FastifyInstance, deps: Deps, writer: LedgerWriter): void {
  app.post<{ Body: CreateTransferRequest }>(
    '/v1/transfers',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'createTransfer',
        summary: 'Create a transfer',
        description:
          'Holds the amount on the source wallet (available goes down, pending goes up) and hands the transfer to its rail; wallet-to-wallet transfers on the `internal` rail settle at once. Lack of funds is a 422 `insufficient_funds` that writes nothing. In a pilot, a transfer past the organization’s cap for the UTC day is a 422 `pilot_cap_exceeded` naming the `cap` and what `remaining`.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: transferCreateBodySchema,
        response: {
          201: { description: 'The transfer.', headers: idempotentWriteHeaders, $ref: 'Transfer#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    async (request, reply) => {
      // Not sendWrite: creates go through the batch ledger writer, which claims the key in its own transaction.
      const outcome = await createTransfer(
        { deps, writer },
        principalOf(request).organizationId,
        request.body,
        idempotencyContextOf(request),
        presentTransfer,
        actorIdOf(principalOf(request)),
      );
      return sendOutcome(reply, settleOutcome(outcome));
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
        querystring: listQuerySchema(ID_PREFIXES.transfer, {
          status: { type: 'string', enum: TRANSFER_STATUSES, description: 'Only transfers in this status.' },
          wallet: idSchema(ID_PREFIXES.wallet, 'Only transfers from or to this wallet.'),
        }),
        response: {
          200: listEnvelopeSchema('Transfer', 'A page of transfers.'),
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
        headers: idempotencyHeadersSchema,
        params: transferParams,
        response: {
          200: { description: 'The canceled transfer.', headers: idempotentWriteHeaders, $ref: 'Transfer#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentTransfer(
          await cancelTransfer(tx, deps, organizationId, request.params.id, requestActor(request)),
        ),
      })),
  );
}
