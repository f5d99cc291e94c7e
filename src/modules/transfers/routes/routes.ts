/**
 * Transfers: created through the batch ledger writer, quoted, listed and read, canceled before their rail has
 * them; and a transfer's evidence and Travel Rule data for operators.
 */
import type { FastifyInstance } from 'fastify';
import { actorIdOf } from '../../../app/apiKeyAuthentication.ts';
import type { Deps } from '../../../app/deps.ts';
import { settleOutcome } from '../../../app/idempotency.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { formatAmount } from '../../../domain/money.ts';
import { TRANSFER_STATUSES, type TransferStatus } from '../../../domain/transfers.ts';
import { principalOf } from '../../../http/auth.ts';
import { presentTransfer } from '../../../http/presenters.ts';
import {
  enumFilter,
  listAndRetrieveRoutes,
  pagedList,
  retrieveByIdRoute,
  statusAndWalletOf,
} from '../../../http/readRoutes.ts';
import { actOnId } from '../../../http/routeEffects.ts';
import { found, idempotentWrite, preparedWrite, writeOperation, written } from '../../../http/routeKit.ts';
import { subjectEvidenceRoute } from '../../../http/routes/evidence.ts';
import { idSchema } from '../../../http/schemas.ts';
import { idempotencyContextOf, sendOutcome } from '../../../http/writes.ts';
import { presentTravelRuleRecord, TRAVEL_RULE_TAGS } from '../../compliance/index.ts';
import { FEE_TAGS } from '../../fees/index.ts';
import type { LedgerWriter } from '../useCases/posting/writer.ts';
import type { CreateTransferRequest } from '../useCases/requests.ts';
import { cancelTransfer } from '../useCases/statusChanges.ts';
import {
  createTransfer,
  getTransfer,
  getTransferTravelRule,
  listTransfers,
  quoteTransfer,
  type TransferQuote,
} from '../useCases/transfers.ts';
import { transferCreateBodySchema, transferParams } from './schemas.ts';

const TAGS = ['Transfers'];

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

function transfersReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/transfers',
    access: { scope: 'read', tags: TAGS },
    present: presentTransfer,
    list: {
      operationId: 'listTransfers',
      summary: 'List transfers',
      description: 'Newest first; filter by status, wallet (as source or destination) and creation time.',
      ...pagedList('Transfer', 'A page of transfers.', ID_PREFIXES.transfer, {
        status: enumFilter(TRANSFER_STATUSES, 'Only transfers in this status.'),
        wallet: idSchema(ID_PREFIXES.wallet, 'Only transfers from or to this wallet.'),
      }),
    },
    page: listTransfers,
    filtersOf: statusAndWalletOf<TransferStatus>,
    retrieve: {
      operationId: 'getTransfer',
      summary: 'Retrieve a transfer',
      params: transferParams,
      responses: { 200: found('Transfer', 'The transfer.') },
    },
    get: getTransfer,
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

function getTransferTravelRuleRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(
    app,
    deps,
    '/v1/transfers/:id/travel-rule',
    getTransferTravelRule,
    ({ transfer, record }) => presentTravelRuleRecord(transfer, record),
    {
      scope: 'compliance',
      operationId: 'getTransferTravelRule',
      summary: 'Retrieve a transfer’s Travel Rule data',
      description:
        'The originator and beneficiary data the transfer carried, with the threshold, jurisdiction and converted amount that applied; 404 when it carried none. Needs the `compliance` scope.',
      tags: TRAVEL_RULE_TAGS,
      params: transferParams,
      responses: { 200: found('TravelRuleRecord', 'The Travel Rule data.') },
    },
  );
}

export function transferRoutes(app: FastifyInstance, deps: Deps, writer: LedgerWriter): void {
  createTransferRoute(app, deps, writer);
  transfersReadRoutes(app, deps);
  cancelTransferRoute(app, deps);
  getTransferTravelRuleRoute(app, deps);
  quoteTransferRoute(app, deps);
  subjectEvidenceRoute(app, deps, {
    subject: 'transfer',
    path: '/v1/transfers/:id/evidence',
    prefix: ID_PREFIXES.transfer,
    operationId: 'listTransferEvidence',
    requireSubject: getTransfer,
  });
}

export function presentTransferQuote(quote: TransferQuote) {
  const money = (minor: bigint) => formatAmount(minor, quote.currency);
  return {
    object: 'transfer_quote',
    amount: money(quote.amountMinor),
    fee: money(quote.fee.feeMinor),
    total: money(quote.totalMinor),
    currency: quote.currency,
    rail: quote.rail,
    fee_schedule: { version: quote.fee.scheduleVersion, rule: quote.fee.rule },
  };
}

function quoteTransferRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: CreateTransferRequest }>(
    '/v1/transfers/quote',
    writeOperation({
      scope: 'read',
      operationId: 'quoteTransfer',
      summary: 'Quote a transfer',
      description:
        'Takes the body of `POST /v1/transfers` and answers what that transfer would cost now, creating nothing: the amount, the fee of the organization’s current fee schedule, the total the source wallet is debited, and the schedule version and rule that decided the fee. The request is checked as a new transfer is (currency, destination, rail and its bounds; a fault is the same 400 or 404), but not its funds, compliance or policy. A read, so it needs only `read`; like every POST it honours `Idempotency-Key`: a retry with the same key and body answers the first quote again.',
      tags: ['Transfers', ...FEE_TAGS],
      body: transferCreateBodySchema,
      responses: { 200: written('TransferQuote', 'The quote.') },
    }),
    preparedWrite(
      deps,
      // Computed before the key's transaction opens: the fee schedule is read through the process cache,
      // as a new transfer reads it (on the embedded database a read inside that transaction would wait for it).
      (organizationId, request) => quoteTransfer(deps, organizationId, request.body),
      async (_tx, _organizationId, _request, quote) => ({
        status: 200,
        body: presentTransferQuote(quote),
      }),
    ),
  );
}
