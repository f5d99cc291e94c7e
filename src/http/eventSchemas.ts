/**
 * Every event type's `data`, as JSON Schema in the snake_case spelling (the shapes are in
 * eventDataSchemas.ts; a module's resource is inlined as its events' data). The camelCase spelling is
 * derived from it (eventEnvelopeSchemas.ts) by the same rule that renders camelCase payloads
 * (`toCamelCase`: every field name but the keys of `metadata`). The OpenAPI document's `webhooks` and the
 * SDK's event types are generated from here, and test/eventPayloads.test.ts checks rendered events against
 * it, so the three cannot drift apart.
 */
import { AML_ALERT_EVENT_TYPES, type EventType, TRANSFER_EVENT_TYPES } from '../domain/events.ts';
import { LAUNCH_PRODUCTS } from '../domain/organizationProfile.ts';
import { RAILS } from '../domain/transfers.ts';
import { transferReversalSchema } from '../modules/railPartners/index.ts';
import {
  savingsAccountSchema,
  savingsNoticeSchema,
  savingsWithdrawalSchema,
} from '../modules/savings/index.ts';
import { transferEventDataSchema } from '../modules/transfers/index.ts';
import {
  amlAlertData,
  amount,
  approvalData,
  collectionData,
  conversionData,
  depositData,
  exceptionData,
  exportData,
  integer,
  loanData,
  nullableAmount,
  nullableInteger,
  nullableText,
  paymentBatchData,
  railPartnerData,
  record,
  type Schema,
  savingsInterestData,
  text,
  walletData,
} from './eventDataSchemas.ts';
import { currencySchema, metadataSchema, nullableTimestampSchema, timestampSchema } from './schemas.ts';

/** A route's response schema, inlined as an event's data: the same fields, without its component name. */
function inlined(schema: { $id: string }): Schema {
  const { $id: _name, ...rest } = schema;
  return rest;
}

/** Each event type's `data` in the snake_case spelling; a type missing here does not compile. */
export const EVENT_DATA_SCHEMAS: Record<EventType, Schema> = {
  ...(Object.fromEntries(TRANSFER_EVENT_TYPES.map((t) => [t, inlined(transferEventDataSchema)])) as Record<
    (typeof TRANSFER_EVENT_TYPES)[number],
    Schema
  >),
  'wallet.frozen': walletData,
  'wallet.unfrozen': walletData,
  'wallet.closed': walletData,
  'wallet.updated': {
    ...walletData,
    description: 'The wallet after a change of its metadata, and which fields changed.',
    required: [...(walletData.required as string[]), 'changed', 'metadata'],
    properties: {
      ...(walletData.properties as Schema),
      changed: { type: 'array', items: { type: 'string', enum: ['metadata'] } },
      metadata: metadataSchema,
    },
  },
  'customer.updated': record('The fields a change touched, and what verification it asks for again.', {
    customer_id: text,
    type: { type: 'string', enum: ['individual', 'business'] },
    changed: { type: 'array', items: text },
    kyc_status: text,
    previous_kyc_status: text,
    verification_required_for: { type: 'array', items: text },
    tier: integer,
  }),
  'customer.verification.updated': record('The verification and the customer’s resulting status.', {
    verification_id: text,
    customer_id: text,
    status: text,
    reason: nullableText,
    kyc_status: text,
    tier: integer,
  }),
  ...(Object.fromEntries(AML_ALERT_EVENT_TYPES.map((t) => [t, amlAlertData])) as Record<
    (typeof AML_ALERT_EVENT_TYPES)[number],
    Schema
  >),
  'payment_batch.created': paymentBatchData,
  'payment_batch.pending_approval': paymentBatchData,
  'payment_batch.processing': paymentBatchData,
  'payment_batch.completed': paymentBatchData,
  'payment_batch.partially_failed': paymentBatchData,
  'payment_batch.failed': paymentBatchData,
  'payment_batch.canceled': paymentBatchData,
  'collection.created': collectionData,
  'collection.processing': collectionData,
  'collection.succeeded': collectionData,
  'collection.failed': collectionData,
  'deposit.detected': depositData,
  'deposit.held_for_review': depositData,
  'deposit.credited': depositData,
  'deposit.rejected': depositData,
  'deposit.reorged': depositData,
  'conversion.completed': conversionData,
  'loan.applied': loanData,
  'loan.approved': loanData,
  'loan.rejected': loanData,
  'loan.canceled': loanData,
  'loan.disbursed': loanData,
  'loan.repayment_received': loanData,
  'loan.overdue': loanData,
  'loan.paid_off': loanData,
  'loan.written_off': loanData,
  'approval.updated': approvalData,
  'policy.updated': record('The policy version that took effect.', {
    version: integer,
    rules: { ...integer, description: 'How many rules it has.' },
    created_by: text,
    approval_id: nullableText,
  }),
  'fee_schedule.updated': record('The fee schedule version stored.', {
    version: integer,
    previous_version: integer,
    rules: { ...integer, description: 'How many rules it has.' },
    created_by: text,
  }),
  'export.ready': exportData,
  'export.failed': exportData,
  'ledger.matched': record('The transfer a statement matched.', {
    transfer_id: text,
    ledger_state: { type: 'string', enum: ['matched'] },
    rail: { type: 'string', enum: RAILS },
    rail_reference: nullableText,
    amount,
    currency: currencySchema,
    status: text,
  }),
  'reconciliation.statement.imported': record('The statement imported and what it matched.', {
    statement_id: text,
    rail: { type: 'string', enum: RAILS },
    from: text,
    to: text,
    lines: integer,
    matched: integer,
    exceptions: integer,
  }),
  'reconciliation.exception.opened': exceptionData,
  'reconciliation.exception.resolved': exceptionData,
  'webhook_subscription.disabled': record('The subscription disabled, and why.', {
    subscription_id: text,
    url: text,
    reason: { type: 'string', enum: ['endpoint_gone', 'failing_too_long'] },
    failing_since: timestampSchema,
  }),
  'rail_partner.paused': railPartnerData(true),
  'rail_partner.resumed': railPartnerData(false),
  'rail_reversal.updated': inlined(transferReversalSchema),
  'safeguarding.shortfall': record('The day’s safeguarding report that found a shortfall.', {
    report_id: text,
    currency: currencySchema,
    date: text,
    status: text,
    customer_money: nullableAmount,
    trust_balance: nullableAmount,
    difference: nullableAmount,
    shortfall: nullableAmount,
    exception_id: nullableText,
    as_of: timestampSchema,
  }),
  'test_clock.advanced': record('The organization’s test clock after the advance.', {
    object: { type: 'string', enum: ['test_clock'] },
    now: timestampSchema,
    today: text,
    offset_ms: integer,
    advances: integer,
    advanced_at: nullableTimestampSchema,
    previous_now: timestampSchema,
  }),
  'safeguarding.sweep.recorded': record('The sweep between a rail float and trust.', {
    sweep_id: text,
    currency: currencySchema,
    rail: { type: 'string', enum: RAILS },
    direction: text,
    amount,
    reference: nullableText,
    value_date: text,
    trust_account: text,
    journal_entry: text,
  }),
  'launch_gate.updated': record('The gate’s new state.', {
    product: { type: 'string', enum: LAUNCH_PRODUCTS },
    gate: text,
    state: text,
    previous_state: nullableText,
    evidence: {},
    evidence_record: nullableText,
    updated_at: timestampSchema,
  }),
  'change.updated': record('The governed change as it stands.', {
    change_id: text,
    kind: text,
    action: text,
    target_id: nullableText,
    status: text,
    proposed_by: nullableText,
    approval_id: nullableText,
    policy_version: nullableInteger,
    rule: nullableText,
    failure: {},
  }),
  'savings.account.opened': inlined(savingsAccountSchema),
  'savings.notice.given': inlined(savingsNoticeSchema),
  'savings.withdrawal.completed': inlined(savingsWithdrawalSchema),
  'savings.interest.capitalized': savingsInterestData,
};
