/** The lending module's wire format: loan products, loans with their schedules and arrears, repayments. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { accessByScope } from '../../../http/routeKit.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  currencyCodeSchema,
  daySchema,
  decimalStringSchema,
  idParamsSchema,
  idSchema,
  nullableDaySchema,
  nullableStringSchema,
  nullableTimestampSchema,
  timestampSchema,
} from '../../../http/schemas.ts';
import {
  ARREARS_BUCKET_NAMES,
  ARREARS_BUCKETS,
  LOAN_AMORTISATIONS,
  LOAN_FEE_BPS_MAX,
  LOAN_RATE_BPS_MAX,
  LOAN_REPAYMENT_SOURCES,
  LOAN_STATUSES,
  LOAN_TERM_MONTHS_MAX,
} from '../domain/loans.ts';

export const TAGS = ['Lending'];
export const ACCESS = accessByScope(TAGS, 'digital_banking');
const bps = (description: string, max: number) =>
  ({ type: 'integer', minimum: 0, maximum: max, description }) as const;

export const termsProperties = {
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

export const loanProductSchema = apiObjectSchema(
  'LoanProduct',
  'loan_product',
  'What an organization lends on. A product never changes; loans keep the terms they were made with.',
  {
    id: idSchema(ID_PREFIXES.loanProduct, 'Loan product id.'),
    name: { type: 'string' },
    currency: currencyCodeSchema,
    ...termsProperties,
    min_principal: decimalStringSchema('The smallest principal lent.'),
    max_principal: decimalStringSchema('The largest principal lent.'),
    created_at: timestampSchema,
  },
);

const moneyParts = (what: string) => ({
  type: 'object',
  required: ['penalty', 'fee', 'interest', 'principal'],
  properties: {
    penalty: decimalStringSchema(`Penalty ${what}.`),
    fee: decimalStringSchema(`Fees ${what}.`),
    interest: decimalStringSchema(`Interest ${what}.`),
    principal: decimalStringSchema(`Principal ${what}.`),
  },
});

export const loanSchema = apiObjectSchema(
  'Loan',
  'loan',
  `A loan from application to its end. \`pending_approval\` while its approval waits; \`approved\` until disbursed; \`rejected\` by the policy or its approval; \`canceled\` when withdrawn before disbursement; \`active\` once disbursed; \`paid_off\` or \`written_off\` at its end. Days are the organization’s (its test clock in the sandbox). Arrears buckets by days past due: ${ARREARS_BUCKETS.map((b) => `\`${b.name}\` from ${b.fromDays}`).join(', ')}.`,
  {
    id: idSchema(ID_PREFIXES.loan, 'Loan id.'),
    product: idSchema(ID_PREFIXES.loanProduct, 'The product it was lent on.'),
    customer: idSchema(ID_PREFIXES.customer, 'The borrower.'),
    wallet: idSchema(ID_PREFIXES.wallet, 'The borrower’s wallet: disbursed to, repaid from.'),
    currency: currencyCodeSchema,
    principal: decimalStringSchema('Lent.'),
    terms: {
      type: 'object',
      description: 'The product’s terms as they were when the loan was made.',
      required: Object.keys(termsProperties),
      properties: termsProperties,
    },
    status: { type: 'string', enum: LOAN_STATUSES },
    status_reason: nullableStringSchema(
      '`policy_denied`, `approval_rejected`, `approval_expired`, `canceled`, `written_off`, or null.',
    ),
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
    approval: nullableStringSchema('The approval it waited for, if any.'),
    disbursed_at: nullableTimestampSchema,
    disbursed_on: nullableDaySchema(
      'The organization’s day it was disbursed; instalments fall due monthly from it.',
    ),
    processed_through: nullableDaySchema('The last day whose collection, arrears and penalty are done.'),
    outstanding: {
      ...moneyParts('still owed'),
      required: ['penalty', 'fee', 'interest', 'principal', 'total'],
      properties: {
        ...moneyParts('still owed').properties,
        total: decimalStringSchema('Everything still owed.'),
      },
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
        overdue: decimalStringSchema(
          'Unpaid fee, interest and principal of instalments past their due date.',
        ),
        penalty_accrued: decimalStringSchema('Penalty accrued in all (paid or not).'),
      },
    },
    next_due_date: nullableDaySchema('The due date of the first instalment not fully paid.'),
    schedule: {
      type: 'array',
      description:
        'The instalments, fixed at disbursement (empty before). Amounts are exact in minor units; rounding is half up and the last instalment absorbs what is left.',
      items: {
        type: 'object',
        required: ['number', 'due_date', 'principal', 'interest', 'fee', 'total', 'paid', 'status'],
        properties: {
          number: { type: 'integer', minimum: 1 },
          due_date: daySchema('When it falls due.'),
          principal: decimalStringSchema('Principal due.'),
          interest: decimalStringSchema('Interest due.'),
          fee: decimalStringSchema('Fee due.'),
          total: decimalStringSchema('All of it.'),
          paid: decimalStringSchema('Paid of it so far.'),
          status: {
            type: 'string',
            enum: ['paid', 'overdue', 'due', 'upcoming'],
            description:
              '`due` on its due date, `overdue` after it while unpaid, `upcoming` before it (partly paid or not).',
          },
        },
      },
    },
    written_off: nullableStringSchema('The principal written off, once written off.'),
    write_off_reason: { type: ['string', 'null'] },
    created_at: timestampSchema,
    updated_at: timestampSchema,
    closed_at: nullableTimestampSchema,
  },
);

export const loanRepaymentSchema = apiObjectSchema(
  'LoanRepayment',
  'loan_repayment',
  'Money taken from the borrower’s wallet for a loan, and how it was allocated: penalty, then each instalment’s fee, interest and principal, oldest first.',
  {
    id: idSchema(ID_PREFIXES.loanRepayment, 'Repayment id.'),
    loan: idSchema(ID_PREFIXES.loan, 'The loan.'),
    source: {
      type: 'string',
      enum: LOAN_REPAYMENT_SOURCES,
      description: '`manual` (POST …/repayments) or `automatic` (taken on or after a due date).',
    },
    day: daySchema('The organization’s day it was taken on.'),
    amount: decimalStringSchema('Taken from the wallet.'),
    currency: currencyCodeSchema,
    allocation: moneyParts('paid by it'),
    journal_entry: { type: 'string', description: 'The ledger entry that moved it.' },
    created_at: timestampSchema,
  },
);

export const LOAN_SCHEMAS = [loanProductSchema, loanSchema, loanRepaymentSchema];

export const loanIdParams = idParamsSchema(ID_PREFIXES.loan, 'Loan id.');
