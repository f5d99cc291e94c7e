/** Fee schedules and transfer quotes on the wire. */

import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  amountSchema,
  currencySchema,
  feeScheduleDecisionSchema,
  timestampSchema,
  transferRailSchema,
} from '../../../http/schemas.ts';
import {
  FEE_PERCENT_BPS_MAX,
  FEE_RAILS,
  FEE_RULE_TYPES,
  FEE_SCHEDULE_RULES_MAX,
  FEE_TIERS_MAX,
} from '../domain.ts';

const basisPoints = (description: string) =>
  ({ type: 'integer', minimum: 0, maximum: FEE_PERCENT_BPS_MAX, description, examples: [150] }) as const;

const tierSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'One amount band: amounts above the band before and up to `up_to` (inclusive) pay `fixed` plus `percent_bps` of the amount. The last band has no `up_to` and takes every larger amount. A band needs `fixed`, `percent_bps` or both.',
  properties: {
    up_to: amountSchema('The largest amount in the band; left out on the last band.', '1000.00'),
    fixed: amountSchema('A fixed part, in the rule’s currency.', '10.00'),
    percent_bps: basisPoints('A percentage part in basis points (100 = 1 %), rounded half up.'),
  },
} as const;

export const feeRuleSchema = {
  $id: 'FeeRule',
  type: 'object',
  description:
    'The fee for transfers on one rail in one currency, or for conversions (rail `conversion`) from one currency (one rule per pair; a transfer or conversion with no rule pays none). `type` says which fields apply: `fixed` takes `fixed`; `percentage` takes `percent_bps` with an optional `min` and `max`; `tiered` takes `tiers`. A percentage is rounded half up to the minor unit (0.5 % of 101.00 is 0.505, charged 0.51), before `min` and `max` apply.',
  required: ['id', 'rail', 'currency', 'type'],
  additionalProperties: false,
  properties: {
    id: {
      type: 'string',
      pattern: '^[a-z0-9][a-z0-9_-]{0,63}$',
      description: 'Unique in the schedule; transfers name the rule that decided their fee.',
      examples: ['mobile_money_kes'],
    },
    rail: {
      type: 'string',
      enum: FEE_RAILS,
      description:
        'The rail the rule prices (`internal`: wallet to wallet), or `conversion`: mint and redeem, priced in the currency converted from.',
    },
    currency: {
      ...currencySchema,
      description: 'The currency; the rail must carry it (any supported currency for `conversion`).',
    },
    type: { type: 'string', enum: FEE_RULE_TYPES },
    fixed: amountSchema('For `fixed`: the fee, whatever the amount.', '25.00'),
    percent_bps: basisPoints(
      `For \`percentage\`: basis points of the amount (150 = 1.5 %; at most ${FEE_PERCENT_BPS_MAX}, 100 %).`,
    ),
    min: {
      ...amountSchema('For `percentage`: the least fee charged; null or left out for none.', '10.00'),
      type: ['string', 'null'],
    },
    max: {
      ...amountSchema('For `percentage`: the most fee charged; null or left out for none.', '300.00'),
      type: ['string', 'null'],
    },
    tiers: {
      type: 'array',
      minItems: 1,
      maxItems: FEE_TIERS_MAX,
      items: tierSchema,
      description: `For \`tiered\`: 1 to ${FEE_TIERS_MAX} bands in increasing order of \`up_to\`.`,
    },
  },
} as const;

export const feeScheduleSchema = apiObjectSchema(
  'FeeSchedule',
  'fee_schedule',
  'An organization’s fee schedule at one version. Every change makes a new version; every transfer names the version and rule that decided its fee. Before any change it is version 1, with no rules: no fees.',
  {
    version: { type: 'integer', minimum: 1 },
    rules: { type: 'array', items: { $ref: 'FeeRule#' } },
    created_by: {
      type: 'string',
      description: 'The member or API key that wrote this version, or `system`.',
    },
    created_at: timestampSchema,
  },
);

/** A rule as a request carries it: the FeeRule schema inline (request validation resolves no shared $ref). */
const { $id: _ruleId, ...ruleBodySchema } = feeRuleSchema;

export const feeScheduleBodySchema = {
  type: 'object',
  required: ['rules'],
  additionalProperties: false,
  properties: {
    rules: {
      type: 'array',
      maxItems: FEE_SCHEDULE_RULES_MAX,
      items: ruleBodySchema,
      description: `The whole schedule, at most ${FEE_SCHEDULE_RULES_MAX} rules: it replaces the current one. An empty list charges no fees.`,
    },
    base_version: {
      type: 'integer',
      minimum: 1,
      description:
        'The version this change was written against: if the schedule has moved on, 409 `fee_schedule_version_conflict`.',
    },
  },
} as const;

export const transferQuoteSchema = apiObjectSchema(
  'TransferQuote',
  'transfer_quote',
  'What a transfer would cost now: the fee the organization’s current fee schedule charges, and the total the source wallet is debited (and must have available).',
  {
    amount: amountSchema('What the destination receives, at the currency exponent.'),
    fee: amountSchema('The fee (`0.00` when none).', '22.50'),
    total: amountSchema('Amount + fee: what the source wallet is debited.', '1522.50'),
    currency: currencySchema,
    rail: transferRailSchema,
    fee_schedule: feeScheduleDecisionSchema(
      'The fee schedule version and rule that decided the fee; a transfer created while this version is current is charged the same.',
      false,
    ),
  },
);

export const FEE_SCHEMAS = [feeRuleSchema, feeScheduleSchema, transferQuoteSchema];
