/**
 * Savings products and savings accounts: products (terms and effective-dated rates), accounts (wallets of a
 * product), their daily accruals, withdrawal notices and withdrawals.
 */
import type { FastifyInstance } from 'fastify';
import { actorIdOf } from '../../app/apiKeys.ts';
import type { Deps, Queryable } from '../../app/deps.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Metadata } from '../../domain/metadata.ts';
import { type Currency, formatAmount } from '../../domain/money.ts';
import { BEARER_SECURITY, principalOf } from '../../http/auth.ts';
import { presentList } from '../../http/presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../../http/problems.ts';
import {
  amountSchema,
  currencySchema,
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  idSchema,
  listEnvelopeSchema,
  metadataSchema,
  pageLimitSchema,
  timestampSchema,
} from '../../http/schemas.ts';
import { sendWrite } from '../../http/writes.ts';
import { organizationNow, utcDay } from '../testClock/index.ts';
import {
  ACCRUAL_DENOMINATOR,
  DAY_COUNT_CONVENTIONS,
  rateOn,
  SAVINGS_ACCESS_TYPES,
  SAVINGS_NOTICE_DAYS_MAX,
  SAVINGS_PENALTY_BPS_MAX,
  SAVINGS_PRODUCT_NAME_CHARS_MAX,
  SAVINGS_RATE_BPS_MAX,
  SAVINGS_TERM_DAYS_MAX,
} from './domain.ts';
import {
  getSavingsAccount,
  listSavingsAccounts,
  listSavingsAccruals,
  openSavingsAccount,
  type SavingsAccrualRow,
  savingsAccountJson,
} from './useCases/accounts.ts';
import {
  addSavingsRate,
  type CreateSavingsProductInput,
  createSavingsProduct,
  getSavingsProduct,
  listSavingsProducts,
  type SavingsProduct,
} from './useCases/products.ts';
import {
  giveSavingsNotice,
  listSavingsNotices,
  savingsNoticeJson,
  savingsWithdrawalJson,
  type WithdrawalInput,
  withdrawSavings,
} from './useCases/withdrawals.ts';

const PRODUCT_TAGS = ['Savings'];
const DAY = { type: 'string', format: 'date' } as const;
const NULLABLE_DAY = { type: ['string', 'null'], format: 'date' } as const;

const amountBody = {
  type: ['string', 'number'],
  description: 'A decimal string ("1500.00"); a JSON number only when exact at the currency exponent.',
  examples: ['1500.00'],
} as const;

const rateBps = {
  type: 'integer',
  minimum: 0,
  maximum: SAVINGS_RATE_BPS_MAX,
  description: 'Annual rate in basis points (450 = 4.50 % a year).',
} as const;

export const savingsProductSchema = {
  $id: 'SavingsProduct',
  type: 'object',
  additionalProperties: false,
  required: [
    'object',
    'id',
    'name',
    'currency',
    'annual_rate_bps',
    'rates',
    'day_count',
    'minimum_balance',
    'access',
    'notice_days',
    'term_days',
    'early_withdrawal_penalty_bps',
    'metadata',
    'created_by',
    'created_at',
  ],
  properties: {
    object: { type: 'string', enum: ['savings_product'] },
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
  },
} as const;

export const savingsAccountSchema = {
  $id: 'SavingsAccount',
  type: 'object',
  additionalProperties: false,
  required: [
    'object',
    'id',
    'wallet',
    'product',
    'owner',
    'currency',
    'status',
    'balance',
    'opened_on',
    'matures_on',
    'accrued_through',
    'accrued_interest',
    'interest_paid',
    'metadata',
    'created_at',
  ],
  properties: {
    object: { type: 'string', enum: ['savings_account'] },
    id: idSchema(ID_PREFIXES.wallet, 'The savings account: the id of its wallet.'),
    wallet: idSchema(ID_PREFIXES.wallet, 'The wallet (the same id).'),
    product: idSchema(ID_PREFIXES.savingsProduct, 'Its product.'),
    owner: idSchema(ID_PREFIXES.customer, 'The customer it belongs to.'),
    currency: currencySchema,
    status: { type: 'string', description: 'The wallet’s status.' },
    balance: amountSchema('The wallet’s current balance.'),
    opened_on: {
      ...DAY,
      description: 'The day it opened, on the organization’s clock: the first day it accrues.',
    },
    matures_on: { ...NULLABLE_DAY, description: 'A fixed-term account’s maturity day; null otherwise.' },
    accrued_through: { ...DAY, description: 'The last day accrued.' },
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
  },
} as const;

export const savingsAccrualSchema = {
  $id: 'SavingsAccrual',
  type: 'object',
  additionalProperties: false,
  required: [
    'object',
    'savings_account',
    'day',
    'balance',
    'annual_rate_bps',
    'day_count_fraction',
    'interest_numerator',
    'accrued_numerator',
    'denominator',
    'booked',
    'capitalized',
    'booking_entry',
    'capitalization_entry',
  ],
  properties: {
    object: { type: 'string', enum: ['savings_accrual'] },
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
  },
} as const;

export const savingsNoticeSchema = {
  $id: 'SavingsNotice',
  type: 'object',
  additionalProperties: false,
  required: [
    'object',
    'id',
    'savings_account',
    'amount',
    'currency',
    'given_on',
    'available_on',
    'status',
    'created_at',
  ],
  properties: {
    object: { type: 'string', enum: ['savings_notice'] },
    id: idSchema(ID_PREFIXES.savingsNotice, 'The notice.'),
    savings_account: idSchema(ID_PREFIXES.wallet, 'The savings account.'),
    amount: amountSchema('What may be withdrawn under it, at most.'),
    currency: currencySchema,
    given_on: DAY,
    available_on: {
      ...DAY,
      description: 'From this day on the organization’s clock the money may be withdrawn.',
    },
    status: { type: 'string', enum: ['open', 'used'] },
    created_at: timestampSchema,
  },
} as const;

export const savingsWithdrawalSchema = {
  $id: 'SavingsWithdrawal',
  type: 'object',
  additionalProperties: false,
  required: [
    'object',
    'id',
    'savings_account',
    'destination',
    'amount',
    'penalty',
    'currency',
    'notice',
    'day',
    'journal_entry',
    'created_at',
  ],
  properties: {
    object: { type: 'string', enum: ['savings_withdrawal'] },
    id: idSchema(ID_PREFIXES.savingsWithdrawal, 'The withdrawal.'),
    savings_account: idSchema(ID_PREFIXES.wallet, 'The savings account.'),
    destination: idSchema(ID_PREFIXES.wallet, 'The wallet paid: one of the same owner.'),
    amount: amountSchema('What the destination received.'),
    penalty: amountSchema('The early-withdrawal penalty the account paid besides (0 if none).'),
    currency: currencySchema,
    notice: { type: ['string', 'null'], description: 'The notice it used, for a notice product.' },
    day: DAY,
    journal_entry: { type: 'string' },
    created_at: timestampSchema,
  },
} as const;

export const SAVINGS_SCHEMAS = [
  savingsProductSchema,
  savingsAccountSchema,
  savingsAccrualSchema,
  savingsNoticeSchema,
  savingsWithdrawalSchema,
];

/** The product as the API shows it on `today` (the organization's): `annual_rate_bps` is the rate in force. */
export function presentSavingsProduct(product: SavingsProduct, today: string) {
  const current = rateOn(product.rates, today) ?? product.rates[0];
  return {
    object: 'savings_product',
    id: product.id,
    name: product.name,
    currency: product.currency,
    annual_rate_bps: current?.annualRateBps ?? 0,
    rates: product.rates.map((r) => ({ effective_from: r.effectiveFrom, annual_rate_bps: r.annualRateBps })),
    day_count: product.dayCount,
    minimum_balance: formatAmount(product.minimumBalanceMinor, product.currency),
    access: product.access,
    notice_days: product.noticeDays,
    term_days: product.termDays,
    early_withdrawal_penalty_bps: product.earlyWithdrawalPenaltyBps,
    metadata: product.metadata,
    created_by: product.createdBy,
    created_at: product.createdAt.toISOString(),
  };
}

function presentAccrual(row: SavingsAccrualRow, currency: Currency) {
  return {
    object: 'savings_accrual',
    savings_account: row.walletId,
    day: row.day,
    balance: formatAmount(row.balanceMinor, currency),
    annual_rate_bps: row.annualRateBps,
    day_count_fraction: `${row.dayCountDays}/${row.dayCountBasis}`,
    interest_numerator: row.parts.toString(),
    accrued_numerator: row.accruedPartsAfter.toString(),
    denominator: ACCRUAL_DENOMINATOR.toString(),
    booked: formatAmount(row.bookedMinor, currency),
    capitalized: formatAmount(row.capitalizedMinor, currency),
    booking_entry: row.bookingEntryId,
    capitalization_entry: row.capitalizationEntryId,
  };
}

const productBody = {
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

const pageQuery = (prefix: string, extra: Record<string, unknown> = {}) => ({
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

export function savingsRoutes(app: FastifyInstance, deps: Deps): void {
  const todayOf = async (db: Queryable, organizationId: string) =>
    utcDay(await organizationNow(db, deps, organizationId));

  app.post<{ Body: CreateSavingsProductInput }>(
    '/v1/savings-products',
    {
      config: { scope: 'admin', product: 'digital_banking' },
      schema: {
        operationId: 'createSavingsProduct',
        summary: 'Create a savings product',
        description:
          'A product’s terms are fixed once created; its rate is effective-dated (POST …/rates). Interest accrues daily on each account’s closing balance and is capitalised on each month’s last day, by the organization’s clock.',
        tags: PRODUCT_TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: productBody,
        response: {
          201: { description: 'The product.', headers: idempotentWriteHeaders, $ref: 'SavingsProduct#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => {
        const product = await createSavingsProduct(
          tx,
          deps,
          organizationId,
          request.body,
          actorIdOf(principalOf(request)),
        );
        return { status: 201, body: presentSavingsProduct(product, await todayOf(tx, organizationId)) };
      }),
  );

  app.get<{ Querystring: { limit: number; starting_after?: string } }>(
    '/v1/savings-products',
    {
      config: { scope: 'read', product: 'digital_banking' },
      schema: {
        operationId: 'listSavingsProducts',
        summary: 'List savings products',
        description: 'Newest first.',
        tags: PRODUCT_TAGS,
        security: BEARER_SECURITY,
        querystring: pageQuery(ID_PREFIXES.savingsProduct),
        response: {
          200: listEnvelopeSchema('SavingsProduct', 'A page of products.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const organizationId = principalOf(request).organizationId;
      const page = await listSavingsProducts(deps, organizationId, {
        limit: request.query.limit,
        startingAfter: request.query.starting_after,
      });
      const today = await todayOf(deps.store, organizationId);
      return presentList(page, (p) => presentSavingsProduct(p, today));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/savings-products/:id',
    {
      config: { scope: 'read', product: 'digital_banking' },
      schema: {
        operationId: 'getSavingsProduct',
        summary: 'Retrieve a savings product',
        tags: PRODUCT_TAGS,
        security: BEARER_SECURITY,
        params: idParamsSchema(ID_PREFIXES.savingsProduct, 'The product.'),
        response: { 200: { $ref: 'SavingsProduct#' }, ...problemResponses(...READ_PROBLEMS) },
      },
    },
    async (request) => {
      const organizationId = principalOf(request).organizationId;
      return presentSavingsProduct(
        await getSavingsProduct(deps, organizationId, request.params.id),
        await todayOf(deps.store, organizationId),
      );
    },
  );

  app.post<{ Params: { id: string }; Body: { annual_rate_bps: number; effective_from?: string } }>(
    '/v1/savings-products/:id/rates',
    {
      config: { scope: 'admin', product: 'digital_banking' },
      schema: {
        operationId: 'addSavingsProductRate',
        summary: 'Change a savings product’s rate from a day on',
        description:
          'Appends a rate in force from `effective_from` (today on the organization’s clock by default) until the next one. Never earlier than today (422 `savings_rate_in_past`): days already accrued keep their rate. A second rate from the same day is a 409 `savings_rate_exists`.',
        tags: PRODUCT_TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: idParamsSchema(ID_PREFIXES.savingsProduct, 'The product.'),
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['annual_rate_bps'],
          properties: {
            annual_rate_bps: rateBps,
            effective_from: { ...DAY, description: 'The first day of the new rate.' },
          },
        },
        response: {
          201: {
            description: 'The product, with its rates.',
            headers: idempotentWriteHeaders,
            $ref: 'SavingsProduct#',
          },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => {
        const product = await addSavingsRate(
          tx,
          deps,
          organizationId,
          request.params.id,
          request.body,
          actorIdOf(principalOf(request)),
        );
        return { status: 201, body: presentSavingsProduct(product, await todayOf(tx, organizationId)) };
      }),
  );

  app.post<{ Body: { product: string; owner: string; metadata?: Metadata } }>(
    '/v1/savings-accounts',
    {
      config: { scope: 'write', product: 'digital_banking' },
      schema: {
        operationId: 'openSavingsAccount',
        summary: 'Open a savings account',
        description:
          'Opens a wallet of the product’s currency for the customer, as an account of the product (its id is the wallet’s), emitting `savings.account.opened`. Money comes in by any transfer to the wallet; it leaves only as a withdrawal (POST …/withdrawals): a transfer, payment batch or conversion from it is a 422 `savings_account_cannot_send`.',
        tags: PRODUCT_TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['product', 'owner'],
          properties: {
            product: idSchema(ID_PREFIXES.savingsProduct, 'The product.'),
            owner: idSchema(ID_PREFIXES.customer, 'The customer.'),
            metadata: metadataSchema,
          },
        },
        response: {
          201: { description: 'The account.', headers: idempotentWriteHeaders, $ref: 'SavingsAccount#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 201,
        body: savingsAccountJson(await openSavingsAccount(tx, deps, organizationId, request.body)),
      })),
  );

  app.get<{ Querystring: { limit: number; starting_after?: string; product?: string } }>(
    '/v1/savings-accounts',
    {
      config: { scope: 'read', product: 'digital_banking' },
      schema: {
        operationId: 'listSavingsAccounts',
        summary: 'List savings accounts',
        description: 'Newest first; filter by product.',
        tags: PRODUCT_TAGS,
        security: BEARER_SECURITY,
        querystring: pageQuery(ID_PREFIXES.wallet, {
          product: idSchema(ID_PREFIXES.savingsProduct, 'Only accounts of this product.'),
        }),
        response: {
          200: listEnvelopeSchema('SavingsAccount', 'A page of savings accounts.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const page = await listSavingsAccounts(deps, principalOf(request).organizationId, {
        limit: request.query.limit,
        startingAfter: request.query.starting_after,
        productId: request.query.product,
      });
      return presentList(
        { data: page.data.map((v) => ({ id: v.account.walletId, view: v })), hasMore: page.hasMore },
        (item) => savingsAccountJson(item.view),
      );
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/savings-accounts/:id',
    {
      config: { scope: 'read', product: 'digital_banking' },
      schema: {
        operationId: 'getSavingsAccount',
        summary: 'Retrieve a savings account',
        tags: PRODUCT_TAGS,
        security: BEARER_SECURITY,
        params: idParamsSchema(ID_PREFIXES.wallet, 'The savings account (its wallet id).'),
        response: { 200: { $ref: 'SavingsAccount#' }, ...problemResponses(...READ_PROBLEMS) },
      },
    },
    async (request) =>
      savingsAccountJson(
        await getSavingsAccount(deps, principalOf(request).organizationId, request.params.id),
      ),
  );

  app.get<{ Params: { id: string }; Querystring: { limit: number; before_day?: string } }>(
    '/v1/savings-accounts/:id/accruals',
    {
      config: { scope: 'read', product: 'digital_banking' },
      schema: {
        operationId: 'listSavingsAccruals',
        summary: 'List a savings account’s daily accruals',
        description:
          'Newest day first; page with `before_day` (the `next_cursor` of the previous page). Each day shows the balance, rate and day-count fraction it accrued at and its exact interest.',
        tags: PRODUCT_TAGS,
        security: BEARER_SECURITY,
        params: idParamsSchema(ID_PREFIXES.wallet, 'The savings account.'),
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            limit: pageLimitSchema('days'),
            before_day: { ...DAY, description: 'Only days before this one.' },
          },
        },
        response: {
          200: {
            description: 'A page of accruals.',
            type: 'object',
            required: ['object', 'data', 'has_more', 'next_cursor'],
            properties: {
              object: { type: 'string', enum: ['list'] },
              data: { type: 'array', items: { $ref: 'SavingsAccrual#' } },
              has_more: { type: 'boolean' },
              next_cursor: {
                type: ['string', 'null'],
                description: 'Pass as `before_day` for the next page.',
              },
            },
          },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) => {
      const organizationId = principalOf(request).organizationId;
      const view = await getSavingsAccount(deps, organizationId, request.params.id);
      const page = await listSavingsAccruals(deps, organizationId, request.params.id, {
        limit: request.query.limit,
        beforeDay: request.query.before_day,
      });
      const last = page.data.at(-1);
      return {
        object: 'list',
        data: page.data.map((row) => presentAccrual(row, view.currency)),
        has_more: page.hasMore,
        next_cursor: page.hasMore && last ? last.day : null,
      };
    },
  );

  app.post<{ Params: { id: string }; Body: { amount: string | number } }>(
    '/v1/savings-accounts/:id/notices',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'giveSavingsNotice',
        summary: 'Give notice of a withdrawal',
        description:
          'On a notice product: the amount may be withdrawn, once, from `available_on` (the product’s `notice_days` after today on the organization’s clock). Emits `savings.notice.given`. On another product, a 422 `savings_withdrawal_refused` (reason `notice_not_applicable`).',
        tags: PRODUCT_TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: idParamsSchema(ID_PREFIXES.wallet, 'The savings account.'),
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['amount'],
          properties: { amount: amountBody },
        },
        response: {
          201: { description: 'The notice.', headers: idempotentWriteHeaders, $ref: 'SavingsNotice#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => {
        const { notice, currency } = await giveSavingsNotice(
          tx,
          deps,
          organizationId,
          request.params.id,
          request.body,
        );
        return { status: 201, body: savingsNoticeJson(notice, currency) };
      }),
  );

  app.get<{ Params: { id: string }; Querystring: { limit: number } }>(
    '/v1/savings-accounts/:id/notices',
    {
      config: { scope: 'read', product: 'digital_banking' },
      schema: {
        operationId: 'listSavingsNotices',
        summary: 'List a savings account’s notices',
        description: 'Newest first.',
        tags: PRODUCT_TAGS,
        security: BEARER_SECURITY,
        params: idParamsSchema(ID_PREFIXES.wallet, 'The savings account.'),
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            limit: pageLimitSchema('notices'),
          },
        },
        response: {
          200: {
            description: 'The newest notices.',
            type: 'object',
            required: ['object', 'data'],
            properties: {
              object: { type: 'string', enum: ['list'] },
              data: { type: 'array', items: { $ref: 'SavingsNotice#' } },
            },
          },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) => {
      const { notices, currency } = await listSavingsNotices(
        deps,
        principalOf(request).organizationId,
        request.params.id,
        request.query.limit,
      );
      return { object: 'list', data: notices.map((n) => savingsNoticeJson(n, currency)) };
    },
  );

  app.post<{ Params: { id: string }; Body: WithdrawalInput }>(
    '/v1/savings-accounts/:id/withdrawals',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'withdrawSavings',
        summary: 'Withdraw from a savings account',
        description:
          'Pays `amount` to `destination`, a wallet of the same owner, by the product’s rules: a notice product needs `notice`, one whose `available_on` has come, still open and covering the amount; a fixed-term account before maturity pays `early_withdrawal_penalty_bps` of the amount besides, to the organization’s fee income; what is left must be nothing or at least the minimum balance. A refusal is a 422 `savings_withdrawal_refused` with `reason` (`notice_required`, `notice_not_open`, `notice_period_running`, `amount_exceeds_notice`, `below_minimum_balance`, `destination_not_owner`); too little money is `insufficient_funds`. Emits `savings.withdrawal.completed`.',
        tags: PRODUCT_TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: idParamsSchema(ID_PREFIXES.wallet, 'The savings account.'),
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['destination', 'amount'],
          properties: {
            destination: idSchema(ID_PREFIXES.wallet, 'A wallet of the same owner and currency.'),
            amount: amountBody,
            notice: idSchema(ID_PREFIXES.savingsNotice, 'For a notice product: the notice withdrawn under.'),
          },
        },
        response: {
          201: {
            description: 'The withdrawal.',
            headers: idempotentWriteHeaders,
            $ref: 'SavingsWithdrawal#',
          },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => {
        const { withdrawal, currency } = await withdrawSavings(
          tx,
          deps,
          organizationId,
          request.params.id,
          request.body,
        );
        return { status: 201, body: savingsWithdrawalJson(withdrawal, currency) };
      }),
  );
}
