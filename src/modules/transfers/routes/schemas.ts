/**
 * Transfers on the wire: the transfer, its destination as stored, its create body with the Travel Rule
 * data it may carry, and the data of every `transfer.*` event.
 */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { DESTINATION_TYPES, LEDGER_STATES, RAILS, TRANSFER_STATUSES } from '../../../domain/transfers.ts';
import {
  amountSchema,
  currencySchema,
  DOCUMENTED_AS,
  feeScheduleDecisionSchema,
  idParamsSchema,
  idSchema,
  metadataSchema,
  nullableIdSchema,
  nullableStringSchema,
  nullableTimestampSchema,
  timestampSchema,
  transferRailSchema,
} from '../../../http/schemas.ts';
import { travelRuleRequestSchema } from '../../compliance/index.ts';
import { DESTINATION_FIELD_LENGTH_MAX, DESTINATION_PROPERTIES_MAX } from './destinationSchemas.ts';

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
    'partner_receipt',
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
    rail: transferRailSchema,
    status: { type: 'string', enum: TRANSFER_STATUSES },
    status_reason: nullableStringSchema('Why it is in this status, e.g. `rail_timeout` while processing.'),
    failure_code: nullableStringSchema('Why it failed, e.g. `recipient_not_registered`.'),
    ledger_state: { type: 'string', enum: LEDGER_STATES },
    metadata: metadataSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
    processing_at: nullableTimestampSchema,
    settled_at: nullableTimestampSchema,
    failed_at: nullableTimestampSchema,
    canceled_at: nullableTimestampSchema,
    returned_at: nullableTimestampSchema,
    created_by: nullableStringSchema(
      'Who created it: the member (`mem_…`) the API key acts for, else the API key (`key_…`); null for money that arrived from a rail.',
    ),
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
    rail_reference: nullableStringSchema(
      'The rail’s own reference for the payout once it has one: on the `digital_asset` rail, the transaction hash (`0x` and 64 hexadecimal digits).',
    ),
    partner_receipt: nullableStringSchema(
      'The partner’s receipt for the money moved, once the partner reports it: M-Pesa’s receipt number (the one the customer’s SMS shows) for a payout settled by its result, or the payer’s payment for a paybill credit (C2B). Matched against the partner’s statement in reconciliation. Null until then, and on rails without one.',
    ),
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
    rail: transferRailSchema,
    ledger_state: { type: 'string', enum: LEDGER_STATES },
    amount: amountSchema('Decimal string at the currency exponent.'),
    fee: amountSchema('The fee the sender pays on top of `amount` (`0.00` when none).', '15.00'),
    currency: currencySchema,
    direction: transferDirectionSchema,
    source: nullableIdSchema(ID_PREFIXES.wallet, 'The paying wallet; null for inbound collections.'),
    destination: transferDestinationSchema,
    failure_code: nullableStringSchema('Why it failed, when it did.'),
    metadata: metadataSchema,
  },
} as const;

/** The transfer's response schemas, registered by $id. */
export const TRANSFER_SCHEMAS = [transferSchema, transferEventDataSchema];

/** The path's transfer id. */
export const transferParams = idParamsSchema(ID_PREFIXES.transfer, 'Transfer id.');
