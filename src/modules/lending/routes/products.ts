/** Loan products: created by an operator, never changed; listed and read. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { numberSourceOf } from '../../../domain/jsonNumbers.ts';
import { requestActorId } from '../../../http/auth.ts';
import { WRITE_PROBLEMS } from '../../../http/problems.ts';
import { foundById, listAndRetrieveRoutes, pagedList } from '../../../http/readRoutes.ts';
import {
  closedObjectSchema,
  idempotentWrite,
  withoutNotFound,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { amountInputSchema, currencyCodeSchema, idParamsSchema } from '../../../http/schemas.ts';
import { LOAN_PRODUCT_NAME_CHARS_MAX } from '../domain/loans.ts';
import {
  createLoanProduct,
  getLoanProduct,
  type LoanProductInput,
  listOrganizationLoanProducts,
} from '../useCases/products.ts';
import { presentLoanProduct } from './presenters.ts';
import { ACCESS, termsProperties } from './schemas.ts';

const principalBound = amountInputSchema('Decimal string in the currency (a JSON number is read exactly).');

const createLoanProductBody = closedObjectSchema(
  {
    name: { type: 'string', minLength: 1, maxLength: LOAN_PRODUCT_NAME_CHARS_MAX },
    currency: currencyCodeSchema,
    ...termsProperties,
    min_principal: principalBound,
    max_principal: principalBound,
  },
  ['name', 'currency', 'interest_rate_bps', 'term_months', 'amortisation', 'min_principal', 'max_principal'],
);

function createLoanProductRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: LoanProductInput }>(
    '/v1/loan-products',
    writeOperation({
      ...ACCESS.admin,
      operationId: 'createLoanProduct',
      summary: 'Create a loan product',
      description:
        'A product’s terms: rate, term, amortisation (flat or declining balance), origination fee, grace period, penalty rate, and the principal it lends between. Products never change; a new offer is a new product.',
      body: createLoanProductBody,
      responses: { 201: written('LoanProduct', 'The product.') },
      problems: withoutNotFound(WRITE_PROBLEMS),
    }),
    idempotentWrite(deps, 201, async (tx, organizationId, request) =>
      presentLoanProduct(
        await createLoanProduct(tx, deps, organizationId, request.body, requestActorId(request), {
          minPrincipal: numberSourceOf(request.body, 'min_principal'),
          maxPrincipal: numberSourceOf(request.body, 'max_principal'),
        }),
      ),
    ),
  );
}

function loanProductsReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/loan-products',
    access: ACCESS.read,
    present: presentLoanProduct,
    list: {
      operationId: 'listLoanProducts',
      summary: 'List loan products',
      description: 'Newest first.',
      ...pagedList('LoanProduct', 'A page of loan products.', ID_PREFIXES.loanProduct),
    },
    page: listOrganizationLoanProducts,
    retrieve: {
      operationId: 'getLoanProduct',
      summary: 'Retrieve a loan product',
      ...foundById(
        idParamsSchema(ID_PREFIXES.loanProduct, 'Loan product id.'),
        'LoanProduct',
        'The product.',
      ),
    },
    get: getLoanProduct,
  });
}

export const loanProductRoutes = routesInOrder(createLoanProductRoute, loanProductsReadRoutes);
