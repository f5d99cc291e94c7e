/**
 * Safeguarding: trust accounts (admins configure them), the closing balances their bank statements report
 * and the daily reports comparing them with customer money (operators: the `compliance` scope).
 */
import type { FastifyInstance } from 'fastify';
import { actorIdOf } from '../../app/apiKeys.ts';
import type { Deps } from '../../app/deps.ts';
import {
  type CreateTrustAccountInput,
  closeTrustAccountFor,
  createTrustAccount,
  getSafeguardingReport,
  getTrustAccount,
  listOrganizationTrustAccounts,
  listSafeguardingBalances,
  listSafeguardingReports,
  type ReportBalanceInput,
  reportSafeguardingBalance,
  type SafeguardingReport,
} from '../../app/safeguarding.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { type Currency, formatAmount, SUPPORTED_CURRENCIES } from '../../domain/money.ts';
import {
  SAFEGUARDING_BALANCE_STATUSES,
  SAFEGUARDING_LOOKBACK_DAYS,
  SAFEGUARDING_NOTE_LENGTH_MAX,
  SAFEGUARDING_REPORT_STATUSES,
  type SafeguardingBalance,
  type SafeguardingReportStatus,
  TRUST_ACCOUNT_FIELD_LENGTH_MAX,
  TRUST_ACCOUNT_STATUSES,
  TRUST_ACCOUNT_TYPES,
  type TrustAccount,
  type TrustAccountStatus,
  type TrustAccountType,
} from '../../domain/safeguarding.ts';
import { BEARER_SECURITY, principalOf, requestActor } from '../auth.ts';
import { type ListQuery, pageRequestOf, presentList } from '../presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../problems.ts';
import {
  currencySchema,
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  idSchema,
  listEnvelopeSchema,
  listQuerySchema,
  timestampSchema,
} from '../schemas.ts';
import { sendWrite } from '../writes.ts';
import { governedWrite, pendingChangeResponse } from './changes.ts';

const TAGS = ['Safeguarding'];
const dateSchema = (description: string) => ({ type: 'string', format: 'date', description }) as const;
const nullableDateSchema = (description: string) =>
  ({ type: ['string', 'null'], format: 'date', description }) as const;
const signedAmountSchema = (description: string) =>
  ({ type: 'string', pattern: '^-?[0-9]+(\\.[0-9]+)?$', description, examples: ['1500.00'] }) as const;
const nullableSignedAmountSchema = (description: string) =>
  ({ type: ['string', 'null'], pattern: '^-?[0-9]+(\\.[0-9]+)?$', description }) as const;

const trustAccountTypeSchema = {
  type: 'string',
  enum: TRUST_ACCOUNT_TYPES,
  description:
    '`bank_account`: a safeguarding account at a partner bank (fiat currencies). `custody_wallet`: a segregated wallet at a custodian (USDC and USDT, which live on chain).',
} as const;

export const trustAccountSchema = {
  $id: 'TrustAccount',
  type: 'object',
  description:
    'An account holding the organization’s customer money in one currency: a `bank_account` at a partner bank, or for USDC and USDT a `custody_wallet` at a custodian. Its closing balance counts from `active_from` until the day it was closed (`closed_on`).',
  required: [
    'object',
    'id',
    'currency',
    'type',
    'bank',
    'account_reference',
    'status',
    'active_from',
    'closed_on',
    'created_at',
    'updated_at',
  ],
  properties: {
    object: { type: 'string', enum: ['trust_account'] },
    id: idSchema(ID_PREFIXES.trustAccount, 'Trust account id.'),
    currency: currencySchema,
    type: trustAccountTypeSchema,
    bank: { type: 'string', description: 'The bank holding it (for a `custody_wallet`, the custodian).' },
    account_reference: { type: 'string', description: 'The account’s number or reference at the bank.' },
    status: { type: 'string', enum: TRUST_ACCOUNT_STATUSES },
    active_from: dateSchema('The first day (UTC) its closing balance counts.'),
    closed_on: nullableDateSchema('The day it was closed; from then on its balance no longer counts.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const;

export const safeguardingBalanceSchema = {
  $id: 'SafeguardingBalance',
  type: 'object',
  description:
    'A trust account’s closing balance for a day, as its bank statement reports it. `superseded` once a correction replaced it.',
  required: [
    'object',
    'id',
    'trust_account',
    'currency',
    'date',
    'closing_balance',
    'status',
    'replaces',
    'note',
    'created_by',
    'created_at',
  ],
  properties: {
    object: { type: 'string', enum: ['safeguarding_balance'] },
    id: idSchema(ID_PREFIXES.safeguardingBalance, 'Closing balance id.'),
    trust_account: idSchema(ID_PREFIXES.trustAccount, 'The trust account.'),
    currency: currencySchema,
    date: dateSchema('The statement’s day.'),
    closing_balance: signedAmountSchema('The closing balance, a decimal string (negative when overdrawn).'),
    status: { type: 'string', enum: SAFEGUARDING_BALANCE_STATUSES },
    replaces: {
      type: ['string', 'null'],
      description: 'The figure this one corrects.',
    },
    note: { type: ['string', 'null'], description: 'Why it was corrected.' },
    created_by: { type: 'string', description: 'The member or API key that reported it.' },
    created_at: timestampSchema,
  },
} as const;

export const safeguardingReportSchema = {
  $id: 'SafeguardingReport',
  type: 'object',
  description:
    'The daily safeguarding check of one currency: customer money (the sum of every customer wallet’s posted balance as of the end of the day, UTC) against the trust accounts’ closing balances for that day. `ok` when they are equal, `shortfall` when the trust accounts hold less (a `safeguarding_shortfall` reconciliation exception and a `safeguarding.shortfall` event), `excess` when more, `missing_balance` while a trust account that counts that day has no closing balance (reporting it judges the day again). The closing balances are also compared with the ledger’s trust account as of the same instant (`ledger_trust_balance`, `ledger_difference`): a difference opens a `trust_balance_mismatch` exception.',
  required: [
    'object',
    'id',
    'currency',
    'date',
    'status',
    'customer_money',
    'trust_balance',
    'difference',
    'trust_balances',
    'ledger_trust_balance',
    'ledger_difference',
    'exception',
    'mismatch_exception',
    'as_of',
    'created_at',
    'updated_at',
  ],
  properties: {
    object: { type: 'string', enum: ['safeguarding_report'] },
    id: idSchema(ID_PREFIXES.safeguardingReport, 'Report id.'),
    currency: currencySchema,
    date: dateSchema('The day checked (UTC).'),
    status: { type: 'string', enum: SAFEGUARDING_REPORT_STATUSES },
    customer_money: signedAmountSchema('Customer wallet balances summed, as of `as_of`.'),
    trust_balance: nullableSignedAmountSchema(
      'The closing balances of the trust accounts that count that day, summed; null while one is missing.',
    ),
    difference: nullableSignedAmountSchema(
      '`trust_balance` minus `customer_money`: negative is a shortfall; null while a balance is missing.',
    ),
    trust_balances: {
      type: 'array',
      description:
        'Each trust account that counts that day, with the closing balance used (null: not reported yet). Empty when none does: customer money in a currency without a trust account is a shortfall.',
      items: {
        type: 'object',
        required: ['trust_account', 'balance', 'closing_balance'],
        properties: {
          trust_account: idSchema(ID_PREFIXES.trustAccount, 'The trust account.'),
          balance: { type: ['string', 'null'], description: 'The closing balance used.' },
          closing_balance: nullableSignedAmountSchema('Its figure.'),
        },
      },
    },
    ledger_trust_balance: nullableSignedAmountSchema(
      'What the ledger’s `trust` account for the currency held as of `as_of` (its posted debits less credits: bank and on-chain deposits received into trust, and sweeps). Null on reports written before the ledger had it.',
    ),
    ledger_difference: nullableSignedAmountSchema(
      '`trust_balance` minus `ledger_trust_balance`: not zero when the banks hold other than the ledger says (a `trust_balance_mismatch` reconciliation exception); null while a balance is missing.',
    ),
    exception: {
      type: ['string', 'null'],
      description: 'The `safeguarding_shortfall` reconciliation exception its shortfall opened.',
    },
    mismatch_exception: {
      type: ['string', 'null'],
      description:
        'The `trust_balance_mismatch` reconciliation exception its difference from the ledger opened.',
    },
    as_of: { ...timestampSchema, description: 'The instant the ledger was read as of: the end of the day.' },
    created_at: timestampSchema,
    updated_at: { ...timestampSchema, description: 'When it was last judged (a balance reported late).' },
  },
} as const;

export const SAFEGUARDING_SCHEMAS = [trustAccountSchema, safeguardingBalanceSchema, safeguardingReportSchema];

function presentTrustAccount(a: TrustAccount) {
  return {
    object: 'trust_account',
    id: a.id,
    currency: a.currency,
    type: a.type,
    bank: a.bank,
    account_reference: a.accountReference,
    status: a.status,
    active_from: a.activeFrom,
    closed_on: a.closedOn,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}

function presentBalance(b: SafeguardingBalance) {
  return {
    object: 'safeguarding_balance',
    id: b.id,
    trust_account: b.trustAccountId,
    currency: b.currency,
    date: b.date,
    closing_balance: formatAmount(b.closingBalanceMinor, b.currency),
    status: b.status,
    replaces: b.replacesId,
    note: b.note,
    created_by: b.createdBy,
    created_at: b.createdAt.toISOString(),
  };
}

function presentReport(r: SafeguardingReport) {
  const amount = (v: bigint | null) => (v === null ? null : formatAmount(v, r.currency));
  return {
    object: 'safeguarding_report',
    id: r.id,
    currency: r.currency,
    date: r.date,
    status: r.status,
    customer_money: formatAmount(r.customerMoneyMinor, r.currency),
    trust_balance: amount(r.trustBalanceMinor),
    difference: amount(r.differenceMinor),
    trust_balances: r.trustBalances.map((b) => ({
      trust_account: b.trustAccountId,
      balance: b.balanceId,
      closing_balance: amount(b.closingBalanceMinor),
    })),
    ledger_trust_balance: amount(r.ledgerTrustBalanceMinor),
    ledger_difference: amount(r.ledgerDifferenceMinor),
    exception: r.exceptionId,
    mismatch_exception: r.mismatchExceptionId,
    as_of: r.asOf.toISOString(),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

export function safeguardingRoutes(app: FastifyInstance, deps: Deps): void {
  const accountParams = idParamsSchema(ID_PREFIXES.trustAccount, 'Trust account id.');

  app.post<{ Body: CreateTrustAccountInput }>(
    '/v1/trust-accounts',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'createTrustAccount',
        summary: 'Configure a trust account',
        description:
          'Names an account holding the organization’s customer money in one currency: a bank account, or for USDC and USDT a custodian’s wallet (`type`, which follows from the currency when left out; another is a 400 naming `type`). From `active_from` (today, UTC, by default) its closing balance counts in the daily safeguarding check, which covers the organization from its first trust account on. An active account with the same bank and reference is a 409 `trust_account_exists`. Recorded as evidence (`trust_account.update`).',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          required: ['currency', 'bank', 'account_reference'],
          additionalProperties: false,
          properties: {
            currency: currencySchema,
            type: {
              ...trustAccountTypeSchema,
              description: `${trustAccountTypeSchema.description} Follows from the currency when left out.`,
            },
            bank: {
              type: 'string',
              minLength: 1,
              maxLength: TRUST_ACCOUNT_FIELD_LENGTH_MAX,
              description: 'The bank holding it (for a `custody_wallet`, the custodian).',
            },
            account_reference: {
              type: 'string',
              minLength: 1,
              maxLength: TRUST_ACCOUNT_FIELD_LENGTH_MAX,
              description: 'The account’s number or reference at the bank.',
            },
            active_from: dateSchema('The first day its closing balance counts; today (UTC) when left out.'),
          },
        },
        response: {
          201: { description: 'The trust account.', headers: idempotentWriteHeaders, $ref: 'TrustAccount#' },
          202: pendingChangeResponse,
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) =>
        governedWrite(
          tx,
          deps,
          organizationId,
          request,
          { kind: 'trust_account', action: 'create', targetId: null, payload: request.body },
          async () => ({
            status: 201,
            body: presentTrustAccount(
              await createTrustAccount(tx, deps, organizationId, request.body, requestActor(request)),
            ),
          }),
        ),
      ),
  );

  app.get<{
    Querystring: ListQuery & { currency?: Currency; status?: TrustAccountStatus; type?: TrustAccountType };
  }>(
    '/v1/trust-accounts',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'listTrustAccounts',
        summary: 'List trust accounts',
        description: 'Newest first, active and closed.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.trustAccount, {
          currency: {
            type: 'string',
            enum: SUPPORTED_CURRENCIES,
            description: 'Only accounts in this currency.',
          },
          status: {
            type: 'string',
            enum: TRUST_ACCOUNT_STATUSES,
            description: 'Only accounts in this status.',
          },
          type: { type: 'string', enum: TRUST_ACCOUNT_TYPES, description: 'Only accounts of this type.' },
        }),
        response: {
          200: listEnvelopeSchema('TrustAccount', 'A page of trust accounts.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) =>
      presentList(
        await listOrganizationTrustAccounts(deps, principalOf(request).organizationId, {
          ...pageRequestOf(request.query),
          currency: request.query.currency,
          status: request.query.status,
          type: request.query.type,
        }),
        presentTrustAccount,
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/trust-accounts/:id',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'getTrustAccount',
        summary: 'Retrieve a trust account',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: accountParams,
        response: {
          200: { description: 'The trust account.', $ref: 'TrustAccount#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentTrustAccount(
        await getTrustAccount(deps, principalOf(request).organizationId, request.params.id),
      ),
  );

  app.patch<{ Params: { id: string }; Body: { status: 'closed' } }>(
    '/v1/trust-accounts/:id',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'updateTrustAccount',
        summary: 'Close a trust account',
        description:
          '`status: closed` closes it today (UTC): from today its balance no longer counts; the days before still need theirs. A closed account is a 409 `invalid_state_transition`. Recorded as evidence (`trust_account.update`).',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: accountParams,
        body: {
          type: 'object',
          required: ['status'],
          additionalProperties: false,
          properties: { status: { type: 'string', enum: ['closed'] } },
        },
        response: {
          200: { description: 'The trust account.', headers: idempotentWriteHeaders, $ref: 'TrustAccount#' },
          202: pendingChangeResponse,
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) =>
        governedWrite(
          tx,
          deps,
          organizationId,
          request,
          { kind: 'trust_account', action: 'close', targetId: request.params.id, payload: request.body },
          async () => ({
            status: 200,
            body: presentTrustAccount(
              await closeTrustAccountFor(tx, deps, organizationId, request.params.id, requestActor(request)),
            ),
          }),
        ),
      ),
  );

  app.post<{ Body: ReportBalanceInput }>(
    '/v1/safeguarding/balances',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'reportSafeguardingBalance',
        summary: 'Report a trust account’s closing balance',
        description:
          'The closing balance of a trust account for a day (today, UTC, or earlier, within the days the account counts), as its bank statement reports it, in the account’s currency. One figure per account and day: the same figure again is a 200 with the recorded one; a different one is a 409 `safeguarding_balance_conflict`, unless it names the figure it corrects in `replaces`, with a `note`, and then supersedes it (201). A day already checked is judged again on the new figure. Recorded as evidence (`safeguarding.balance`).',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          required: ['trust_account', 'date', 'closing_balance'],
          additionalProperties: false,
          properties: {
            trust_account: idSchema(ID_PREFIXES.trustAccount, 'The trust account.'),
            date: dateSchema('The statement’s day.'),
            closing_balance: {
              type: 'string',
              maxLength: 40,
              description:
                'The closing balance, a decimal string at the currency’s precision (negative when overdrawn).',
              examples: ['1500.00'],
            },
            replaces: idSchema(
              ID_PREFIXES.safeguardingBalance,
              'The current figure this one corrects (see its 409); needs a `note`.',
            ),
            note: {
              type: 'string',
              minLength: 1,
              maxLength: SAFEGUARDING_NOTE_LENGTH_MAX,
              description: 'Why the figure is corrected.',
            },
          },
        },
        response: {
          200: {
            description: 'The same figure was reported before: the recorded one.',
            headers: idempotentWriteHeaders,
            $ref: 'SafeguardingBalance#',
          },
          201: {
            description: 'The closing balance, recorded.',
            headers: idempotentWriteHeaders,
            $ref: 'SafeguardingBalance#',
          },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => {
        const { balance, created } = await reportSafeguardingBalance(
          tx,
          deps,
          organizationId,
          request.body,
          requestActor(request),
          actorIdOf(principalOf(request)),
        );
        return { status: created ? 201 : 200, body: presentBalance(balance) };
      }),
  );

  app.get<{ Querystring: ListQuery & { trust_account?: string } }>(
    '/v1/safeguarding/balances',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'listSafeguardingBalances',
        summary: 'List reported closing balances',
        description: 'Newest first, current and superseded.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.safeguardingBalance, {
          trust_account: idSchema(ID_PREFIXES.trustAccount, 'Only the balances of this trust account.'),
        }),
        response: {
          200: listEnvelopeSchema('SafeguardingBalance', 'A page of closing balances.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) =>
      presentList(
        await listSafeguardingBalances(deps, principalOf(request).organizationId, {
          ...pageRequestOf(request.query),
          trustAccountId: request.query.trust_account,
        }),
        presentBalance,
      ),
  );

  app.get<{
    Querystring: ListQuery & {
      currency?: Currency;
      status?: SafeguardingReportStatus;
      'date[gte]'?: string;
      'date[lte]'?: string;
    };
  }>(
    '/v1/safeguarding/reports',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'listSafeguardingReports',
        summary: 'List daily safeguarding reports',
        description: `Newest first: a report per currency and day, written an hour after the day ends (UTC) for each of the last ${SAFEGUARDING_LOOKBACK_DAYS} days, with both figures and their difference.`,
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.safeguardingReport, {
          currency: {
            type: 'string',
            enum: SUPPORTED_CURRENCIES,
            description: 'Only reports of this currency.',
          },
          status: {
            type: 'string',
            enum: SAFEGUARDING_REPORT_STATUSES,
            description: 'Only reports with this verdict.',
          },
          'date[gte]': dateSchema('Only days on or after this one.'),
          'date[lte]': dateSchema('Only days on or before this one.'),
        }),
        response: {
          200: listEnvelopeSchema('SafeguardingReport', 'A page of reports.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) =>
      presentList(
        await listSafeguardingReports(deps, principalOf(request).organizationId, {
          ...pageRequestOf(request.query),
          currency: request.query.currency,
          status: request.query.status,
          dateGte: request.query['date[gte]'],
          dateLte: request.query['date[lte]'],
        }),
        presentReport,
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/safeguarding/reports/:id',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'getSafeguardingReport',
        summary: 'Retrieve a safeguarding report',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: idParamsSchema(ID_PREFIXES.safeguardingReport, 'Report id.'),
        response: {
          200: { description: 'The report.', $ref: 'SafeguardingReport#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentReport(
        await getSafeguardingReport(deps, principalOf(request).organizationId, request.params.id),
      ),
  );
}
