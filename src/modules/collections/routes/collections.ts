/** Collections: asking a payer to pay into a wallet (mobile-money request-to-pay). */

import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { PHONE_PATTERN } from '../../../domain/contactDetails.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { formatAmount } from '../../../domain/money.ts';
import { MOBILE_NETWORKS } from '../../../domain/transfers.ts';
import { isoOrNull } from '../../../http/presenters.ts';
import {
  enumFilter,
  foundById,
  listAndRetrieveRoutes,
  pagedList,
  statusAndWalletOf,
} from '../../../http/readRoutes.ts';
import { createFromRequest } from '../../../http/routeEffects.ts';
import { accessByScope, idempotentWrite, writeOperation, written } from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  amountInputSchema,
  decimalStringSchema,
  idParamsSchema,
  idSchema,
  metadataSchema,
  nullableStringSchema,
  nullableTimestampSchema,
  timestampSchema,
} from '../../../http/schemas.ts';
import {
  COLLECTION_DESCRIPTION_LENGTH_MAX,
  COLLECTION_EXPIRY_MS,
  COLLECTION_METHODS,
  COLLECTION_REFERENCE_LENGTH_MAX,
  COLLECTION_STATUSES,
  type Collection,
  type CollectionStatus,
} from '../domain.ts';
import {
  type CreateCollectionInput,
  createCollection,
  getCollection,
  listOrganizationCollections,
} from '../useCases.ts';

const TAGS = ['Collections'];
const ACCESS = accessByScope(TAGS);

export const collectionSchema = apiObjectSchema(
  'Collection',
  'collection',
  `Money asked of a payer into a wallet: \`pending\` (created) → \`processing\` (the payer was asked) → \`succeeded\` (the wallet is credited by the inbound \`transfer\`) or \`failed\` (\`failure_code\`; \`collection_expired\` when the payer did not answer within ${COLLECTION_EXPIRY_MS / 60_000} minutes).`,
  {
    id: idSchema(ID_PREFIXES.collection, 'Collection id.'),
    wallet: idSchema(ID_PREFIXES.wallet, 'The wallet credited.'),
    amount: decimalStringSchema('Decimal string in major units.'),
    currency: { type: 'string' },
    method: {
      type: 'string',
      enum: COLLECTION_METHODS,
      description:
        '`mobile_money` (a request-to-pay), `bank_deposit` (a bank transfer the bank reported), `sandbox` (the sandbox’s fund route).',
    },
    rail: { type: 'string', enum: ['mobile_money', 'bank'] },
    payer: {
      description:
        'Who pays: a mobile-money payer asked to approve (`mobile_money`), or a bank transfer the bank reported (`bank_transfer`, with the bank’s reference for it).',
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['type', 'phone', 'network'],
          properties: {
            type: { type: 'string', enum: ['mobile_money'] },
            phone: { type: 'string' },
            network: { type: 'string', enum: MOBILE_NETWORKS },
          },
        },
        {
          type: 'object',
          required: ['type', 'name', 'bank_reference'],
          properties: {
            type: { type: 'string', enum: ['bank_transfer'] },
            name: { type: ['string', 'null'] },
            bank_reference: { type: 'string' },
          },
        },
      ],
    },
    reference: { type: 'string' },
    description: { type: 'string' },
    status: { type: 'string', enum: COLLECTION_STATUSES },
    failure_code: { type: ['string', 'null'] },
    transfer: nullableStringSchema('The inbound transfer that credited the wallet, once succeeded.'),
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    created_at: timestampSchema,
    updated_at: timestampSchema,
    expires_at: timestampSchema,
    succeeded_at: nullableTimestampSchema,
    failed_at: nullableTimestampSchema,
  },
);

export function presentCollection(c: Collection) {
  return {
    object: 'collection',
    id: c.id,
    wallet: c.walletId,
    amount: formatAmount(c.amountMinor, c.currency),
    currency: c.currency,
    rail: c.rail,
    method: c.method,
    payer:
      c.method === 'bank_deposit'
        ? { type: 'bank_transfer', name: c.payerName, bank_reference: c.bankReference }
        : c.method === 'sandbox'
          ? null
          : { type: 'mobile_money', phone: c.payerPhone, network: c.network },
    reference: c.reference,
    description: c.description,
    status: c.status,
    failure_code: c.failureCode,
    transfer: c.transferId,
    metadata: c.metadata,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
    expires_at: c.expiresAt.toISOString(),
    succeeded_at: isoOrNull(c.succeededAt),
    failed_at: isoOrNull(c.failedAt),
  };
}

// Written out rather than with closedObjectSchema: openapi.json lists these keys in this order.
const collectionCreateBody = {
  type: 'object',
  required: ['wallet', 'amount', 'payer'],
  additionalProperties: false,
  properties: {
    wallet: idSchema(ID_PREFIXES.wallet, 'The wallet to credit.'),
    amount: amountInputSchema('Decimal string in major units (a JSON number is read exactly).'),
    currency: { type: 'string', description: 'Must be the wallet’s when given.' },
    payer: {
      type: 'object',
      required: ['type', 'phone', 'network'],
      additionalProperties: false,
      properties: {
        type: { type: 'string', enum: ['mobile_money'] },
        phone: { type: 'string', pattern: PHONE_PATTERN, description: 'E.164, e.g. +254712345678.' },
        network: { type: 'string', enum: MOBILE_NETWORKS },
      },
    },
    reference: {
      type: 'string',
      minLength: 1,
      maxLength: COLLECTION_REFERENCE_LENGTH_MAX,
      description: 'Shown to the payer where the partner allows (its id by default).',
    },
    description: { type: 'string', minLength: 1, maxLength: COLLECTION_DESCRIPTION_LENGTH_MAX },
    metadata: metadataSchema,
  },
} as const;

function createCollectionRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: CreateCollectionInput }>(
    '/v1/collections',
    writeOperation({
      ...ACCESS.write,
      operationId: 'createCollection',
      summary: 'Collect from a payer',
      description:
        'Asks a payer to pay into a wallet: a mobile-money request-to-pay, which the payer approves on their phone. Nothing is posted until the rail confirms; then the wallet is credited by an inbound transfer (`collection.succeeded`). The payer is asked through the organization’s rail partner for the network (in the sandbox, by a simulation with the sandbox’s magic numbers when none is configured). A closed wallet is a 409.',
      body: collectionCreateBody,
      responses: { 201: written('Collection', 'The collection.') },
    }),
    idempotentWrite(
      deps,
      201,
      createFromRequest(deps, ({ body }) => body, createCollection, presentCollection),
    ),
  );
}

function collectionsReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/collections',
    access: ACCESS.read,
    present: presentCollection,
    list: {
      operationId: 'listCollections',
      summary: 'List collections',
      description: 'Newest first.',
      ...pagedList('Collection', 'A page of collections.', ID_PREFIXES.collection, {
        status: enumFilter(COLLECTION_STATUSES, 'Only collections in this status.'),
        wallet: idSchema(ID_PREFIXES.wallet, 'Only collections into this wallet.'),
      }),
    },
    page: listOrganizationCollections,
    filtersOf: statusAndWalletOf<CollectionStatus>,
    retrieve: {
      operationId: 'getCollection',
      summary: 'Retrieve a collection',
      ...foundById(idParamsSchema(ID_PREFIXES.collection, 'Collection id.'), 'Collection', 'The collection.'),
    },
    get: getCollection,
  });
}

export const collectionRoutes = routesInOrder(createCollectionRoute, collectionsReadRoutes);
