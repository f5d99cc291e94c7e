/** Customers: created, listed and read, and changed (with what a change does to a verification). */

import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { CUSTOMER_TYPES, type CustomerType } from '../../../domain/customers.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { enumFilter, foundById, listAndRetrieveRoutes, pagedList } from '../../../http/readRoutes.ts';
import { changeById, makeFromBody } from '../../../http/routeEffects.ts';
import { accessByScope, written } from '../../../http/routeKit.ts';
import { subjectEvidenceRoute } from '../../../http/routes/evidence.ts';
import { idParamsSchema } from '../../../http/schemas.ts';
import { writeRoute, writtenById } from '../../../http/writeRoutes.ts';
import {
  type CreateCustomerInput,
  type CustomerChange,
  createCustomer,
  getCustomer,
  listCustomers,
  updateCustomer,
} from '../useCases/customers.ts';
import { presentCustomer } from './presenters.ts';
import { customerCreateBodySchema, customerUpdateBodySchema } from './schemas.ts';

const ACCESS = accessByScope(['Customers']);
const customerParams = idParamsSchema(ID_PREFIXES.customer, 'Customer id.');

function createCustomerRoute(app: FastifyInstance, deps: Deps): void {
  writeRoute<{ Body: CreateCustomerInput }>(
    app,
    deps,
    'POST',
    '/v1/customers',
    201,
    makeFromBody(deps, createCustomer, presentCustomer),
    {
      ...ACCESS.write,
      operationId: 'createCustomer',
      summary: 'Create a customer',
      description: 'Creates an individual or business customer. KYC starts `unverified`.',
      body: customerCreateBodySchema,
      responses: { 201: written('Customer', 'The customer.') },
    },
  );
}

function customerReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/customers',
    access: ACCESS.read,
    present: presentCustomer,
    list: {
      operationId: 'listCustomers',
      summary: 'List customers',
      description: 'Newest first, with cursor pagination.',
      ...pagedList('Customer', 'A page of customers.', ID_PREFIXES.customer, {
        type: enumFilter(CUSTOMER_TYPES, 'Only customers of this type.'),
      }),
    },
    page: listCustomers,
    filtersOf: (query: { type?: CustomerType }) => ({ type: query.type }),
    retrieve: {
      operationId: 'getCustomer',
      summary: 'Retrieve a customer',
      ...foundById(customerParams, 'Customer', 'The customer.'),
    },
    get: getCustomer,
  });
}

function updateCustomerRoute(app: FastifyInstance, deps: Deps): void {
  writeRoute<{ Params: { id: string }; Body: CustomerChange }>(
    app,
    deps,
    'PATCH',
    '/v1/customers/:id',
    200,
    changeById(deps, updateCustomer, presentCustomer),
    {
      ...ACCESS.write,
      operationId: 'updateCustomer',
      summary: 'Update a customer',
      description:
        'Changes the fields given: `name`, `email`, `phone`, `address` (`null` clears the last three) and `metadata` (replaced whole); `type` never changes. Changing a fact a verification checked (an individual’s name, phone or address; a business’s name) on a `verified` customer drops it to `unverified` (tier 0) until a new verification passes; while a verification is `pending` those facts cannot change (409 `invalid_state_transition`, naming the field). Email and metadata change freely. Recorded as evidence (`customer.update`: who, each changed field’s old and new value, as SHA-256 digests for all but the name); emits `customer.updated`. Sending the values it has changes nothing and emits nothing.',
      body: customerUpdateBodySchema,
      ...writtenById(customerParams, 'Customer', 'The customer.'),
    },
  );
}

export function customerRoutes(app: FastifyInstance, deps: Deps): void {
  createCustomerRoute(app, deps);
  customerReadRoutes(app, deps);
  updateCustomerRoute(app, deps);
  subjectEvidenceRoute(app, deps, {
    subject: 'customer',
    path: '/v1/customers/:id/evidence',
    prefix: ID_PREFIXES.customer,
    operationId: 'listCustomerEvidence',
    requireSubject: getCustomer,
  });
}
