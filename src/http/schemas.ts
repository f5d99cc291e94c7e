/**
 * The JSON Schema pieces every part of the wire format shares: ids, amounts, currencies, timestamps,
 * metadata, idempotency headers, list queries and envelopes, the problem detail, the fee schedule decision
 * that transfers, quotes and conversions carry, and the marks that tie a schema to a named component of the
 * OpenAPI document. Request schemas are inline (validated by our own Ajv instances); response schemas are
 * shared by $id, so the OpenAPI document names them as components. Each resource family's schemas are in
 * a sibling `<family>Schemas.ts` (sharedSchemas.ts lists the core resources' components).
 */

import { EMAIL_CHARS_MAX } from '../domain/contactDetails.ts';
import { PILOT_CAPS } from '../domain/decisions/pilotCaps.ts';
import { DIGITAL_ASSET_NETWORKS, DIGITAL_ASSETS } from '../domain/digitalAssets.ts';
import { IDEMPOTENCY_KEY_PATTERN } from '../domain/idempotency.ts';
import { type IdPrefix, idPattern } from '../domain/ids.ts';
import { METADATA_KEY_LENGTH_MAX, METADATA_KEYS_MAX, METADATA_VALUE_LENGTH_MAX } from '../domain/metadata.ts';
import { SUPPORTED_CURRENCIES } from '../domain/money.ts';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../domain/pagination.ts';
import { RAILS } from '../domain/transfers.ts';

/** An id with this prefix (or any of these prefixes). */
export function idSchema(prefix: IdPrefix | readonly IdPrefix[], description: string) {
  const example = typeof prefix === 'string' ? prefix : prefix[0];
  return {
    type: 'string',
    pattern: idPattern(prefix),
    description,
    examples: [`${example}_01jcz3m5e7x8y9a0b1c2d3e4f5`],
  };
}

/** An id with this prefix, or null where there is none. */
export function nullableIdSchema(prefix: IdPrefix, description: string) {
  return { ...idSchema(prefix, description), type: ['string', 'null'] };
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

/** A rail transfers move on (`bank`, `mobile_money`, …). */
export const transferRailSchema = { type: 'string', enum: RAILS } as const;

/** A currency's code alone, where the object's words say whose it is (`currencySchema` says it itself). */
export const currencyCodeSchema = { type: 'string', enum: SUPPORTED_CURRENCIES } as const;

/** A stablecoin (`USDC`, `USDT`), and a network it moves on. */
export const digitalAssetSchema = { type: 'string', enum: DIGITAL_ASSETS } as const;
export const digitalAssetNetworkSchema = { type: 'string', enum: DIGITAL_ASSET_NETWORKS } as const;

export const timestampSchema = { type: 'string', format: 'date-time' } as const;
export const nullableTimestampSchema = { type: ['string', 'null'], format: 'date-time' } as const;

/** A string that is null where it has no value, with what it holds in words. */
export function nullableStringSchema(description: string) {
  return { type: ['string', 'null'], description } as const;
}

/** A decimal string in major units at the currency's exponent, e.g. "1500.00" (KES) or "1500" (UGX). */
export function amountSchema(description: string, example = '1500.00') {
  return { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$', description, examples: [example] };
}

/**
 * An amount as a decimal string, documented by its words alone (no pattern, no example): an answer's money
 * whose currency or asset its words name.
 */
export function decimalStringSchema(description: string) {
  return { type: 'string', description } as const;
}

/** An amount that may be negative (a signed net, a balance, a movement out), as `amountSchema` otherwise. */
export function signedAmountSchema(description: string, example: string) {
  return { type: 'string', pattern: '^-?[0-9]+(\\.[0-9]+)?$', description, examples: [example] } as const;
}

/** A calendar day, `YYYY-MM-DD`. */
export function daySchema(description: string) {
  return { type: 'string', format: 'date', description } as const;
}

/** A calendar day, or null where there is none. */
export function nullableDaySchema(description: string) {
  return { type: ['string', 'null'], format: 'date', description } as const;
}

/**
 * An amount as a request gives it: a decimal string in major units, or a JSON number, whose exact source
 * text the route reads (`numberSourceOf`), never a float.
 */
export function amountInputSchema(description?: string) {
  return {
    type: ['string', 'number'],
    ...(description === undefined ? {} : { description }),
  } as const;
}

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

export const CONSISTENCY_TOKEN_HEADER = 'Consistency-Token';
/** A PostgreSQL WAL position as text (`16/B374D848`), the form of a consistency token. */
const CONSISTENCY_TOKEN_PATTERN = '^[0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8}$';

/** The request header of a list, in lower case as the validator sees it (the document spells it canonically). */
export const consistencyTokenRequestHeader = {
  'consistency-token': {
    type: 'string',
    pattern: CONSISTENCY_TOKEN_PATTERN,
    description:
      'Read your writes: the `Consistency-Token` of a write this client made. Where the service reads lists from a replica, this list waits (bounded) for the replica to have that write, or is answered from the primary. Without it a list may be a moment behind the newest writes.',
  },
} as const;

/** The header every successful write answers with (src/http/replicaReads.ts). */
export const consistencyTokenResponseHeader = {
  [CONSISTENCY_TOKEN_HEADER]: {
    type: 'string',
    description:
      'Where the service reads lists from a replica: the database position after this write. Send it as the `Consistency-Token` request header on a list to see this write in it.',
  },
} as const;

/** Headers of the success response of an idempotent POST. */
export const idempotentWriteHeaders = {
  ...consistencyTokenResponseHeader,
  'Idempotent-Replayed': {
    type: 'string',
    enum: ['true'],
    description:
      'Sent, as `true`, when this response is the stored result of an earlier request with the same `Idempotency-Key`.',
  },
} as const;

/** The `limit` of a page: how many of `noun` (objects, versions, days…) one page holds. */
export function pageLimitSchema(noun?: string) {
  return {
    type: 'integer',
    minimum: 1,
    maximum: PAGE_SIZE_MAX,
    default: PAGE_SIZE_DEFAULT,
    description: `How many ${noun === undefined ? '' : `${noun} `}to return: 1 to ${PAGE_SIZE_MAX}, ${PAGE_SIZE_DEFAULT} by default.`,
  };
}

/**
 * The query string of a list: page size, cursor, created range and the resource's own filters. The
 * cursor is an id of the listed objects (of any of the prefixes, for lists of mixed objects).
 */
export function listQuerySchema(prefix: IdPrefix | readonly IdPrefix[], extra: Record<string, unknown> = {}) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: pageLimitSchema('objects'),
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
      next_cursor: nullableStringSchema('Pass as `starting_after` to get the next page.'),
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
        properties: {
          param: { type: 'string' },
          code: { type: 'string' },
          message: { type: 'string' },
          row: { type: 'integer', description: 'For an item of a payment batch: its 1-based row.' },
        },
      },
    },
    limit: {
      type: 'string',
      description: 'With `limit_exceeded` from a tier limit: `single`, `daily_sum` or `monthly_sum`.',
    },
    remaining: {
      type: 'string',
      description:
        'With `limit_exceeded` from a tier limit: what may still be sent under it (decimal string). With `pilot_cap_exceeded`: what the day still allows under the cap: transfers for `daily_transfer_count`, a decimal amount for `daily_amount`.',
    },
    cap: {
      type: 'string',
      enum: PILOT_CAPS,
      description: 'With `pilot_cap_exceeded`: the pilot cap the transfer would pass.',
    },
    rule: { type: 'string', description: 'With `policy_denied`: the policy rule that denied.' },
    policy_version: {
      type: 'string',
      description: 'With `policy_denied`: the policy version whose rule denied.',
    },
    product: {
      type: 'string',
      description:
        'With `product_not_enabled`: the product family (`mobile_money`, `digital_banking`, `stablecoins`) the organization has not enabled.',
    },
    request_id: { type: 'string' },
  },
} as const;

/**
 * The key that marks a schema documented as a named component of the OpenAPI document instead of as
 * written: validation and serialisation read the schema; the document shows the component (openapi.ts).
 */
export const DOCUMENTED_AS = 'x-documented-as';

/** The fee schedule version and rule that decided a fee (GET /v1/fee-schedule/versions/{version} shows it). */
export function feeScheduleDecisionSchema(description: string, nullable: boolean) {
  return {
    type: nullable ? ['object', 'null'] : 'object',
    description,
    required: ['version', 'rule'],
    additionalProperties: false,
    properties: {
      version: { type: 'integer', minimum: 1, description: 'The fee schedule version.' },
      rule: nullableStringSchema('The rule’s `id`, or null when no rule applied.'),
    },
  } as const;
}

/** A reference to a named component of the OpenAPI document. */
export const componentRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Path parameters of a route addressing one resource by its `id`. */
export function idParamsSchema(prefix: IdPrefix | readonly IdPrefix[], description: string) {
  return { type: 'object', required: ['id'], properties: { id: idSchema(prefix, description) } } as const;
}

/** A person's email as a request gives it (a member's, an organization's contact), with an example. */
export function emailSchema(example: string) {
  return { type: 'string', minLength: 3, maxLength: EMAIL_CHARS_MAX, examples: [example] } as const;
}

/** A wallet's three balances, as the wallet, its balance and its ledger account show them. */
export const balanceProperties = {
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

/** What a callback (a rail partner's, a verification provider's) is answered: its body was stored, with its status. */
const callbackReceiptSchema = {
  type: 'object',
  required: ['received', 'id', 'status'],
  properties: {
    received: { type: 'boolean', enum: [true] },
    id: { type: 'string' },
    status: { type: 'string' },
  },
} as const;

/** The success response of a callback route: the body stored as sent, and applied where it could be. */
export const callbackStoredResponses = {
  200: { description: 'Stored (and applied where it could be).', ...callbackReceiptSchema },
};
