/**
 * JSON Schemas of the wire format. Request schemas are inline (validated by our own Ajv instances);
 * response schemas are shared by $id, so the OpenAPI document names them as components.
 */
import {
  CUSTOMER_NAME_LENGTH_MAX,
  CUSTOMER_TYPES,
  EMAIL_LENGTH_MAX,
  KYC_STATUSES,
  PHONE_PATTERN,
} from '../domain/customers.ts';
import { IDEMPOTENCY_KEY_PATTERN } from '../domain/idempotency.ts';
import { ID_PREFIXES, type IdPrefix, idPattern } from '../domain/ids.ts';
import { METADATA_KEY_LENGTH_MAX, METADATA_KEYS_MAX, METADATA_VALUE_LENGTH_MAX } from '../domain/metadata.ts';
import { SUPPORTED_CURRENCIES } from '../domain/money.ts';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../domain/pagination.ts';
import { WALLET_STATUSES } from '../domain/wallets.ts';

export function idSchema(prefix: IdPrefix, description: string) {
  return {
    type: 'string',
    pattern: idPattern(prefix),
    description,
    examples: [`${prefix}_01jcz3m5e7x8y9a0b1c2d3e4f5`],
  };
}

export const metadataSchema = {
  type: 'object',
  description: `Your own key/value pairs: at most ${METADATA_KEYS_MAX} keys of up to ${METADATA_KEY_LENGTH_MAX} characters, string values of up to ${METADATA_VALUE_LENGTH_MAX}.`,
  maxProperties: METADATA_KEYS_MAX,
  propertyNames: { minLength: 1, maxLength: METADATA_KEY_LENGTH_MAX },
  additionalProperties: { type: 'string', maxLength: METADATA_VALUE_LENGTH_MAX },
} as const;

export const currencySchema = {
  type: 'string',
  enum: SUPPORTED_CURRENCIES,
  description: 'ISO 4217 code (or USDC/USDT); amounts use its exact number of decimals.',
} as const;

export const timestampSchema = { type: 'string', format: 'date-time' } as const;

/**
 * Header names are in lower case, as Node delivers them and as our validator compiler sees them (Fastify
 * lower-cases header schemas only for its default compiler). The document spells them canonically.
 */
export const idempotencyHeadersSchema = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      pattern: IDEMPOTENCY_KEY_PATTERN,
      description:
        'A unique key (1-255 printable ASCII characters) that makes this request safe to retry: a retry with the same key and body returns the original result with `Idempotent-Replayed: true`.',
    },
  },
} as const;

/** Headers of the success response of an idempotent POST. */
export const idempotentWriteHeaders = {
  'Idempotent-Replayed': {
    type: 'string',
    enum: ['true'],
    description:
      'Sent, as `true`, when this response is the stored result of an earlier request with the same `Idempotency-Key`.',
  },
} as const;

export function listQuerySchema(prefix: IdPrefix, extra: Record<string, unknown> = {}) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: PAGE_SIZE_MAX,
        default: PAGE_SIZE_DEFAULT,
        description: `How many objects to return: 1 to ${PAGE_SIZE_MAX}, ${PAGE_SIZE_DEFAULT} by default.`,
      },
      starting_after: {
        ...idSchema(
          prefix,
          'A cursor: the `next_cursor` of the previous page. Results continue after this id.',
        ),
      },
      'created[gte]': { ...timestampSchema, description: 'Only objects created at or after this time.' },
      'created[lte]': { ...timestampSchema, description: 'Only objects created at or before this time.' },
      ...extra,
    },
  };
}

export function listEnvelopeSchema(itemRef: string, description: string) {
  return {
    description,
    type: 'object',
    required: ['object', 'data', 'has_more', 'next_cursor'],
    properties: {
      object: { type: 'string', enum: ['list'] },
      data: { type: 'array', items: { $ref: `${itemRef}#` } },
      has_more: { type: 'boolean' },
      next_cursor: {
        type: ['string', 'null'],
        description: 'Pass as `starting_after` to get the next page.',
      },
    },
  };
}

export const problemSchema = {
  $id: 'Problem',
  type: 'object',
  description: 'An RFC 9457 problem detail, with a stable `code` and the offending `param`.',
  required: ['type', 'title', 'status', 'detail', 'code', 'errors', 'request_id'],
  properties: {
    type: { type: 'string', description: 'A URI naming the problem type: `urn:mkoba:error:<code>`.' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', description: 'Stable snake_case error code.' },
    param: { type: 'string', description: 'The request field at fault, when there is one.' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['param', 'code', 'message'],
        properties: { param: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
      },
    },
    request_id: { type: 'string' },
  },
} as const;

const balanceProperties = {
  available: {
    type: 'string',
    description: 'What may be spent now: current minus pending.',
    examples: ['1500.00'],
  },
  pending: {
    type: 'string',
    description: 'Held for outgoing transfers not yet settled.',
    examples: ['0.00'],
  },
  current: { type: 'string', description: 'Posted balance.', examples: ['1500.00'] },
} as const;

export const walletSchema = {
  $id: 'Wallet',
  type: 'object',
  description: 'A wallet holds money of one currency for one customer.',
  required: [
    'id',
    'object',
    'owner',
    'currency',
    'status',
    'balance',
    'metadata',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: idSchema(ID_PREFIXES.wallet, 'Wallet id.'),
    object: { type: 'string', enum: ['wallet'] },
    owner: idSchema(ID_PREFIXES.customer, 'The owning customer.'),
    currency: currencySchema,
    status: { type: 'string', enum: WALLET_STATUSES },
    balance: {
      type: 'object',
      required: ['available', 'pending', 'current'],
      properties: balanceProperties,
    },
    metadata: metadataSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const;

export const balanceSchema = {
  $id: 'Balance',
  type: 'object',
  description: "A wallet's balances, as decimal strings at the currency's exponent.",
  required: ['object', 'wallet', 'currency', 'available', 'pending', 'current'],
  properties: {
    object: { type: 'string', enum: ['balance'] },
    wallet: idSchema(ID_PREFIXES.wallet, 'Wallet id.'),
    currency: currencySchema,
    ...balanceProperties,
  },
} as const;

export const customerSchema = {
  $id: 'Customer',
  type: 'object',
  description: 'A person or business that owns wallets.',
  required: [
    'id',
    'object',
    'type',
    'name',
    'email',
    'phone',
    'kyc_status',
    'metadata',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: idSchema(ID_PREFIXES.customer, 'Customer id.'),
    object: { type: 'string', enum: ['customer'] },
    type: { type: 'string', enum: CUSTOMER_TYPES },
    name: { type: 'string' },
    email: { type: ['string', 'null'] },
    phone: { type: ['string', 'null'] },
    kyc_status: { type: 'string', enum: KYC_STATUSES },
    metadata: metadataSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const;

export const customerCreateBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'name'],
  properties: {
    type: { type: 'string', enum: CUSTOMER_TYPES },
    name: { type: 'string', minLength: 1, maxLength: CUSTOMER_NAME_LENGTH_MAX },
    email: { type: 'string', format: 'email', maxLength: EMAIL_LENGTH_MAX },
    phone: {
      type: 'string',
      pattern: PHONE_PATTERN,
      description: 'International (E.164) format, e.g. +254712345678.',
    },
    metadata: metadataSchema,
  },
} as const;

export const walletCreateBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['owner', 'currency'],
  properties: {
    owner: idSchema(
      ID_PREFIXES.customer,
      'The customer who owns the wallet: a customer of your organization.',
    ),
    currency: currencySchema,
    metadata: metadataSchema,
  },
} as const;

export const SHARED_SCHEMAS = [problemSchema, walletSchema, balanceSchema, customerSchema];
