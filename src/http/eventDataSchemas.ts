/**
 * The `data` shapes events carry, in the snake_case spelling: the wallet, AML alert, payment batch,
 * collection, deposit, conversion, loan, approval, export, reconciliation exception, rail partner and
 * savings interest as their events render them, and the field types they are made of. Which event type
 * carries which is EVENT_DATA_SCHEMAS (eventSchemas.ts).
 */
import { ID_PREFIXES } from '../domain/ids.ts';
import { RAILS } from '../domain/transfers.ts';
import {
  amountSchema,
  currencySchema,
  idSchema,
  nullableTimestampSchema,
  timestampSchema,
} from './schemas.ts';

export type Schema = Record<string, unknown>;

export const text = { type: 'string' } as const;
export const nullableText = { type: ['string', 'null'] } as const;
export const integer = { type: 'integer' } as const;
export const nullableInteger = { type: ['integer', 'null'] } as const;
export const amount = amountSchema('Decimal string at the currency exponent.');
export const nullableAmount = { ...amount, type: ['string', 'null'] };

/** An object whose every listed field is present (null where it has no value). */
export function record(description: string, properties: Record<string, unknown>): Schema {
  return { type: 'object', description, required: Object.keys(properties), properties };
}

export const walletData = record('The wallet’s status as it changed; balances are not part of it.', {
  wallet_id: idSchema(ID_PREFIXES.wallet, 'The wallet.'),
  owner: text,
  currency: currencySchema,
  status: { type: 'string', enum: ['active', 'frozen', 'closed'] },
  status_reason: nullableText,
  status_changed_at: nullableTimestampSchema,
});

const amlAlertFields = {
  alert_id: text,
  status: text,
  rule_id: text,
  rule_type: text,
  action: text,
  transfer_id: { ...nullableText, description: 'Null when a conversion opened the alert.' },
  conversion_quote_id: {
    ...nullableText,
    description: 'The conversion quote that opened it (from payload version 2026-11-26).',
  },
  wallet_id: nullableText,
  customer_id: nullableText,
  disposition: nullableText,
};
export const amlAlertData: Schema = {
  ...record('The alert as it stands.', amlAlertFields),
  // Absent in payload versions before 2026-11-26.
  required: Object.keys(amlAlertFields).filter((name) => name !== 'conversion_quote_id'),
};

export const paymentBatchData = record('The batch as it stands.', {
  payment_batch_id: text,
  reference: nullableText,
  status: text,
  failure_code: nullableText,
  source: text,
  currency: currencySchema,
  total: amount,
  items: integer,
  succeeded: integer,
  failed: integer,
  canceled: integer,
  approval: nullableText,
});

export const collectionData = record('The collection as it stands.', {
  collection_id: text,
  status: text,
  wallet: text,
  amount,
  currency: currencySchema,
  method: text,
  rail: text,
  network: nullableText,
  reference: nullableText,
  failure_code: nullableText,
  transfer: nullableText,
});

export const depositData = record('The deposit as the chain reported it.', {
  deposit_id: text,
  status: text,
  wallet: text,
  amount,
  currency: text,
  network: text,
  address: text,
  tx_hash: text,
  log_index: integer,
  confirmations: integer,
  required_confirmations: integer,
  transfer: nullableText,
});

export const conversionData = record('The conversion made.', {
  conversion_id: text,
  quote: text,
  direction: text,
  from_wallet: text,
  to_wallet: text,
  from_amount: amount,
  from_currency: text,
  to_amount: amount,
  to_currency: text,
  rate: text,
  fee: amount,
});

export const loanData = record('The loan as it stands.', {
  loan_id: text,
  status: text,
  status_reason: nullableText,
  product: text,
  customer: text,
  wallet: text,
  principal: amount,
  currency: currencySchema,
  principal_outstanding: amount,
  total_outstanding: amount,
  days_past_due: integer,
  arrears_bucket: text,
});

export const approvalData = record('The approval as it stands (docs/APPROVALS.md).', {
  approval_id: text,
  status: text,
  resource: record('What it approves.', { type: text, id: text }),
  policy_version: integer,
  rule: text,
  quorum: record('Who must approve.', {
    required: integer,
    roles: { type: 'array', items: text },
    distinct_roles: { type: 'boolean' },
  }),
  votes: {
    type: 'array',
    items: record('One member’s vote.', {
      member: text,
      email: nullableText,
      role: text,
      decision: text,
      comment: nullableText,
      created_at: timestampSchema,
    }),
  },
  initiated_by: nullableText,
  expires_at: timestampSchema,
  decided_at: nullableTimestampSchema,
});

export const exportData = record('The export job.', {
  export_id: text,
  type: text,
  format: text,
  status: text,
  rows: nullableInteger,
  bytes: nullableInteger,
  sha256: nullableText,
  expires_at: nullableTimestampSchema,
});

export const exceptionData = record('The reconciliation exception.', {
  exception_id: text,
  kind: text,
  status: text,
  transfer_id: nullableText,
  statement_id: nullableText,
  line: {},
  resolution: {},
});

export const railPartnerData = (paused: boolean) =>
  record(paused ? 'The partner whose calls are held.' : 'The partner answering again.', {
    rail_partner_id: text,
    partner: text,
    rail: { type: 'string', enum: RAILS },
    network: nullableText,
    ...(paused ? { paused_for_ms: integer } : {}),
  });

export const savingsInterestData = record('A month’s interest capitalised to a savings account.', {
  object: { type: 'string', enum: ['savings_interest_capitalization'] },
  savings_account: text,
  product: text,
  amount,
  currency: currencySchema,
  month: text,
  day: text,
  balance_after: amount,
  interest_paid: amount,
  residual_numerator: text,
  denominator: text,
});
