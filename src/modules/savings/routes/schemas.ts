/** The savings module's wire format: products with their rates, accounts, daily accruals, notices, withdrawals. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { accessByScope } from '../../../http/routeKit.ts';
import { closedApiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  amountSchema,
  currencySchema,
  daySchema,
  idSchema,
  metadataSchema,
  nullableDaySchema,
  nullableStringSchema,
  pageLimitSchema,
  timestampSchema,
} from '../../../http/schemas.ts';
import {
  ACCRUAL_DENOMINATOR,
  DAY_COUNT_CONVENTIONS,
  SAVINGS_ACCESS_TYPES,
  SAVINGS_NOTICE_DAYS_MAX,
  SAVINGS_PENALTY_BPS_MAX,
  SAVINGS_PRODUCT_NAME_CHARS_MAX,
  SAVINGS_RATE_BPS_MAX,
  SAVINGS_TERM_DAYS_MAX,
} from '../domain.ts';

export const TAGS = ['Savings'];
export const ACCESS = accessByScope(TAGS, 'digital_banking');
export const DAY = { type: 'string', format: 'date' } as const;

export const amountBody = {
  type: ['string', 'number'],
  description: 'A decimal string ("1500.00"); a JSON number only when exact at the currency exponent.',
  examples: ['1500.00'],
} as const;

export const rateBps = {
  type: 'integer',
  minimum: 0,
  maximum: SAVINGS_RATE_BPS_MAX,
  description: 'Annual rate in basis points (450 = 4.50 % a year).',
} as const;

export const savingsProductSchema = closedApiObjectSchema('SavingsProduct', 'savings_product', {
  id: idSchema(ID_PREFIXES.savingsProduct, 'The product.'),
  name: { type: 'string' },
  currency: currencySchema,
  annual_rate_bps: { ...rateBps, description: 'The rate in force today on the organization’s clock.' },
  rates: {
    type: 'array',
    description: 'Every rate, oldest first: each in force from its day until the next one’s.',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['effective_from', 'annual_rate_bps'],
      properties: { effective_from: DAY, annual_rate_bps: rateBps },
    },
  },
  day_count: { type: 'string', enum: DAY_COUNT_CONVENTIONS },
  minimum_balance: amountSchema('What a withdrawal must leave behind, unless it takes everything.'),
  access: { type: 'string', enum: SAVINGS_ACCESS_TYPES },
  notice_days: { type: ['integer', 'null'] },
  term_days: { type: ['integer', 'null'] },
  early_withdrawal_penalty_bps: { type: ['integer', 'null'] },
  metadata: metadataSchema,
  created_by: { type: 'string' },
  created_at: timestampSchema,
});

export const savingsAccountSchema = closedApiObjectSchema('SavingsAccount', 'savings_account', {
  id: idSchema(ID_PREFIXES.wallet, 'The savings account: the id of its wallet.'),
  wallet: idSchema(ID_PREFIXES.wallet, 'The wallet (the same id).'),
  product: idSchema(ID_PREFIXES.savingsProduct, 'Its product.'),
  owner: idSchema(ID_PREFIXES.customer, 'The customer it belongs to.'),
  currency: currencySchema,
  status: { type: 'string', description: 'The wallet’s status.' },
  balance: amountSchema('The wallet’s current balance.'),
  opened_on: daySchema('The day it opened, on the organization’s clock: the first day it accrues.'),
  matures_on: nullableDaySchema('A fixed-term account’s maturity day; null otherwise.'),
  accrued_through: daySchema('The last day accrued.'),
  accrued_interest: {
    type: 'object',
    additionalProperties: false,
    required: ['payable', 'residual_numerator', 'denominator'],
    description:
      'Interest accrued and not yet capitalised: the whole units booked as payable, and the residual below one unit as an exact fraction.',
    properties: {
      payable: amountSchema('Whole minor units accrued, capitalised at the month’s end.'),
      residual_numerator: { type: 'string', pattern: '^[0-9]+$' },
      denominator: { type: 'string', enum: [ACCRUAL_DENOMINATOR.toString()] },
    },
  },
  interest_paid: amountSchema('Interest capitalised into the account so far.'),
  metadata: metadataSchema,
  created_at: timestampSchema,
});

export const savingsAccrualSchema = closedApiObjectSchema('SavingsAccrual', 'savings_accrual', {
  savings_account: idSchema(ID_PREFIXES.wallet, 'The savings account.'),
  day: DAY,
  balance: { type: 'string', description: 'The closing balance the day accrued on.' },
  annual_rate_bps: rateBps,
  day_count_fraction: {
    type: 'string',
    pattern: '^[0-9]+/(360|365)$',
    description: 'The part of a year the day counted for (`1/365`, `0/360` …).',
  },
  interest_numerator: {
    type: 'string',
    description: 'The day’s interest in minor units, over `denominator`: exact.',
  },
  accrued_numerator: {
    type: 'string',
    description: 'The account’s accrued interest after the day, over `denominator`.',
  },
  denominator: { type: 'string', enum: [ACCRUAL_DENOMINATOR.toString()] },
  booked: amountSchema('Whole units the day booked from interest expense to interest payable.'),
  capitalized: amountSchema('Whole units capitalised into the wallet that day (a month’s last day).'),
  booking_entry: { type: ['string', 'null'] },
  capitalization_entry: { type: ['string', 'null'] },
});

export const savingsNoticeSchema = closedApiObjectSchema('SavingsNotice', 'savings_notice', {
  id: idSchema(ID_PREFIXES.savingsNotice, 'The notice.'),
  savings_account: idSchema(ID_PREFIXES.wallet, 'The savings account.'),
  amount: amountSchema('What may be withdrawn under it, at most.'),
  currency: currencySchema,
  given_on: DAY,
  available_on: daySchema('From this day on the organization’s clock the money may be withdrawn.'),
  status: { type: 'string', enum: ['open', 'used'] },
  created_at: timestampSchema,
});

export const savingsWithdrawalSchema = closedApiObjectSchema('SavingsWithdrawal', 'savings_withdrawal', {
  id: idSchema(ID_PREFIXES.savingsWithdrawal, 'The withdrawal.'),
  savings_account: idSchema(ID_PREFIXES.wallet, 'The savings account.'),
  destination: idSchema(ID_PREFIXES.wallet, 'The wallet paid: one of the same owner.'),
  amount: amountSchema('What the destination received.'),
  penalty: amountSchema('The early-withdrawal penalty the account paid besides (0 if none).'),
  currency: currencySchema,
  notice: nullableStringSchema('The notice it used, for a notice product.'),
  day: DAY,
  journal_entry: { type: 'string' },
  created_at: timestampSchema,
});

export const SAVINGS_SCHEMAS = [
  savingsProductSchema,
  savingsAccountSchema,
  savingsAccrualSchema,
  savingsNoticeSchema,
  savingsWithdrawalSchema,
];

export const productBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'currency', 'annual_rate_bps', 'day_count', 'access'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: SAVINGS_PRODUCT_NAME_CHARS_MAX },
    currency: currencySchema,
    annual_rate_bps: { ...rateBps, description: 'The rate from today on the organization’s clock.' },
    day_count: {
      type: 'string',
      enum: DAY_COUNT_CONVENTIONS,
      description:
        '`actual_365_fixed`: each day 1/365; `actual_360`: each day 1/360; `thirty_360`: 30/360 (ISDA), each month 30/360.',
    },
    minimum_balance: {
      ...amountBody,
      description: 'What a withdrawal must leave behind unless it takes everything; 0 by default.',
    },
    access: {
      type: 'string',
      enum: SAVINGS_ACCESS_TYPES,
      description:
        '`instant`; `notice` (with `notice_days`); `fixed_term` (with `term_days` and `early_withdrawal_penalty_bps`).',
    },
    notice_days: { type: 'integer', minimum: 1, maximum: SAVINGS_NOTICE_DAYS_MAX },
    term_days: { type: 'integer', minimum: 1, maximum: SAVINGS_TERM_DAYS_MAX },
    early_withdrawal_penalty_bps: {
      type: 'integer',
      minimum: 0,
      maximum: SAVINGS_PENALTY_BPS_MAX,
      description:
        'Charged on the amount of a withdrawal before maturity, rounded half up to the minor unit.',
    },
    metadata: metadataSchema,
  },
} as const;

/** A page's query: its size and the `next_cursor` of the previous page, an id with this prefix. */
export const pageQuery = (prefix: string, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: pageLimitSchema(),
    starting_after: {
      type: 'string',
      pattern: `^${prefix}_`,
      description: 'The `next_cursor` of the previous page.',
    },
    ...extra,
  },
});
