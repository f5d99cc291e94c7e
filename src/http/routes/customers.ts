/** Customers: created, listed and read, and changed (with what a change does to a verification). */
import type { FastifyInstance } from 'fastify';
import {
  type CreateCustomerInput,
  type CustomerChange,
  createCustomer,
  getCustomer,
  listCustomers,
  updateCustomer,
} from '../../app/customers.ts';
import type { Deps } from '../../app/deps.ts';
import { CUSTOMER_TYPES, type CustomerType } from '../../domain/customers.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { customerCreateBodySchema, customerUpdateBodySchema } from '../customerSchemas.ts';
import { type ListQuery, presentCustomer } from '../presenters.ts';
import { pagedList, retrieveByIdRoute } from '../readRoutes.ts';
import { changeById, makeFromBody } from '../routeEffects.ts';
import {
  found,
  idempotentWrite,
  readOperation,
  retrieveFilteredPage,
  writeOperation,
  written,
} from '../routeKit.ts';
import { idParamsSchema } from '../schemas.ts';
import { subjectEvidenceRoute } from './evidence.ts';

const TAGS = ['Customers'];
const customerParams = idParamsSchema(ID_PREFIXES.customer, 'Customer id.');

function createCustomerRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: CreateCustomerInput }>(
    '/v1/customers',
    writeOperation({
      scope: 'write',
      operationId: 'createCustomer',
      summary: 'Create a customer',
      description: 'Creates an individual or business customer. KYC starts `unverified`.',
      tags: TAGS,
      body: customerCreateBodySchema,
      responses: { 201: written('Customer', 'The customer.') },
    }),
    idempotentWrite(deps, 201, makeFromBody(deps, createCustomer, presentCustomer)),
  );
}

function listCustomersRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: ListQuery & { type?: CustomerType } }>(
    '/v1/customers',
    readOperation({
      scope: 'read',
      operationId: 'listCustomers',
      summary: 'List customers',
      description: 'Newest first, with cursor pagination.',
      tags: TAGS,
      ...pagedList('Customer', 'A page of customers.', ID_PREFIXES.customer, {
        type: { type: 'string', enum: CUSTOMER_TYPES, description: 'Only customers of this type.' },
      }),
    }),
    retrieveFilteredPage(deps, listCustomers, (query) => ({ type: query.type }), presentCustomer),
  );
}

function getCustomerRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(app, deps, '/v1/customers/:id', getCustomer, presentCustomer, {
    scope: 'read',
    operationId: 'getCustomer',
    summary: 'Retrieve a customer',
    tags: TAGS,
    params: customerParams,
    responses: { 200: found('Customer', 'The customer.') },
  });
}

function updateCustomerRoute(app: FastifyInstance, deps: Deps): void {
  app.patch<{ Params: { id: string }; Body: CustomerChange }>(
    '/v1/customers/:id',
    writeOperation({
      scope: 'write',
      operationId: 'updateCustomer',
      summary: 'Update a customer',
      description:
        'Changes the fields given: `name`, `email`, `phone`, `address` (`null` clears the last three) and `metadata` (replaced whole); `type` never changes. Changing a fact a verification checked (an individual’s name, phone or address; a business’s name) on a `verified` customer drops it to `unverified` (tier 0) until a new verification passes; while a verification is `pending` those facts cannot change (409 `invalid_state_transition`, naming the field). Email and metadata change freely. Recorded as evidence (`customer.update`: who, each changed field’s old and new value, as SHA-256 digests for all but the name); emits `customer.updated`. Sending the values it has changes nothing and emits nothing.',
      tags: TAGS,
      params: customerParams,
      body: customerUpdateBodySchema,
      responses: { 200: written('Customer', 'The customer.') },
    }),
    idempotentWrite(deps, 200, changeById(deps, updateCustomer, presentCustomer)),
  );
}

export function customerRoutes(app: FastifyInstance, deps: Deps): void {
  createCustomerRoute(app, deps);
  listCustomersRoute(app, deps);
  getCustomerRoute(app, deps);
  updateCustomerRoute(app, deps);
  subjectEvidenceRoute(app, deps, {
    subject: 'customer',
    path: '/v1/customers/:id/evidence',
    prefix: ID_PREFIXES.customer,
    operationId: 'listCustomerEvidence',
    requireSubject: getCustomer,
  });
}
