/** Savings accounts: opened for a customer as a wallet of a product, listed and read, with their daily accruals. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type { Metadata } from '../../../domain/metadata.ts';
import { foundById, retrieveByIdRoute } from '../../../http/readRoutes.ts';
import { makeFromBody } from '../../../http/routeEffects.ts';
import {
  closedObjectSchema,
  cursorPageResponses,
  idempotentWrite,
  LIST_PROBLEMS,
  organizationOf,
  presentPage,
  readOperation,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import {
  daySchema,
  idParamsSchema,
  idSchema,
  listEnvelopeSchema,
  metadataSchema,
  pageLimitSchema,
} from '../../../http/schemas.ts';
import {
  getSavingsAccount,
  listSavingsAccounts,
  listSavingsAccruals,
  openSavingsAccount,
  savingsAccountJson,
} from '../useCases/accounts.ts';
import { presentAccrual } from './presenters.ts';
import { ACCESS, pageQuery } from './schemas.ts';

function openSavingsAccountRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: { product: string; owner: string; metadata?: Metadata } }>(
    '/v1/savings-accounts',
    writeOperation({
      ...ACCESS.write,
      operationId: 'openSavingsAccount',
      summary: 'Open a savings account',
      description:
        'Opens a wallet of the product’s currency for the customer, as an account of the product (its id is the wallet’s), emitting `savings.account.opened`. Money comes in by any transfer to the wallet; it leaves only as a withdrawal (POST …/withdrawals): a transfer, payment batch or conversion from it is a 422 `savings_account_cannot_send`.',
      body: closedObjectSchema(
        {
          product: idSchema(ID_PREFIXES.savingsProduct, 'The product.'),
          owner: idSchema(ID_PREFIXES.customer, 'The customer.'),
          metadata: metadataSchema,
        },
        ['product', 'owner'],
      ),
      responses: { 201: written('SavingsAccount', 'The account.') },
    }),
    idempotentWrite(deps, 201, makeFromBody(deps, openSavingsAccount, savingsAccountJson)),
  );
}

function listSavingsAccountsRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: { limit: number; starting_after?: string; product?: string } }>(
    '/v1/savings-accounts',
    readOperation({
      ...ACCESS.read,
      operationId: 'listSavingsAccounts',
      summary: 'List savings accounts',
      description: 'Newest first; filter by product.',
      querystring: pageQuery(ID_PREFIXES.wallet, {
        product: idSchema(ID_PREFIXES.savingsProduct, 'Only accounts of this product.'),
      }),
      responses: { 200: listEnvelopeSchema('SavingsAccount', 'A page of savings accounts.') },
      problems: LIST_PROBLEMS,
    }),
    async (request) => {
      const page = await listSavingsAccounts(deps, organizationOf(request), {
        limit: request.query.limit,
        startingAfter: request.query.starting_after,
        productId: request.query.product,
      });
      return presentPage(page, savingsAccountJson, (view) => view.account.walletId);
    },
  );
}

function getSavingsAccountRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(app, deps, '/v1/savings-accounts/:id', getSavingsAccount, savingsAccountJson, {
    ...ACCESS.read,
    operationId: 'getSavingsAccount',
    summary: 'Retrieve a savings account',
    ...foundById(
      idParamsSchema(ID_PREFIXES.wallet, 'The savings account (its wallet id).'),
      'SavingsAccount',
    ),
  });
}

function listSavingsAccrualsRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string }; Querystring: { limit: number; before_day?: string } }>(
    '/v1/savings-accounts/:id/accruals',
    readOperation({
      ...ACCESS.read,
      operationId: 'listSavingsAccruals',
      summary: 'List a savings account’s daily accruals',
      description:
        'Newest day first; page with `before_day` (the `next_cursor` of the previous page). Each day shows the balance, rate and day-count fraction it accrued at and its exact interest.',
      params: idParamsSchema(ID_PREFIXES.wallet, 'The savings account.'),
      querystring: closedObjectSchema({
        limit: pageLimitSchema('days'),
        before_day: daySchema('Only days before this one.'),
      }),
      responses: cursorPageResponses(
        'SavingsAccrual',
        { type: 'string', param: 'before_day' },
        'A page of accruals.',
      ),
    }),
    async (request) => {
      const organizationId = organizationOf(request);
      const view = await getSavingsAccount(deps, organizationId, request.params.id);
      const page = await listSavingsAccruals(deps, organizationId, request.params.id, {
        limit: request.query.limit,
        beforeDay: request.query.before_day,
      });
      return presentPage(
        page,
        (row) => presentAccrual(row, view.currency),
        (row) => row.day,
      );
    },
  );
}

export const savingsAccountRoutes = routesInOrder(
  openSavingsAccountRoute,
  listSavingsAccountsRoute,
  getSavingsAccountRoute,
  listSavingsAccrualsRoute,
);
