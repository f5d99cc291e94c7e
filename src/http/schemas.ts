/**
 * JSON Schemas of the wire format. Request schemas are inline (validated by our own Ajv instances);
 * response schemas are shared by $id, so the OpenAPI document names them as components.
 */

import { ENVIRONMENTS } from '../domain/apiKeys.ts';
import {
  CUSTOMER_NAME_LENGTH_MAX,
  CUSTOMER_TYPES,
  EMAIL_LENGTH_MAX,
  KYC_STATUSES,
  PHONE_PATTERN,
} from '../domain/customers.ts';
import { TIERS } from '../domain/decisions/limits.ts';
import { PILOT_CAPS } from '../domain/decisions/pilotCaps.ts';
import {
  ADDRESS_FORMATS,
  DIGITAL_ASSET_NETWORK_FAMILIES,
  DIGITAL_ASSET_NETWORKS,
  DIGITAL_ASSETS,
} from '../domain/digitalAssets.ts';
import { EVENT_TYPES } from '../domain/events.ts';
import { IDEMPOTENCY_KEY_PATTERN } from '../domain/idempotency.ts';
import { ID_PREFIXES, type IdPrefix, idPattern } from '../domain/ids.ts';
import { METADATA_KEY_LENGTH_MAX, METADATA_KEYS_MAX, METADATA_VALUE_LENGTH_MAX } from '../domain/metadata.ts';
import { SUPPORTED_CURRENCIES } from '../domain/money.ts';
import { LAUNCH_PRODUCTS } from '../domain/organizationProfile.ts';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../domain/pagination.ts';
import { PAYLOAD_VERSIONS, PRODUCT_NAME_BEFORE_FAMILIES } from '../domain/payloadVersions.ts';
import { RISK_LEVELS } from '../domain/risk.ts';
import {
  DESTINATION_TYPES,
  type DestinationType,
  LEDGER_STATES,
  MOBILE_NETWORK_COUNTRY_CODES,
  MOBILE_NETWORKS,
  RAILS,
  TRANSFER_STATUSES,
} from '../domain/transfers.ts';
import { ADDRESS_LINE_LENGTH_MAX, COUNTRY_PATTERN, POSTAL_CODE_LENGTH_MAX } from '../domain/verifications.ts';
import { API_VERSION } from '../domain/version.ts';
import { WALLET_STATUS_REASONS, WALLET_STATUSES } from '../domain/wallets.ts';
import {
  ACCOUNT_KINDS,
  JOURNAL_ENTRY_KINDS,
  POSTING_PHASES,
  POSTING_SIDES,
} from '../modules/ledger/domain/ledger.ts';

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

export const timestampSchema = { type: 'string', format: 'date-time' } as const;
export const nullableTimestampSchema = { type: ['string', 'null'], format: 'date-time' } as const;

/** A decimal string in major units at the currency's exponent, e.g. "1500.00" (KES) or "1500" (UGX). */
export function amountSchema(description: string, example = '1500.00') {
  return { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$', description, examples: [example] };
}

/** An amount that may be negative: a signed net. */
function signedAmountSchema(description: string) {
  return { type: 'string', pattern: '^-?[0-9]+(\\.[0-9]+)?$', description, examples: ['-1500.00'] };
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

/** Headers of the success response of an idempotent POST. */
export const idempotentWriteHeaders = {
  'Idempotent-Replayed': {
    type: 'string',
    enum: ['true'],
    description:
      'Sent, as `true`, when this response is the stored result of an earlier request with the same `Idempotency-Key`.',
  },
} as const;

/**
 * The query string of a list: page size, cursor, created range and the resource's own filters. The
 * cursor is an id of the listed objects (of any of the prefixes, for lists of mixed objects).
 */
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

/** A wallet's account details, as the wallet embeds them and `POST /v1/wallets/{id}/account-details` answers. */
export const accountDetailsProperties = {
  account_number: {
    type: 'string',
    pattern: '^[1-9][0-9]{11}$',
    description:
      'What an outsider pays into: 12 digits, the last an ISO/IEC 7064 MOD 11-2 check digit, unique in the organization and under the bank code, never reused.',
    examples: ['482100365571'],
  },
  bank_code: {
    type: 'string',
    description:
      'The sponsor bank’s code the number was issued under (as a `bank_account` destination names it).',
    examples: ['01100'],
  },
  bank_name: { type: 'string', examples: ['Equity Bank Kenya'] },
  virtual_reference: {
    type: 'string',
    description:
      'The wallet’s virtual account reference (`MK`, 10 digits, 2 check digits), which bank collections quote; the same as `GET /v1/wallets/{id}/virtual-account`.',
  },
  created_at: timestampSchema,
} as const;
const ACCOUNT_DETAILS_REQUIRED = [
  'account_number',
  'bank_code',
  'bank_name',
  'virtual_reference',
  'created_at',
] as const;

export const accountDetailsSchema = {
  $id: 'AccountDetails',
  type: 'object',
  description: 'What outsiders pay a wallet by (a digital account): issued once, never changed.',
  required: ['object', 'wallet', ...ACCOUNT_DETAILS_REQUIRED],
  properties: {
    object: { type: 'string', enum: ['account_details'] },
    wallet: idSchema(ID_PREFIXES.wallet, 'Wallet id.'),
    ...accountDetailsProperties,
  },
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
    'status_reason',
    'status_changed_at',
    'balance',
    'account_details',
    'metadata',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: idSchema(ID_PREFIXES.wallet, 'Wallet id.'),
    object: { type: 'string', enum: ['wallet'] },
    owner: idSchema(ID_PREFIXES.customer, 'The owning customer.'),
    currency: currencySchema,
    status: {
      type: 'string',
      enum: WALLET_STATUSES,
      description:
        '`frozen` wallets neither send nor receive (a return is still credited); `closed` wallets are empty for good.',
    },
    status_reason: {
      type: ['string', 'null'],
      enum: [...WALLET_STATUS_REASONS, null],
      description: 'Why the status last changed (freeze, unfreeze or close); null while it never has.',
    },
    status_changed_at: { ...timestampSchema, type: ['string', 'null'] },
    balance: {
      type: 'object',
      required: ['available', 'pending', 'current'],
      properties: balanceProperties,
    },
    account_details: {
      type: ['object', 'null'],
      description:
        'Its digital account: what outsiders pay it by. Issued when the wallet is created once the organization has digital-account settings, or with `POST /v1/wallets/{id}/account-details`; null until then.',
      required: [...ACCOUNT_DETAILS_REQUIRED],
      properties: accountDetailsProperties,
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
    as_of: {
      ...timestampSchema,
      description:
        'Present when asked with `as_of`: the instant the balances are as of (entries created strictly before it count).',
    },
  },
} as const;

const addressLine = { type: 'string', minLength: 1, maxLength: ADDRESS_LINE_LENGTH_MAX } as const;

/** A postal address: a customer's, and an individual's in a verification. */
export const postalAddressSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['line1', 'city', 'country'],
  properties: {
    line1: addressLine,
    line2: addressLine,
    city: addressLine,
    region: addressLine,
    postal_code: { type: 'string', minLength: 1, maxLength: POSTAL_CODE_LENGTH_MAX },
    country: { type: 'string', pattern: COUNTRY_PATTERN, description: 'ISO 3166-1 alpha-2.' },
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
    'address',
    'kyc_status',
    'tier',
    'risk_level',
    'risk_level_overridden',
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
    address: { ...postalAddressSchema, type: ['object', 'null'] },
    kyc_status: {
      type: 'string',
      enum: KYC_STATUSES,
      description: 'Follows the customer’s latest verification (`POST /v1/customers/{id}/verifications`).',
    },
    tier: {
      type: 'integer',
      enum: TIERS,
      description:
        '0 until verified; 1 a verified individual, 2 a verified business. Sets the transfer limits.',
    },
    risk_level: {
      type: 'string',
      enum: RISK_LEVELS,
      description:
        'Derived from verification, a confirmed sanctions match and open AML alerts, unless overridden by an operator.',
    },
    risk_level_overridden: { type: 'boolean' },
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
    address: postalAddressSchema,
    metadata: metadataSchema,
  },
} as const;

export const customerUpdateBodySchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: customerCreateBodySchema.properties.name,
    email: { ...customerCreateBodySchema.properties.email, type: ['string', 'null'] },
    phone: { ...customerCreateBodySchema.properties.phone, type: ['string', 'null'] },
    address: { ...postalAddressSchema, type: ['object', 'null'] },
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

/**
 * The key that marks a schema documented as a named component of the OpenAPI document instead of as
 * written: validation and serialisation read the schema; the document shows the component (openapi.ts).
 */
export const DOCUMENTED_AS = 'x-documented-as';

/** A transfer destination as stored and returned: its `type` and that type's fields, all strings. */
export const transferDestinationSchema = {
  type: 'object',
  description: `Where the money goes: \`{type, …}\` with the fields of that destination type (${DESTINATION_TYPES.join(', ')}).`,
  required: ['type'],
  properties: { type: { type: 'string' } },
  additionalProperties: { type: 'string' },
  [DOCUMENTED_AS]: 'TransferDestination',
} as const;

const transferDirectionSchema = {
  type: 'string',
  enum: ['outbound', 'inbound'],
  description: '`outbound`: paid out of a wallet; `inbound`: collected into one.',
} as const;

/** The fee schedule version and rule that decided a fee (GET /v1/fee-schedule/versions/{version} shows it). */
export function feeScheduleDecisionSchema(description: string, nullable: boolean) {
  return {
    type: nullable ? ['object', 'null'] : 'object',
    description,
    required: ['version', 'rule'],
    additionalProperties: false,
    properties: {
      version: { type: 'integer', minimum: 1, description: 'The fee schedule version.' },
      rule: { type: ['string', 'null'], description: 'The rule’s `id`, or null when no rule applied.' },
    },
  } as const;
}

export const transferSchema = {
  $id: 'Transfer',
  type: 'object',
  description: 'A movement of money out of (or into) a wallet, with its status and ledger state.',
  required: [
    'id',
    'object',
    'direction',
    'source',
    'destination',
    'amount',
    'currency',
    'rail',
    'status',
    'status_reason',
    'failure_code',
    'ledger_state',
    'metadata',
    'created_at',
    'updated_at',
    'processing_at',
    'settled_at',
    'failed_at',
    'canceled_at',
    'returned_at',
    'created_by',
    'authorization',
    'approval',
    'rail_reference',
    'travel_rule',
    'fee',
    'fee_schedule',
  ],
  properties: {
    id: idSchema(ID_PREFIXES.transfer, 'Transfer id.'),
    object: { type: 'string', enum: ['transfer'] },
    direction: transferDirectionSchema,
    source: nullableIdSchema(ID_PREFIXES.wallet, 'The paying wallet; null for inbound collections.'),
    destination: transferDestinationSchema,
    amount: amountSchema('Decimal string at the currency exponent.'),
    fee: amountSchema(
      'The fee the sender pays on top of `amount`, at the currency exponent (`0.00` when none): the source wallet is debited amount + fee. See `fee_schedule`.',
      '15.00',
    ),
    currency: currencySchema,
    rail: { type: 'string', enum: RAILS },
    status: { type: 'string', enum: TRANSFER_STATUSES },
    status_reason: {
      type: ['string', 'null'],
      description: 'Why it is in this status, e.g. `rail_timeout` while processing.',
    },
    failure_code: {
      type: ['string', 'null'],
      description: 'Why it failed, e.g. `recipient_not_registered`.',
    },
    ledger_state: { type: 'string', enum: LEDGER_STATES },
    metadata: metadataSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
    processing_at: nullableTimestampSchema,
    settled_at: nullableTimestampSchema,
    failed_at: nullableTimestampSchema,
    canceled_at: nullableTimestampSchema,
    returned_at: nullableTimestampSchema,
    created_by: {
      type: ['string', 'null'],
      description:
        'Who created it: the member (`mem_…`) the API key acts for, else the API key (`key_…`); null for money that arrived from a rail.',
    },
    authorization: {
      type: ['object', 'null'],
      description:
        'The authorization policy’s decision: `allow`, or `require_approval` (the transfer waited `pending_approval`), with the policy version and the rule (`default` when no rule matched) that decided. Null for money that arrived from a rail and for transfers made before policies existed.',
      required: ['decision', 'policy_version', 'rule'],
      additionalProperties: false,
      properties: {
        decision: { type: 'string', enum: ['allow', 'require_approval'] },
        policy_version: { type: 'integer', minimum: 1 },
        rule: { type: 'string' },
      },
    },
    approval: nullableIdSchema(
      ID_PREFIXES.approval,
      'The approval it waits for (or waited for), if its policy asked for one.',
    ),
    rail_reference: {
      type: ['string', 'null'],
      description:
        'The rail’s own reference for the payout once it has one: on the `digital_asset` rail, the transaction hash (`0x` and 64 hexadecimal digits).',
    },
    travel_rule: {
      type: ['object', 'null'],
      description:
        'Whether the transfer carries Travel Rule data: the reference of the evidence record that holds it (operators read it with `GET /v1/transfers/{id}/travel-rule`), and whether its amount required it. Null when it carries none. The data itself is never shown here nor in events.',
      required: ['reference', 'required'],
      additionalProperties: false,
      properties: {
        reference: { type: 'string', description: 'The evidence record (`evd_…`) that holds the data.' },
        required: { type: 'boolean', description: 'True when the amount reached the threshold.' },
      },
    },
    fee_schedule: feeScheduleDecisionSchema(
      'Which fee schedule version and rule decided `fee` (`rule` null: the version has no rule for this rail and currency, so no fee). Null for money that arrived and for transfers made before fees existed.',
      true,
    ),
  },
} as const;

/** The longest value of one destination field (a phone number, an account number, a token). */
const DESTINATION_FIELD_LENGTH_MAX = 64;
/** `type` plus at most three fields (bank_account: bank_code, account_number, account_name). */
const DESTINATION_PROPERTIES_MAX = 4;

function destinationField(description: string, example: string, extra: Record<string, unknown> = {}) {
  return {
    type: 'string',
    maxLength: DESTINATION_FIELD_LENGTH_MAX,
    description,
    examples: [example],
    ...extra,
  };
}

/** One destination type's object, as the document describes it. */
function destinationVariant(
  type: DestinationType,
  description: string,
  fields: Record<string, object>,
  required: string[],
) {
  return {
    type: 'object',
    description,
    required: ['type', ...required],
    additionalProperties: false,
    properties: { type: { type: 'string', const: type }, ...fields },
  };
}

const accountText = (what: string) => `${what}: 1-34 letters, digits, spaces or dashes.`;

/**
 * Each destination type's fields, as src/app/transfers.ts checks them. The examples are accepted by the
 * sandbox (test/openapi.test.ts sends each one).
 */
const DESTINATION_VARIANTS: Record<DestinationType, { name: string; schema: object }> = {
  mobile_money: {
    name: 'MobileMoneyDestination',
    schema: destinationVariant(
      'mobile_money',
      'A mobile-money account (rail `mobile_money`).',
      {
        network: {
          type: 'string',
          enum: MOBILE_NETWORKS,
          description: `The network; the phone number must carry one of its country codes (${MOBILE_NETWORKS.map((n) => `${n}: ${MOBILE_NETWORK_COUNTRY_CODES[n].map((c) => `+${c}`).join(', ')}`).join('; ')}).`,
          examples: ['mpesa'],
        },
        phone: destinationField('International (E.164) format.', '+254700000000', { pattern: PHONE_PATTERN }),
        name: destinationField("Optional: the recipient's name.", 'Amina Wanjiru'),
      },
      ['network', 'phone'],
    ),
  },
  bank_account: {
    name: 'BankAccountDestination',
    schema: destinationVariant(
      'bank_account',
      'A bank account (rail `bank`).',
      {
        bank_code: destinationField('The bank: 2-11 letters or digits.', '01'),
        account_number: destinationField(accountText('The account number'), '0123456789'),
        account_name: destinationField("Optional: the account holder's name.", 'Amina Wanjiru'),
      },
      ['bank_code', 'account_number'],
    ),
  },
  paybill: {
    name: 'PaybillDestination',
    schema: destinationVariant(
      'paybill',
      'A business paybill (rail `paybill`).',
      {
        business_number: destinationField('The paybill number: 5-7 digits.', '888880'),
        account_reference: destinationField(accountText('The account at the business'), 'INV-1042'),
      },
      ['business_number', 'account_reference'],
    ),
  },
  till: {
    name: 'TillDestination',
    schema: destinationVariant(
      'till',
      'A merchant till (rail `till`).',
      { till_number: destinationField('The till number: 5-7 digits.', '123456') },
      ['till_number'],
    ),
  },
  card: {
    name: 'CardDestination',
    schema: destinationVariant(
      'card',
      'A card, by token (rail `card`). Card numbers are never accepted.',
      {
        token: destinationField(
          'A card token: `tok_` and 6-64 letters, digits or underscores.',
          'tok_sandbox_visa',
        ),
      },
      ['token'],
    ),
  },
  wallet: {
    name: 'WalletDestination',
    schema: destinationVariant(
      'wallet',
      'Another wallet of your organization, in the same currency (rail `internal`).',
      { wallet: idSchema(ID_PREFIXES.wallet, 'The receiving wallet.') },
      ['wallet'],
    ),
  },
  crypto_address: {
    name: 'CryptoAddressDestination',
    schema: destinationVariant(
      'crypto_address',
      'A stablecoin address on a named network (rail `digital_asset`), on a route the organization has approved (`GET /v1/digital-asset-routes`). At or above the Travel Rule threshold the transfer needs `travel_rule` data.',
      {
        asset: destinationField('The stablecoin: the transfer’s currency.', 'USDC', { enum: DIGITAL_ASSETS }),
        network: destinationField('The network.', 'ethereum', { enum: DIGITAL_ASSET_NETWORKS }),
        address: destinationField(
          `The receiving address, as its network writes it: ${DIGITAL_ASSET_NETWORKS.map((n) => `${n} ${ADDRESS_FORMATS[DIGITAL_ASSET_NETWORK_FAMILIES[n]].wording}`).join('; ')}.`,
          '0x52908400098527886e0f7030069857d2e4169ee7',
        ),
      },
      ['asset', 'network', 'address'],
    ),
  },
};

/** A reference to a named component of the OpenAPI document. */
export const componentRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * Schemas that exist only in the OpenAPI document, by component name: the destination as a `oneOf` told
 * apart by `type`, so generated clients get one type per destination. Validation keeps the flat schemas
 * above, which report the field at fault (a oneOf reports every branch that failed).
 */
export const DOCUMENT_ONLY_SCHEMAS: Record<string, object> = {
  ...Object.fromEntries(Object.values(DESTINATION_VARIANTS).map(({ name, schema }) => [name, schema])),
  TransferDestination: {
    description:
      'Where the money goes: an object whose `type` says which fields it has; the rail follows from the type.',
    oneOf: Object.values(DESTINATION_VARIANTS).map(({ name }) => componentRef(name)),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(
        DESTINATION_TYPES.map((type) => [type, componentRef(DESTINATION_VARIANTS[type].name).$ref]),
      ),
    },
  },
  TransferDestinationRequest: {
    description:
      'Form A: a destination object (its `type` decides the rail). Form B: a wallet id, for a transfer to another wallet of your organization on the `internal` rail.',
    oneOf: [
      componentRef('TransferDestination'),
      idSchema(ID_PREFIXES.wallet, 'Form B: the receiving wallet.'),
    ],
  },
};

/** A Travel Rule text field: its content rules (length, format) are checked with the rule, as a 422. */
function travelRuleField(description: string, example: string) {
  return { type: 'string', maxLength: TRAVEL_RULE_FIELD_LENGTH_MAX, description, examples: [example] };
}
/** Bounds a field's size in the body; content rules are stricter (src/domain/decisions/travelRule.ts). */
const TRAVEL_RULE_FIELD_LENGTH_MAX = 1_000;

export const travelRuleRequestSchema = {
  type: 'object',
  description:
    'Travel Rule data, for a `crypto_address` destination: required when the amount in USD reaches the threshold of the originating customer’s jurisdiction (1,000.00 by default; see `GET /v1/travel-rule/settings`), otherwise optional. Missing or malformed data, when required, is a 422 `travel_rule_required` that names every field at fault. Kept as evidence, never echoed.',
  additionalProperties: false,
  properties: {
    originator: {
      type: 'object',
      description:
        'Who sends: `name`, `account`, and at least one of `address`, `national_id` or `date_of_birth`.',
      additionalProperties: false,
      properties: {
        name: travelRuleField('Full name, at most 200 characters.', 'Amina Wanjiru'),
        account: travelRuleField(
          'The originator’s account: the paying wallet or an account number.',
          'wallet_01jcz3m5e7x8y9a0b1c2d3e4f5',
        ),
        address: travelRuleField('Postal address, at most 500 characters.', '12 Moi Avenue, Nairobi, KE'),
        national_id: travelRuleField('National identity number: 4-32 letters, digits or dashes.', 'A1234567'),
        date_of_birth: travelRuleField('YYYY-MM-DD.', '1990-04-12'),
      },
    },
    beneficiary: {
      type: 'object',
      description: 'Who receives: `name`; `account` defaults to the destination address.',
      additionalProperties: false,
      properties: {
        name: travelRuleField('Full name, at most 200 characters.', 'Juma Otieno'),
        account: travelRuleField(
          'The beneficiary’s account; the destination address when omitted.',
          '0x52908400098527886e0f7030069857d2e4169ee7',
        ),
        institution: travelRuleField(
          'The receiving institution (a VASP), when known.',
          'Example Exchange Ltd',
        ),
      },
    },
  },
} as const;

export const transferCreateBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['source', 'destination', 'amount', 'currency'],
  properties: {
    source: idSchema(ID_PREFIXES.wallet, 'The paying wallet.'),
    destination: {
      type: ['string', 'object'],
      description: `Form B: a wallet id (\`wallet_…\`, rail \`internal\`). Form A: an object with \`type\` (${DESTINATION_TYPES.join(', ')}) and its fields.`,
      maxLength: DESTINATION_FIELD_LENGTH_MAX,
      required: ['type'],
      properties: { type: { type: 'string', description: 'The destination kind, for form A.' } },
      maxProperties: DESTINATION_PROPERTIES_MAX,
      additionalProperties: { type: 'string', maxLength: DESTINATION_FIELD_LENGTH_MAX },
      [DOCUMENTED_AS]: 'TransferDestinationRequest',
    },
    amount: {
      type: ['string', 'number'],
      description:
        'A decimal string ("1500.00"); a JSON number is accepted only when exact at the currency exponent. Each rail takes amounts within its bounds for the currency.',
      examples: ['1500.00'],
    },
    currency: { ...currencySchema, description: 'Must be the source wallet currency.' },
    rail: {
      type: 'string',
      enum: RAILS,
      description: 'Optional; must match the destination type when given.',
    },
    metadata: metadataSchema,
    travel_rule: travelRuleRequestSchema,
  },
} as const;

/** The payload of every `transfer.*` event (the spec's section 2.4, snake_case spelling). */
export const transferEventDataSchema = {
  $id: 'TransferEventData',
  type: 'object',
  description:
    'The `data` of a `transfer.*` event: the transfer as it stood when the event was written, so a receiver can act on the state without fetching it.',
  required: [
    'transfer_id',
    'status',
    'rail',
    'ledger_state',
    'amount',
    'fee',
    'currency',
    'direction',
    'source',
    'destination',
    'failure_code',
    'metadata',
  ],
  properties: {
    transfer_id: idSchema(ID_PREFIXES.transfer, 'The transfer the event is about.'),
    status: { type: 'string', enum: TRANSFER_STATUSES },
    rail: { type: 'string', enum: RAILS },
    ledger_state: { type: 'string', enum: LEDGER_STATES },
    amount: amountSchema('Decimal string at the currency exponent.'),
    fee: amountSchema('The fee the sender pays on top of `amount` (`0.00` when none).', '15.00'),
    currency: currencySchema,
    direction: transferDirectionSchema,
    source: nullableIdSchema(ID_PREFIXES.wallet, 'The paying wallet; null for inbound collections.'),
    destination: transferDestinationSchema,
    failure_code: { type: ['string', 'null'], description: 'Why it failed, when it did.' },
    metadata: metadataSchema,
  },
} as const;

export const eventSchema = {
  $id: 'Event',
  type: 'object',
  description:
    'A change to a resource, recorded in the same transaction as the change. The same envelope is the body of a webhook delivery; receivers deduplicate on `id`.',
  required: ['id', 'object', 'type', 'created_at', 'environment', 'product', 'api_version', 'data'],
  properties: {
    id: idSchema(ID_PREFIXES.event, 'Event id.'),
    object: { type: 'string', enum: ['event'] },
    type: {
      type: 'string',
      description: `What happened: one of ${EVENT_TYPES.map((t) => `\`${t}\``).join(', ')}. New types may be added; ignore the ones you do not know.`,
      examples: ['transfer.settled'],
    },
    created_at: { ...timestampSchema, description: 'When the change happened (UTC).' },
    environment: { type: 'string', enum: ENVIRONMENTS, description: 'The environment that wrote it.' },
    product: {
      type: 'string',
      enum: [...LAUNCH_PRODUCTS, PRODUCT_NAME_BEFORE_FAMILIES],
      description: `The product family the event's resource belongs to; \`${PRODUCT_NAME_BEFORE_FAMILIES}\` in payload versions before 2026-12-06.`,
    },
    api_version: {
      type: 'string',
      enum: PAYLOAD_VERSIONS,
      description:
        'The payload version the event is rendered in (a CHANGELOG.md date): the newest here unless `api_version` asks for another; a subscription’s deliveries use its pinned version.',
      examples: [API_VERSION],
    },
    data: {
      description:
        'The resource the event is about, per type: the `webhooks` of this document give each type’s shape. A transfer for `transfer.*` events; for `wallet.*` events `{wallet_id, owner, currency, status, status_reason, status_changed_at}`; for `aml.alert.*` events `{alert_id, status, rule_id, rule_type, action, transfer_id, wallet_id, customer_id, disposition}`; for `customer.verification.updated`, `{verification_id, customer_id, status, reason, kyc_status, tier}`; for `webhook_subscription.disabled`, `{subscription_id, url, reason, failing_since}`; for `launch_gate.updated`, `{product, gate, state, previous_state, evidence, evidence_record, updated_at}`.',
      anyOf: [{ $ref: 'TransferEventData#' }, { type: 'object', additionalProperties: true }],
    },
  },
} as const;

/** Either kind of ledger account id: a wallet's account has the wallet's id; system accounts `acct_`. */
export const LEDGER_ACCOUNT_ID_PREFIXES = [ID_PREFIXES.wallet, ID_PREFIXES.ledgerAccount] as const;

export const journalEntrySchema = {
  $id: 'JournalEntry',
  type: 'object',
  description:
    'One balanced, append-only change to the ledger: for each currency and phase, its postings debit as much as they credit.',
  required: ['id', 'object', 'transfer', 'kind', 'hold_entry', 'created_at', 'postings'],
  properties: {
    id: idSchema(ID_PREFIXES.journalEntry, 'Journal entry id.'),
    object: { type: 'string', enum: ['journal_entry'] },
    transfer: nullableIdSchema(ID_PREFIXES.transfer, 'The transfer that caused the entry.'),
    kind: {
      type: 'string',
      enum: JOURNAL_ENTRY_KINDS,
      description:
        '`hold` reserves funds (pending postings); `post` makes a hold final; `void` releases it; `direct` moves money at once; `reversal` gives a settled transfer back.',
    },
    hold_entry: nullableIdSchema(
      ID_PREFIXES.journalEntry,
      'For `post` and `void`: the hold entry they make final or release.',
    ),
    created_at: timestampSchema,
    postings: {
      type: 'array',
      description: 'The lines of the entry, in order.',
      items: {
        type: 'object',
        required: ['account', 'side', 'phase', 'releases_hold', 'amount', 'currency'],
        properties: {
          account: idSchema(LEDGER_ACCOUNT_ID_PREFIXES, 'The ledger account (a wallet id for wallets).'),
          side: { type: 'string', enum: POSTING_SIDES },
          phase: {
            type: 'string',
            enum: POSTING_PHASES,
            description:
              "`pending` adds to the side's pending sum; `posted` adds to its posted sum; `voided` takes the amount off its pending sum.",
          },
          releases_hold: {
            type: 'boolean',
            description: 'On a posted line: the amount also leaves the pending sum (a hold made final).',
          },
          amount: amountSchema('Positive decimal string at the currency exponent.'),
          currency: currencySchema,
        },
      },
    },
  },
} as const;

const accountSumSchema = (description: string) => amountSchema(description, '0.00');

export const ledgerAccountSchema = {
  $id: 'LedgerAccount',
  type: 'object',
  description:
    'An account of the double-entry ledger with its four running sums. Signed nets are credits minus debits; over all accounts of one currency they sum to zero.',
  required: [
    'id',
    'object',
    'kind',
    'wallet',
    'rail',
    'currency',
    'debits_pending',
    'debits_posted',
    'credits_pending',
    'credits_posted',
    'net_pending',
    'net_posted',
    'balance',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: idSchema(LEDGER_ACCOUNT_ID_PREFIXES, 'Account id: the wallet id for a wallet, `acct_…` otherwise.'),
    object: { type: 'string', enum: ['ledger_account'] },
    kind: {
      type: 'string',
      enum: ACCOUNT_KINDS,
      description:
        '`wallet`: a customer wallet. `rail_settlement`: money held at a rail partner, its float (debited when a collection arrives). `rail_clearing`: money paid out through a rail (credited when a payout is held and posted). `payment_batch_reserve`: what a running payment batch still has to pay. `reconciliation_adjustment` and `rail_fee`: differences and fees booked from reconciliation. `fee_income`: fees customers paid. `conversion`: the treasury’s side of a mint or redeem. `trust`: customer money held at trust banks or, for USDC and USDT, at a custodian (debited when a bank or on-chain deposit arrives and by a sweep into trust, credited by a sweep out).',
    },
    wallet: nullableIdSchema(ID_PREFIXES.wallet, 'The wallet, for a wallet account.'),
    rail: {
      type: ['string', 'null'],
      enum: [...RAILS, null],
      description: 'The rail, for a system account.',
    },
    currency: currencySchema,
    debits_pending: accountSumSchema('Held debits: pending, neither posted nor voided yet.'),
    debits_posted: accountSumSchema('Final debits.'),
    credits_pending: accountSumSchema('Held credits.'),
    credits_posted: accountSumSchema('Final credits.'),
    net_pending: signedAmountSchema('credits_pending − debits_pending (signed).'),
    net_posted: signedAmountSchema(
      'credits_posted − debits_posted (signed): for a wallet its current balance; negative is a debit balance.',
    ),
    balance: {
      type: ['object', 'null'],
      description:
        "A wallet account's balances, exactly as `GET /v1/wallets/{id}/balance`; null for system accounts.",
      required: ['available', 'pending', 'current'],
      properties: balanceProperties,
    },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const;

export const SHARED_SCHEMAS = [
  problemSchema,
  walletSchema,
  accountDetailsSchema,
  balanceSchema,
  customerSchema,
  transferSchema,
  transferEventDataSchema,
  eventSchema,
  journalEntrySchema,
  ledgerAccountSchema,
];

/** Path parameters of a route addressing one resource by its `id`. */
export function idParamsSchema(prefix: IdPrefix | readonly IdPrefix[], description: string) {
  return { type: 'object', required: ['id'], properties: { id: idSchema(prefix, description) } } as const;
}
