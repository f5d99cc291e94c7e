/**
 * Every event type's `data`, as JSON Schema in the snake_case spelling, and the camelCase spelling derived
 * from it by the same rule that renders camelCase payloads (`toCamelCase`: every field name but the keys
 * of `metadata`). The OpenAPI document's `webhooks` and the SDK's event types are generated from here, and
 * test/eventPayloads.test.ts checks rendered events against it, so the three cannot drift apart.
 */
import {
  AML_ALERT_EVENT_TYPES,
  EVENT_TYPES,
  type EventType,
  TRANSFER_EVENT_TYPES,
} from '../domain/events.ts';
import { ID_PREFIXES } from '../domain/ids.ts';
import { LAUNCH_PRODUCTS } from '../domain/organizationProfile.ts';
import { PAYLOAD_VERSIONS, PRODUCT_NAME_BEFORE_FAMILIES } from '../domain/payloadVersions.ts';
import { RAILS } from '../domain/transfers.ts';
import { toCamelCase } from '../domain/webhooks.ts';
import {
  savingsAccountSchema,
  savingsNoticeSchema,
  savingsWithdrawalSchema,
} from '../modules/savings/index.ts';
import {
  amountSchema,
  currencySchema,
  DOCUMENTED_AS,
  eventSchema,
  idSchema,
  metadataSchema,
  nullableTimestampSchema,
  timestampSchema,
  transferEventDataSchema,
} from './schemas.ts';

type Schema = Record<string, unknown>;

const text = { type: 'string' } as const;
const nullableText = { type: ['string', 'null'] } as const;
const integer = { type: 'integer' } as const;
const nullableInteger = { type: ['integer', 'null'] } as const;
const amount = amountSchema('Decimal string at the currency exponent.');
const nullableAmount = { ...amount, type: ['string', 'null'] };

/** An object whose every listed field is present (null where it has no value). */
function record(description: string, properties: Record<string, unknown>): Schema {
  return { type: 'object', description, required: Object.keys(properties), properties };
}

/** A route's response schema, inlined as an event's data: the same fields, without its component name. */
function inlined(schema: { $id: string }): Schema {
  const { $id: _name, ...rest } = schema;
  return rest;
}

const walletData = record('The wallet’s status as it changed; balances are not part of it.', {
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
const amlAlertData: Schema = {
  ...record('The alert as it stands.', amlAlertFields),
  // Absent in payload versions before 2026-11-26.
  required: Object.keys(amlAlertFields).filter((name) => name !== 'conversion_quote_id'),
};

const paymentBatchData = record('The batch as it stands.', {
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

const collectionData = record('The collection as it stands.', {
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

const depositData = record('The deposit as the chain reported it.', {
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

const conversionData = record('The conversion made.', {
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

const loanData = record('The loan as it stands.', {
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

const approvalData = record('The approval as it stands (docs/APPROVALS.md).', {
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

const exportData = record('The export job.', {
  export_id: text,
  type: text,
  format: text,
  status: text,
  rows: nullableInteger,
  bytes: nullableInteger,
  sha256: nullableText,
  expires_at: nullableTimestampSchema,
});

const exceptionData = record('The reconciliation exception.', {
  exception_id: text,
  kind: text,
  status: text,
  transfer_id: nullableText,
  statement_id: nullableText,
  line: {},
  resolution: {},
});

const railPartnerData = (paused: boolean) =>
  record(paused ? 'The partner whose calls are held.' : 'The partner answering again.', {
    rail_partner_id: text,
    partner: text,
    rail: { type: 'string', enum: RAILS },
    network: nullableText,
    ...(paused ? { paused_for_ms: integer } : {}),
  });

const savingsInterestData = record('A month’s interest capitalised to a savings account.', {
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

function camelKey(key: string): string {
  return Object.keys(toCamelCase({ [key]: null }) as object)[0] ?? key;
}

/**
 * A snake_case schema in the camelCase spelling: property names and `required` renamed by the payloads'
 * own rule; `metadata`'s keys are the caller's and stay as they are. A node documented as a component
 * (a transfer's destination) is inlined, since the component spells its fields in snake_case.
 */
export function camelCaseSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(camelCaseSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const node = schema as Schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === DOCUMENTED_AS) continue;
    if (key === 'properties' && value !== null && typeof value === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, property]) => [
          camelKey(name),
          name === 'metadata' ? property : camelCaseSchema(property),
        ]),
      );
    } else if (key === 'required' && Array.isArray(value)) {
      out.required = value.map((name) => camelKey(String(name)));
    } else {
      out[key] = camelCaseSchema(value);
    }
  }
  return out;
}

/** Event type `a.b_c` as a component name: `ABCEvent`. */
export function eventComponentName(type: string): string {
  return `${type
    .split(/[._]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('')}Event`;
}

/** The envelope of one event type in the snake_case spelling; its `data` is that type's. */
export function eventEnvelopeSchema(type: EventType): Schema {
  return {
    type: 'object',
    description: `A \`${type}\` event (snake_case spelling).`,
    required: ['id', 'object', 'type', 'created_at', 'environment', 'product', 'api_version', 'data'],
    properties: {
      id: idSchema(ID_PREFIXES.event, 'Event id: deduplicate on it.'),
      object: { type: 'string', enum: ['event'] },
      type: { type: 'string', enum: [type] },
      created_at: { ...timestampSchema, description: 'When the change happened (UTC).' },
      environment: { type: 'string', enum: ['sandbox', 'pilot', 'production'] },
      product: {
        type: 'string',
        enum: [...LAUNCH_PRODUCTS, PRODUCT_NAME_BEFORE_FAMILIES],
        description: `The product family the resource belongs to; \`${PRODUCT_NAME_BEFORE_FAMILIES}\` in payload versions before 2026-12-06.`,
      },
      api_version: {
        type: 'string',
        enum: PAYLOAD_VERSIONS,
        description: 'The payload version the event is rendered in: the subscription’s pinned version.',
      },
      data: EVENT_DATA_SCHEMAS[type],
    },
  };
}

/** Every event type's envelope in both spellings, keyed by component name (`…Event`, `…EventCamel`). */
export function eventEnvelopeComponents(): Record<string, unknown> {
  return Object.fromEntries(
    EVENT_TYPES.flatMap((type) => {
      const snake = eventEnvelopeSchema(type);
      const camel = camelCaseSchema({ ...snake, description: `A \`${type}\` event (camelCase spelling).` });
      return [
        [eventComponentName(type), snake],
        [`${eventComponentName(type)}Camel`, camel],
      ];
    }),
  );
}

/** The request headers of every delivery, as the sender sets them (src/modules/webhooks/workers/httpSender.ts). */
const DELIVERY_HEADERS = [
  {
    name: 'Service-Signature',
    in: 'header',
    required: true,
    description:
      '`t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>`, one `v1` per live secret (Stripe-compatible). Verify it over the raw bytes before parsing.',
    schema: { type: 'string', pattern: '^t=\\d+(,v1=[0-9a-f]{64})+$' },
  },
  {
    name: 'Service-Event-Id',
    in: 'header',
    required: true,
    description: 'The event’s `id`: deduplicate on it.',
    schema: idSchema(ID_PREFIXES.event, 'Event id.'),
  },
];

/**
 * The OpenAPI 3.1 `webhooks` object: one POST per event type, its body the event in either spelling (the
 * subscription's `payload_format`) and in the subscription's payload version.
 */
export function webhooksDocument(): Record<string, unknown> {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => {
      const name = eventComponentName(type);
      return [
        type,
        {
          post: {
            operationId: `${name.charAt(0).toLowerCase()}${name.slice(1)}Webhook`,
            summary: `${type} delivered`,
            description: `Sent to each subscription that wants \`${type}\`, signed, at least once and in no guaranteed order (docs/WEBHOOKS.md). The body is \`${name}\` for a \`snake_case\` subscription and \`${name}Camel\` for a \`camel_case\` one.`,
            tags: ['Webhooks'],
            // Signed with the subscription's secret (Service-Signature), not an API key.
            security: [],
            parameters: DELIVERY_HEADERS,
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: {
                    oneOf: [
                      { $ref: `#/components/schemas/${name}` },
                      { $ref: `#/components/schemas/${name}Camel` },
                    ],
                  },
                },
              },
            },
            responses: {
              '200': { description: 'Stored (or already stored): any 2xx counts as delivered.' },
              default: {
                description:
                  'Anything else, or no answer within the time-out, is retried on the schedule; `Retry-After` is honoured between 1 s and 1 h. A 410 disables the subscription at once (`endpoint_gone`).',
              },
            },
          },
        },
      ];
    }),
  );
}

/** `GET /v1/events` with `payload_format=camel_case`: the envelope in the camelCase spelling. */
export const eventCamelSchema = {
  ...(camelCaseSchema(eventSchema) as Schema),
  $id: 'EventCamel',
  description: 'An event in the camelCase spelling (`payload_format=camel_case`).',
  properties: {
    ...(camelCaseSchema(eventSchema) as { properties: Schema }).properties,
    data: {
      type: 'object',
      additionalProperties: true,
      description: 'The resource the event is about, in camelCase: the `webhooks` give each type’s shape.',
    },
  },
};
