/** Savings products: created with fixed terms, read with the rate in force today, and given new rates from a day on. */
import type { FastifyInstance } from 'fastify';
import type { Deps, Queryable } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { requestActorId } from '../../../http/auth.ts';
import { presentList } from '../../../http/presenters.ts';
import {
  closedObjectSchema,
  found,
  idempotentWrite,
  LIST_PROBLEMS,
  organizationOf,
  readOperation,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { daySchema, idParamsSchema, listEnvelopeSchema } from '../../../http/schemas.ts';
import { organizationNow, utcDay } from '../../testClock/index.ts';
import {
  addSavingsRate,
  type CreateSavingsProductInput,
  createSavingsProduct,
  getSavingsProduct,
  listSavingsProducts,
  type SavingsProduct,
} from '../useCases/products.ts';
import { presentSavingsProduct } from './presenters.ts';
import { ACCESS, pageQuery, productBody, rateBps } from './schemas.ts';

const productParams = idParamsSchema(ID_PREFIXES.savingsProduct, 'The product.');

/** The organization's today, by its clock: the day a product's rate in force is shown for. */
async function todayOf(db: Queryable, deps: Deps, organizationId: string): Promise<string> {
  return utcDay(await organizationNow(db, deps, organizationId));
}

/** A product as shown: with the rate in force on the organization's today. */
async function presentOnToday(db: Queryable, deps: Deps, organizationId: string, product: SavingsProduct) {
  return presentSavingsProduct(product, await todayOf(db, deps, organizationId));
}

function createSavingsProductRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: CreateSavingsProductInput }>(
    '/v1/savings-products',
    writeOperation({
      ...ACCESS.admin,
      operationId: 'createSavingsProduct',
      summary: 'Create a savings product',
      description:
        'A product’s terms are fixed once created; its rate is effective-dated (POST …/rates). Interest accrues daily on each account’s closing balance and is capitalised on each month’s last day, by the organization’s clock.',
      body: productBody,
      responses: { 201: written('SavingsProduct', 'The product.') },
    }),
    idempotentWrite(deps, 201, async (tx, organizationId, request) =>
      presentOnToday(
        tx,
        deps,
        organizationId,
        await createSavingsProduct(tx, deps, organizationId, request.body, requestActorId(request)),
      ),
    ),
  );
}

function listSavingsProductsRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: { limit: number; starting_after?: string } }>(
    '/v1/savings-products',
    readOperation({
      ...ACCESS.read,
      operationId: 'listSavingsProducts',
      summary: 'List savings products',
      description: 'Newest first.',
      querystring: pageQuery(ID_PREFIXES.savingsProduct),
      responses: { 200: listEnvelopeSchema('SavingsProduct', 'A page of products.') },
      problems: LIST_PROBLEMS,
    }),
    async (request) => {
      const organizationId = organizationOf(request);
      const page = await listSavingsProducts(deps, organizationId, {
        limit: request.query.limit,
        startingAfter: request.query.starting_after,
      });
      const today = await todayOf(deps.store, deps, organizationId);
      return presentList(page, (p) => presentSavingsProduct(p, today));
    },
  );
}

function getSavingsProductRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string } }>(
    '/v1/savings-products/:id',
    readOperation({
      ...ACCESS.read,
      operationId: 'getSavingsProduct',
      summary: 'Retrieve a savings product',
      params: productParams,
      responses: { 200: found('SavingsProduct') },
    }),
    async (request) => {
      const organizationId = organizationOf(request);
      const product = await getSavingsProduct(deps, organizationId, request.params.id);
      return presentOnToday(deps.store, deps, organizationId, product);
    },
  );
}

function addSavingsRateRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: { annual_rate_bps: number; effective_from?: string } }>(
    '/v1/savings-products/:id/rates',
    writeOperation({
      ...ACCESS.admin,
      operationId: 'addSavingsProductRate',
      summary: 'Change a savings product’s rate from a day on',
      description:
        'Appends a rate in force from `effective_from` (today on the organization’s clock by default) until the next one. Never earlier than today (422 `savings_rate_in_past`): days already accrued keep their rate. A second rate from the same day is a 409 `savings_rate_exists`.',
      params: productParams,
      body: closedObjectSchema(
        {
          annual_rate_bps: rateBps,
          effective_from: daySchema('The first day of the new rate.'),
        },
        ['annual_rate_bps'],
      ),
      responses: { 201: written('SavingsProduct', 'The product, with its rates.') },
    }),
    idempotentWrite(deps, 201, async (tx, organizationId, request) => {
      const actorId = requestActorId(request);
      const product = await addSavingsRate(
        tx,
        deps,
        organizationId,
        request.params.id,
        request.body,
        actorId,
      );
      return presentOnToday(tx, deps, organizationId, product);
    }),
  );
}

export const savingsProductRoutes = routesInOrder(
  createSavingsProductRoute,
  listSavingsProductsRoute,
  getSavingsProductRoute,
  addSavingsRateRoute,
);
