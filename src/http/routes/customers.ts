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
import { BEARER_SECURITY, principalOf, requestActor } from '../auth.ts';
import { type ListQuery, pageRequestOf, presentCustomer, presentList } from '../presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../problems.ts';
import {
  customerCreateBodySchema,
  customerUpdateBodySchema,
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  listEnvelopeSchema,
  listQuerySchema,
} from '../schemas.ts';
import { sendWrite } from '../writes.ts';

const TAGS = ['Customers'];

export function customerRoutes(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: CreateCustomerInput }>(
    '/v1/customers',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'createCustomer',
        summary: 'Create a customer',
        description: 'Creates an individual or business customer. KYC starts `unverified`.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: customerCreateBodySchema,
        response: {
          201: { description: 'The customer.', headers: idempotentWriteHeaders, $ref: 'Customer#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 201,
        body: presentCustomer(await createCustomer(tx, deps, organizationId, request.body)),
      })),
  );

  app.get<{ Querystring: ListQuery & { type?: CustomerType } }>(
    '/v1/customers',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listCustomers',
        summary: 'List customers',
        description: 'Newest first, with cursor pagination.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.customer, {
          type: { type: 'string', enum: CUSTOMER_TYPES, description: 'Only customers of this type.' },
        }),
        response: {
          200: listEnvelopeSchema('Customer', 'A page of customers.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const page = await listCustomers(deps, principalOf(request).organizationId, {
        ...pageRequestOf(request.query),
        type: request.query.type,
      });
      return presentList(page, presentCustomer);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/customers/:id',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getCustomer',
        summary: 'Retrieve a customer',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: idParamsSchema(ID_PREFIXES.customer, 'Customer id.'),
        response: {
          200: { description: 'The customer.', $ref: 'Customer#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentCustomer(await getCustomer(deps, principalOf(request).organizationId, request.params.id)),
  );

  app.patch<{ Params: { id: string }; Body: CustomerChange }>(
    '/v1/customers/:id',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'updateCustomer',
        summary: 'Update a customer',
        description:
          'Changes the fields given: `name`, `email`, `phone`, `address` (`null` clears the last three) and `metadata` (replaced whole); `type` never changes. Changing a fact a verification checked (an individual’s name, phone or address; a business’s name) on a `verified` customer drops it to `unverified` (tier 0) until a new verification passes; while a verification is `pending` those facts cannot change (409 `invalid_state_transition`, naming the field). Email and metadata change freely. Recorded as evidence (`customer.update`: who, each changed field’s old and new value, as SHA-256 digests for all but the name); emits `customer.updated`. Sending the values it has changes nothing and emits nothing.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: idParamsSchema(ID_PREFIXES.customer, 'Customer id.'),
        body: customerUpdateBodySchema,
        response: {
          200: { description: 'The customer.', headers: idempotentWriteHeaders, $ref: 'Customer#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentCustomer(
          await updateCustomer(
            tx,
            deps,
            organizationId,
            request.params.id,
            request.body,
            requestActor(request),
          ),
        ),
      })),
  );
}
