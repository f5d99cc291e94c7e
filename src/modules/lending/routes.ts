/**
 * Lending routes: loan products, and loans (application, disbursement, repayments, write-off). The
 * schedule, the arrears and every amount are computed in src/modules/lending/domain.ts; money moves through the
 * posting module (src/modules/lending/useCases.ts).
 */
import type { FastifyInstance } from 'fastify';
import { actorIdOf } from '../../app/apiKeys.ts';
import type { Deps } from '../../app/deps.ts';
import { apiKeyActor } from '../../app/evidence.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { numberSourceOf } from '../../domain/jsonNumbers.ts';
import { type Currency, formatAmount, SUPPORTED_CURRENCIES } from '../../domain/money.ts';
import { BEARER_SECURITY, principalOf } from '../../http/auth.ts';
import { type ListQuery, pageRequestOf, presentList } from '../../http/presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../../http/problems.ts';
import {
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  idSchema,
  listEnvelopeSchema,
  listQuerySchema,
  nullableTimestampSchema,
  timestampSchema,
} from '../../http/schemas.ts';
import { sendWrite } from '../../http/writes.ts';
import { arrearsOn, instalmentUnpaid, outstandingTotal } from './domain/balances.ts';
import {
  ARREARS_BUCKET_NAMES,
  ARREARS_BUCKETS,
  LOAN_AMORTISATIONS,
  LOAN_FEE_BPS_MAX,
  LOAN_PRODUCT_NAME_CHARS_MAX,
  LOAN_RATE_BPS_MAX,
  LOAN_REPAYMENT_SOURCES,
  LOAN_STATUSES,
  LOAN_TERM_MONTHS_MAX,
  LOAN_WRITE_OFF_REASON_CHARS_MAX,
  type LoanProduct,
  type LoanRepayment,
  type LoanStatus,
} from './domain/loans.ts';
import {
  applyForLoan,
  cancelLoan,
  decideLoanApplication,
  type LoanApplicationInput,
} from './useCases/applications.ts';
import { disburseLoan } from './useCases/disbursement.ts';
import { getLoan, type LoanView, listLoanRepayments, listOrganizationLoans } from './useCases/loans.ts';
import {
  createLoanProduct,
  getLoanProduct,
  type LoanProductInput,
  listOrganizationLoanProducts,
} from './useCases/products.ts';
import { repayLoan } from './useCases/repayments.ts';
import { writeOffLoan } from './useCases/writeOff.ts';

const TAGS = ['Lending'];
const amountField = (description: string) => ({ type: 'string', description }) as const;
const dayField = (description: string) => ({ type: 'string', format: 'date', description }) as const;
const nullableDay = (description: string) =>
  ({ type: ['string', 'null'], format: 'date', description }) as const;
const bps = (description: string, max: number) =>
  ({ type: 'integer', minimum: 0, maximum: max, description }) as const;

const termsProperties = {
  interest_rate_bps: bps(
    'Nominal annual interest rate in basis points (2400 = 24 % a year); a month’s rate is a twelfth of it.',
    LOAN_RATE_BPS_MAX,
  ),
  term_months: {
    type: 'integer',
    minimum: 1,
    maximum: LOAN_TERM_MONTHS_MAX,
    description: 'Instalments, one a month, the first a month after disbursement.',
  },
  amortisation: {
    type: 'string',
    enum: LOAN_AMORTISATIONS,
    description:
      '`flat`: interest on the original principal for the whole term, spread evenly; `declining_balance`: interest on the balance each month, level instalments (annuity).',
  },
  origination_fee_bps: bps(
    'Charged once, in basis points of the principal (rounded half up), due with the first instalment.',
    LOAN_FEE_BPS_MAX,
  ),
  grace_period_months: {
    type: 'integer',
    minimum: 0,
    description: 'The first instalments that pay interest only; fewer than `term_months`.',
  },
  penalty_rate_bps: bps(
    'Annual rate in basis points on overdue principal and interest, accrued each day it is overdue (actual/365).',
    LOAN_RATE_BPS_MAX,
  ),
} as const;

export const loanProductSchema = {
  $id: 'LoanProduct',
  type: 'object',
  description:
    'What an organization lends on. A product never changes; loans keep the terms they were made with.',
  required: [
    'object',
    'id',
    'name',
    'currency',
    ...Object.keys(termsProperties),
    'min_principal',
    'max_principal',
    'created_at',
  ],
  properties: {
    object: { type: 'string', enum: ['loan_product'] },
    id: idSchema(ID_PREFIXES.loanProduct, 'Loan product id.'),
    name: { type: 'string' },
    currency: { type: 'string', enum: SUPPORTED_CURRENCIES },
    ...termsProperties,
    min_principal: amountField('The smallest principal lent.'),
    max_principal: amountField('The largest principal lent.'),
    created_at: timestampSchema,
  },
} as const;

const moneyParts = (what: string) => ({
  type: 'object',
  required: ['penalty', 'fee', 'interest', 'principal'],
  properties: {
    penalty: amountField(`Penalty ${what}.`),
    fee: amountField(`Fees ${what}.`),
    interest: amountField(`Interest ${what}.`),
    principal: amountField(`Principal ${what}.`),
  },
});

export const loanSchema = {
  $id: 'Loan',
  type: 'object',
  description: `A loan from application to its end. \`pending_approval\` while its approval waits; \`approved\` until disbursed; \`rejected\` by the policy or its approval; \`canceled\` when withdrawn before disbursement; \`active\` once disbursed; \`paid_off\` or \`written_off\` at its end. Days are the organization’s (its test clock in the sandbox). Arrears buckets by days past due: ${ARREARS_BUCKETS.map((b) => `\`${b.name}\` from ${b.fromDays}`).join(', ')}.`,
  required: [
    'object',
    'id',
    'product',
    'customer',
    'wallet',
    'currency',
    'principal',
    'terms',
    'status',
    'status_reason',
    'decision',
    'approval',
    'disbursed_at',
    'disbursed_on',
    'processed_through',
    'outstanding',
    'paid',
    'arrears',
    'next_due_date',
    'schedule',
    'written_off',
    'write_off_reason',
    'created_at',
    'updated_at',
    'closed_at',
  ],
  properties: {
    object: { type: 'string', enum: ['loan'] },
    id: idSchema(ID_PREFIXES.loan, 'Loan id.'),
    product: idSchema(ID_PREFIXES.loanProduct, 'The product it was lent on.'),
    customer: idSchema(ID_PREFIXES.customer, 'The borrower.'),
    wallet: idSchema(ID_PREFIXES.wallet, 'The borrower’s wallet: disbursed to, repaid from.'),
    currency: { type: 'string', enum: SUPPORTED_CURRENCIES },
    principal: amountField('Lent.'),
    terms: {
      type: 'object',
      description: 'The product’s terms as they were when the loan was made.',
      required: Object.keys(termsProperties),
      properties: termsProperties,
    },
    status: { type: 'string', enum: LOAN_STATUSES },
    status_reason: {
      type: ['string', 'null'],
      description:
        '`policy_denied`, `approval_rejected`, `approval_expired`, `canceled`, `written_off`, or null.',
    },
    decision: {
      type: 'object',
      description: 'The policy’s decision on the application: the version and rule that decided.',
      required: ['decision', 'policy_version', 'rule'],
      properties: {
        decision: { type: 'string', enum: ['allow', 'deny', 'require_approval'] },
        policy_version: { type: 'integer' },
        rule: { type: 'string' },
      },
    },
    approval: { type: ['string', 'null'], description: 'The approval it waited for, if any.' },
    disbursed_at: nullableTimestampSchema,
    disbursed_on: nullableDay(
      'The organization’s day it was disbursed; instalments fall due monthly from it.',
    ),
    processed_through: nullableDay('The last day whose collection, arrears and penalty are done.'),
    outstanding: {
      ...moneyParts('still owed'),
      required: ['penalty', 'fee', 'interest', 'principal', 'total'],
      properties: { ...moneyParts('still owed').properties, total: amountField('Everything still owed.') },
    },
    paid: moneyParts('paid so far'),
    arrears: {
      type: 'object',
      required: ['days_past_due', 'bucket', 'overdue', 'penalty_accrued'],
      properties: {
        days_past_due: {
          type: 'integer',
          minimum: 0,
          description: 'Days since the oldest unpaid instalment fell due (0 when nothing is overdue).',
        },
        bucket: { type: 'string', enum: ARREARS_BUCKET_NAMES },
        overdue: amountField('Unpaid fee, interest and principal of instalments past their due date.'),
        penalty_accrued: amountField('Penalty accrued in all (paid or not).'),
      },
    },
    next_due_date: nullableDay('The due date of the first instalment not fully paid.'),
    schedule: {
      type: 'array',
      description:
        'The instalments, fixed at disbursement (empty before). Amounts are exact in minor units; rounding is half up and the last instalment absorbs what is left.',
      items: {
        type: 'object',
        required: ['number', 'due_date', 'principal', 'interest', 'fee', 'total', 'paid', 'status'],
        properties: {
          number: { type: 'integer', minimum: 1 },
          due_date: dayField('When it falls due.'),
          principal: amountField('Principal due.'),
          interest: amountField('Interest due.'),
          fee: amountField('Fee due.'),
          total: amountField('All of it.'),
          paid: amountField('Paid of it so far.'),
          status: {
            type: 'string',
            enum: ['paid', 'overdue', 'due', 'upcoming'],
            description:
              '`due` on its due date, `overdue` after it while unpaid, `upcoming` before it (partly paid or not).',
          },
        },
      },
    },
    written_off: { type: ['string', 'null'], description: 'The principal written off, once written off.' },
    write_off_reason: { type: ['string', 'null'] },
    created_at: timestampSchema,
    updated_at: timestampSchema,
    closed_at: nullableTimestampSchema,
  },
} as const;

export const loanRepaymentSchema = {
  $id: 'LoanRepayment',
  type: 'object',
  description:
    'Money taken from the borrower’s wallet for a loan, and how it was allocated: penalty, then each instalment’s fee, interest and principal, oldest first.',
  required: [
    'object',
    'id',
    'loan',
    'source',
    'day',
    'amount',
    'currency',
    'allocation',
    'journal_entry',
    'created_at',
  ],
  properties: {
    object: { type: 'string', enum: ['loan_repayment'] },
    id: idSchema(ID_PREFIXES.loanRepayment, 'Repayment id.'),
    loan: idSchema(ID_PREFIXES.loan, 'The loan.'),
    source: {
      type: 'string',
      enum: LOAN_REPAYMENT_SOURCES,
      description: '`manual` (POST …/repayments) or `automatic` (taken on or after a due date).',
    },
    day: dayField('The organization’s day it was taken on.'),
    amount: amountField('Taken from the wallet.'),
    currency: { type: 'string', enum: SUPPORTED_CURRENCIES },
    allocation: moneyParts('paid by it'),
    journal_entry: { type: 'string', description: 'The ledger entry that moved it.' },
    created_at: timestampSchema,
  },
} as const;

export const LOAN_SCHEMAS = [loanProductSchema, loanSchema, loanRepaymentSchema];

export function presentLoanProduct(p: LoanProduct) {
  return {
    object: 'loan_product',
    id: p.id,
    name: p.name,
    currency: p.currency,
    interest_rate_bps: p.interestRateBps,
    term_months: p.termMonths,
    amortisation: p.amortisation,
    origination_fee_bps: p.originationFeeBps,
    grace_period_months: p.gracePeriodMonths,
    penalty_rate_bps: p.penaltyRateBps,
    min_principal: formatAmount(p.minPrincipalMinor, p.currency),
    max_principal: formatAmount(p.maxPrincipalMinor, p.currency),
    created_at: p.createdAt.toISOString(),
  };
}

export function presentLoan(view: LoanView) {
  const { loan, instalments, today } = view;
  const c: Currency = loan.currency;
  const fmt = (minor: bigint) => formatAmount(minor, c);
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  const sum = (f: (i: (typeof instalments)[number]) => bigint) => instalments.reduce((s, i) => s + f(i), 0n);
  const penaltyOutstanding = loan.penaltyAccruedMinor - loan.penaltyPaidMinor;
  // Arrears as of the last day done (what the day work recorded), so a read never runs ahead of it.
  const arrears = arrearsOn(instalments, loan.processedThrough ?? today);
  const active = loan.status === 'active';
  const next = instalments.find((i) => {
    const u = instalmentUnpaid(i);
    return u.fee + u.interest + u.principal > 0n;
  });
  return {
    object: 'loan',
    id: loan.id,
    product: loan.productId,
    customer: loan.customerId,
    wallet: loan.walletId,
    currency: c,
    principal: fmt(loan.principalMinor),
    terms: {
      interest_rate_bps: loan.interestRateBps,
      term_months: loan.termMonths,
      amortisation: loan.amortisation,
      origination_fee_bps: loan.originationFeeBps,
      grace_period_months: loan.gracePeriodMonths,
      penalty_rate_bps: loan.penaltyRateBps,
    },
    status: loan.status,
    status_reason: loan.statusReason,
    decision: { decision: loan.policyDecision, policy_version: loan.policyVersion, rule: loan.policyRule },
    approval: loan.approvalId,
    disbursed_at: iso(loan.disbursedAt),
    disbursed_on: loan.disbursedOn,
    processed_through: loan.processedThrough,
    outstanding: {
      penalty: fmt(active ? penaltyOutstanding : 0n),
      fee: fmt(active ? sum((i) => i.feeMinor - i.feePaidMinor) : 0n),
      interest: fmt(active ? sum((i) => i.interestMinor - i.interestPaidMinor) : 0n),
      principal: fmt(active ? sum((i) => i.principalMinor - i.principalPaidMinor) : 0n),
      total: fmt(active ? outstandingTotal(penaltyOutstanding, instalments) : 0n),
    },
    paid: {
      penalty: fmt(loan.penaltyPaidMinor),
      fee: fmt(sum((i) => i.feePaidMinor)),
      interest: fmt(sum((i) => i.interestPaidMinor)),
      principal: fmt(sum((i) => i.principalPaidMinor)),
    },
    arrears: {
      days_past_due: active ? loan.daysPastDue : 0,
      bucket: active ? loan.arrearsBucket : 'current',
      overdue: fmt(active ? arrears.overdueMinor : 0n),
      penalty_accrued: fmt(loan.penaltyAccruedMinor),
    },
    next_due_date: active ? (next?.dueDate ?? null) : null,
    schedule: instalments.map((i) => {
      const total = i.principalMinor + i.interestMinor + i.feeMinor;
      const paid = i.principalPaidMinor + i.interestPaidMinor + i.feePaidMinor;
      const status =
        paid === total ? 'paid' : i.dueDate < today ? 'overdue' : i.dueDate === today ? 'due' : 'upcoming';
      return {
        number: i.number,
        due_date: i.dueDate,
        principal: fmt(i.principalMinor),
        interest: fmt(i.interestMinor),
        fee: fmt(i.feeMinor),
        total: fmt(total),
        paid: fmt(paid),
        status,
      };
    }),
    written_off: loan.writtenOffMinor === null ? null : fmt(loan.writtenOffMinor),
    write_off_reason: loan.writeOffReason,
    created_at: loan.createdAt.toISOString(),
    updated_at: loan.updatedAt.toISOString(),
    closed_at: iso(loan.closedAt),
  };
}

export function presentLoanRepayment(r: LoanRepayment, currency: Currency) {
  const fmt = (minor: bigint) => formatAmount(minor, currency);
  return {
    object: 'loan_repayment',
    id: r.id,
    loan: r.loanId,
    source: r.source,
    day: r.day,
    amount: fmt(r.amountMinor),
    currency,
    allocation: {
      penalty: fmt(r.penaltyMinor),
      fee: fmt(r.feeMinor),
      interest: fmt(r.interestMinor),
      principal: fmt(r.principalMinor),
    },
    journal_entry: r.journalEntryId,
    created_at: r.createdAt.toISOString(),
  };
}

const loanIdParams = idParamsSchema(ID_PREFIXES.loan, 'Loan id.');

export function loanRoutes(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: LoanProductInput }>(
    '/v1/loan-products',
    {
      config: { scope: 'admin', product: 'digital_banking' },
      schema: {
        operationId: 'createLoanProduct',
        summary: 'Create a loan product',
        description:
          'A product’s terms: rate, term, amortisation (flat or declining balance), origination fee, grace period, penalty rate, and the principal it lends between. Products never change; a new offer is a new product.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          additionalProperties: false,
          required: [
            'name',
            'currency',
            'interest_rate_bps',
            'term_months',
            'amortisation',
            'min_principal',
            'max_principal',
          ],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: LOAN_PRODUCT_NAME_CHARS_MAX },
            currency: { type: 'string', enum: SUPPORTED_CURRENCIES },
            ...termsProperties,
            min_principal: {
              type: ['string', 'number'],
              description: 'Decimal string in the currency (a JSON number is read exactly).',
            },
            max_principal: {
              type: ['string', 'number'],
              description: 'Decimal string in the currency (a JSON number is read exactly).',
            },
          },
        },
        response: {
          201: { description: 'The product.', headers: idempotentWriteHeaders, $ref: 'LoanProduct#' },
          ...problemResponses(...WRITE_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 201,
        body: presentLoanProduct(
          await createLoanProduct(tx, deps, organizationId, request.body, actorIdOf(principalOf(request)), {
            minPrincipal: numberSourceOf(request.body, 'min_principal'),
            maxPrincipal: numberSourceOf(request.body, 'max_principal'),
          }),
        ),
      })),
  );

  app.get<{ Querystring: ListQuery }>(
    '/v1/loan-products',
    {
      config: { scope: 'read', product: 'digital_banking' },
      schema: {
        operationId: 'listLoanProducts',
        summary: 'List loan products',
        description: 'Newest first.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.loanProduct),
        response: {
          200: listEnvelopeSchema('LoanProduct', 'A page of loan products.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) =>
      presentList(
        await listOrganizationLoanProducts(
          deps,
          principalOf(request).organizationId,
          pageRequestOf(request.query),
        ),
        presentLoanProduct,
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/loan-products/:id',
    {
      config: { scope: 'read', product: 'digital_banking' },
      schema: {
        operationId: 'getLoanProduct',
        summary: 'Retrieve a loan product',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: idParamsSchema(ID_PREFIXES.loanProduct, 'Loan product id.'),
        response: {
          200: { description: 'The product.', $ref: 'LoanProduct#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentLoanProduct(await getLoanProduct(deps, principalOf(request).organizationId, request.params.id)),
  );

  app.post<{ Body: LoanApplicationInput }>(
    '/v1/loans',
    {
      config: { scope: 'write', product: 'digital_banking' },
      schema: {
        operationId: 'applyForLoan',
        summary: 'Apply for a loan',
        description:
          'An application for `principal` on a product, to be lent to `wallet` (its currency the product’s, active). The organization’s policy decides it at once with its `loan` rules: `allow` (the loan is `approved`), `deny` (`rejected`, reason `policy_denied`) or `require_approval` (`pending_approval`, with an approval members vote on). With no `loan` rule, it is approved. Emits `loan.applied`, and `loan.approved` or `loan.rejected` when decided.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['product', 'wallet', 'principal'],
          properties: {
            product: idSchema(ID_PREFIXES.loanProduct, 'The product.'),
            wallet: idSchema(ID_PREFIXES.wallet, 'The borrower’s wallet.'),
            principal: {
              type: ['string', 'number'],
              description: 'To lend, a decimal string in the product’s currency, within its bounds.',
            },
          },
        },
        response: {
          201: { description: 'The loan, decided.', headers: idempotentWriteHeaders, $ref: 'Loan#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) => {
      const principal = principalOf(request);
      return sendWrite<Awaited<ReturnType<typeof decideLoanApplication>>>(
        deps,
        request,
        reply,
        async (tx, organizationId, decided) => ({
          status: 201,
          body: presentLoan(
            await applyForLoan(
              tx,
              deps,
              organizationId,
              decided,
              request.body.wallet,
              actorIdOf(principal),
              apiKeyActor(principal.keyId, principal.member?.id),
            ),
          ),
        }),
        (organizationId) =>
          decideLoanApplication(
            deps,
            organizationId,
            request.body,
            numberSourceOf(request.body, 'principal'),
          ),
      );
    },
  );

  app.get<{ Querystring: ListQuery & { status?: LoanStatus; wallet?: string } }>(
    '/v1/loans',
    {
      config: { scope: 'read', product: 'digital_banking' },
      schema: {
        operationId: 'listLoans',
        summary: 'List loans',
        description: 'Newest first; filter by status or wallet.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.loan, {
          status: { type: 'string', enum: LOAN_STATUSES, description: 'Only loans in this status.' },
          wallet: idSchema(ID_PREFIXES.wallet, 'Only this wallet’s loans.'),
        }),
        response: {
          200: listEnvelopeSchema('Loan', 'A page of loans.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const page = await listOrganizationLoans(deps, principalOf(request).organizationId, {
        ...pageRequestOf(request.query),
        status: request.query.status,
        walletId: request.query.wallet,
      });
      return presentList({ ...page, data: page.data.map((view) => ({ id: view.loan.id, view })) }, (item) =>
        presentLoan(item.view),
      );
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/loans/:id',
    {
      config: { scope: 'read', product: 'digital_banking' },
      schema: {
        operationId: 'getLoan',
        summary: 'Retrieve a loan',
        description: 'With its schedule, what is paid and outstanding, and its arrears.',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: loanIdParams,
        response: {
          200: { description: 'The loan.', $ref: 'Loan#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentLoan(await getLoan(deps, principalOf(request).organizationId, request.params.id)),
  );

  app.post<{ Params: { id: string } }>(
    '/v1/loans/:id/cancel',
    {
      config: { scope: 'write', product: 'digital_banking' },
      schema: {
        operationId: 'cancelLoan',
        summary: 'Cancel a loan application',
        description:
          'Withdraws a loan that is `pending_approval` (its approval is canceled) or `approved` and not yet disbursed; it ends `canceled`. Any other status is a 409 `invalid_state_transition`. Emits `loan.canceled`.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: loanIdParams,
        response: {
          200: { description: 'The loan, canceled.', headers: idempotentWriteHeaders, $ref: 'Loan#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) => {
      const principal = principalOf(request);
      return sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentLoan(
          await cancelLoan(
            tx,
            deps,
            organizationId,
            request.params.id,
            apiKeyActor(principal.keyId, principal.member?.id),
          ),
        ),
      }));
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v1/loans/:id/disburse',
    {
      config: { scope: 'write', product: 'digital_banking' },
      schema: {
        operationId: 'disburseLoan',
        summary: 'Disburse a loan',
        description:
          'Pays an `approved` loan’s principal into the borrower’s wallet (the organization’s loan receivable is debited) and fixes its schedule from the organization’s today. Once: a loan already disbursed, or not approved, is a 409 `invalid_state_transition`; a wallet that cannot receive a 409 `wallet_not_active`. Emits `loan.disbursed`.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: loanIdParams,
        response: {
          200: { description: 'The loan, active.', headers: idempotentWriteHeaders, $ref: 'Loan#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentLoan(await disburseLoan(tx, deps, organizationId, request.params.id)),
      })),
  );

  app.post<{ Params: { id: string }; Body: { amount: string | number } }>(
    '/v1/loans/:id/repayments',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'repayLoan',
        summary: 'Repay a loan',
        description:
          'Takes `amount` from the borrower’s wallet and allocates it: penalty, then each instalment’s fee, interest and principal, oldest first; beyond what is due it pays the next instalments early (interest is not rebated). More than the outstanding total is a 422 `repayment_exceeds_outstanding`; more than the wallet has available a 422 `insufficient_funds`. Emits `loan.repayment_received`, and `loan.paid_off` when nothing is left.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: loanIdParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['amount'],
          properties: {
            amount: {
              type: ['string', 'number'],
              description: 'Decimal string in the loan’s currency (a JSON number is read exactly).',
            },
          },
        },
        response: {
          201: { description: 'The repayment.', headers: idempotentWriteHeaders, $ref: 'LoanRepayment#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => {
        const { repayment, view } = await repayLoan(
          tx,
          deps,
          organizationId,
          request.params.id,
          request.body,
          actorIdOf(principalOf(request)),
          numberSourceOf(request.body, 'amount'),
        );
        return { status: 201, body: presentLoanRepayment(repayment, view.loan.currency) };
      }),
  );

  app.get<{ Params: { id: string }; Querystring: ListQuery }>(
    '/v1/loans/:id/repayments',
    {
      config: { scope: 'read', product: 'digital_banking' },
      schema: {
        operationId: 'listLoanRepayments',
        summary: 'List a loan’s repayments',
        description: 'Manual and automatic, newest first.',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: loanIdParams,
        querystring: listQuerySchema(ID_PREFIXES.loanRepayment),
        response: {
          200: listEnvelopeSchema('LoanRepayment', 'A page of repayments.'),
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) => {
      const { loan, page } = await listLoanRepayments(
        deps,
        principalOf(request).organizationId,
        request.params.id,
        pageRequestOf(request.query),
      );
      return presentList(page, (r) => presentLoanRepayment(r, loan.currency));
    },
  );

  app.post<{ Params: { id: string }; Body: { reason: string } }>(
    '/v1/loans/:id/write-off',
    {
      config: { scope: 'admin', product: 'digital_banking' },
      schema: {
        operationId: 'writeOffLoan',
        summary: 'Write a loan off',
        description:
          'An operator ends an `active` loan as a loss: the principal still owed moves from the loan receivable to loan losses through the ledger; unpaid interest, fees and penalty (never booked as income) are recorded as forgone in the evidence with the reason. Emits `loan.written_off`.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: loanIdParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['reason'],
          properties: {
            reason: { type: 'string', minLength: 1, maxLength: LOAN_WRITE_OFF_REASON_CHARS_MAX },
          },
        },
        response: {
          200: { description: 'The loan, written off.', headers: idempotentWriteHeaders, $ref: 'Loan#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) => {
      const principal = principalOf(request);
      return sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentLoan(
          await writeOffLoan(
            tx,
            deps,
            organizationId,
            request.params.id,
            request.body,
            apiKeyActor(principal.keyId, principal.member?.id),
          ),
        ),
      }));
    },
  );
}
