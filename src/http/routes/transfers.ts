/** Transfers: created through the batch ledger writer, listed and read, and canceled before their rail has them. */
import type { FastifyInstance } from 'fastify';
import { actorIdOf } from '../../app/apiKeyAuthentication.ts';
import type { Deps } from '../../app/deps.ts';
import { settleOutcome } from '../../app/idempotency.ts';
import type { LedgerWriter } from '../../app/posting/writer.ts';
import type { CreateTransferRequest } from '../../app/transferRequests.ts';
import { cancelTransfer } from '../../app/transferStatusChanges.ts';
import { createTransfer, getTransfer, listTransfers } from '../../app/transfers.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { TRANSFER_STATUSES, type TransferStatus } from '../../domain/transfers.ts';
import { principalOf } from '../auth.ts';
import { type ListQuery, presentTransfer } from '../presenters.ts';
import { pagedList, retrieveByIdRoute } from '../readRoutes.ts';
import { actOnId } from '../routeEffects.ts';
import {
  found,
  idempotentWrite,
  readOperation,
  retrieveFilteredPage,
  writeOperation,
  written,
} from '../routeKit.ts';
import { idParamsSchema, idSchema } from '../schemas.ts';
import { transferCreateBodySchema } from '../transferSchemas.ts';
import { idempotencyContextOf, sendOutcome } from '../writes.ts';

const TAGS = ['Transfers'];
const transferParams = idParamsSchema(ID_PREFIXES.transfer, 'Transfer id.');

function createTransferRoute(app: FastifyInstance, deps: Deps, writer: LedgerWriter): void {
  app.post<{ Body: CreateTransferRequest }>(
    '/v1/transfers',
    writeOperation({
      scope: 'write',
      operationId: 'createTransfer',
      summary: 'Create a transfer',
      description:
        'Holds the amount on the source wallet (available goes down, pending goes up) and hands the transfer to its rail; wallet-to-wallet transfers on the `internal` rail settle at once. Lack of funds is a 422 `insufficient_funds` that writes nothing. In a pilot, a transfer past the organization’s cap for the UTC day is a 422 `pilot_cap_exceeded` naming the `cap` and what `remaining`.',
      tags: TAGS,
      body: transferCreateBodySchema,
      responses: { 201: written('Transfer', 'The transfer.') },
    }),
    async (request, reply) => {
      // Not sendWrite: creates go through the batch ledger writer, which claims the key in its own transaction.
      const principal = principalOf(request);
      const outcome = await createTransfer(
        { deps, writer },
        principal.organizationId,
        request.body,
        idempotencyContextOf(request),
        presentTransfer,
        actorIdOf(principal),
      );
      return sendOutcome(reply, settleOutcome(outcome));
    },
  );
}

function listTransfersRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: ListQuery & { status?: TransferStatus; wallet?: string } }>(
    '/v1/transfers',
    readOperation({
      scope: 'read',
      operationId: 'listTransfers',
      summary: 'List transfers',
      description: 'Newest first; filter by status, wallet (as source or destination) and creation time.',
      tags: TAGS,
      ...pagedList('Transfer', 'A page of transfers.', ID_PREFIXES.transfer, {
        status: { type: 'string', enum: TRANSFER_STATUSES, description: 'Only transfers in this status.' },
        wallet: idSchema(ID_PREFIXES.wallet, 'Only transfers from or to this wallet.'),
      }),
    }),
    retrieveFilteredPage(
      deps,
      listTransfers,
      (query) => ({ status: query.status, walletId: query.wallet }),
      presentTransfer,
    ),
  );
}

function getTransferRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(app, deps, '/v1/transfers/:id', getTransfer, presentTransfer, {
    scope: 'read',
    operationId: 'getTransfer',
    summary: 'Retrieve a transfer',
    tags: TAGS,
    params: transferParams,
    responses: { 200: found('Transfer', 'The transfer.') },
  });
}

function cancelTransferRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string } }>(
    '/v1/transfers/:id/cancel',
    writeOperation({
      scope: 'write',
      operationId: 'cancelTransfer',
      summary: 'Cancel a transfer',
      description:
        'Only before the transfer is handed to its rail (status `pending`); releases the hold. Later, a 409 `invalid_state_transition`.',
      tags: TAGS,
      params: transferParams,
      responses: { 200: written('Transfer', 'The canceled transfer.') },
    }),
    idempotentWrite(deps, 200, actOnId(deps, cancelTransfer, presentTransfer)),
  );
}

export function transferRoutes(app: FastifyInstance, deps: Deps, writer: LedgerWriter): void {
  createTransferRoute(app, deps, writer);
  listTransfersRoute(app, deps);
  getTransferRoute(app, deps);
  cancelTransferRoute(app, deps);
}
