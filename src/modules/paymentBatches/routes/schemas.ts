/** JSON Schemas of payment batches and their items. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  currencySchema,
  idSchema,
  metadataSchema,
  nullableStringSchema,
  nullableTimestampSchema,
  timestampSchema,
  transferRailSchema,
} from '../../../http/schemas.ts';
import { transferDestinationSchema } from '../../transfers/index.ts';
import { PAYMENT_BATCH_ITEM_STATUSES, PAYMENT_BATCH_ITEMS_MAX, PAYMENT_BATCH_STATUSES } from '../domain.ts';

export const paymentBatchSchema = apiObjectSchema(
  'PaymentBatch',
  'payment_batch',
  'Many payouts from one wallet. `validating` (accepted; the worker authorizes it and holds its total) → `pending_approval` (one approval covers every item) or `processing` (items run in chunks, each an ordinary transfer) → `completed`, `partially_failed` or `failed`; `canceled` at any point before it finishes.',
  {
    id: idSchema(ID_PREFIXES.paymentBatch, 'Payment batch id.'),
    reference: {
      type: 'string',
      description: 'Your reference, unique in the organization: a batch is paid once.',
    },
    status: { type: 'string', enum: PAYMENT_BATCH_STATUSES },
    failure_code: nullableStringSchema(
      'Why a batch failed before running: `insufficient_funds`, `policy_denied`, `approval_rejected`, …',
    ),
    source: idSchema(ID_PREFIXES.wallet, 'The paying wallet.'),
    currency: currencySchema,
    total: { type: 'string', description: 'The sum of the items.' },
    fees: {
      type: 'string',
      description:
        'The sum of the items’ fees, decided by the fee schedule current when the batch was submitted; the batch holds total + fees.',
    },
    reserved: {
      type: 'string',
      description:
        'What the batch still holds on the paying wallet for items to come (their amounts and fees).',
    },
    items: { type: 'integer' },
    succeeded: { type: 'integer', description: 'Items that became transfers.' },
    failed: { type: 'integer', description: 'Items refused when they ran (or when the batch was refused).' },
    canceled: { type: 'integer' },
    authorization: {
      type: ['object', 'null'],
      description: 'The policy’s decision on the batch as a whole.',
      properties: {
        decision: { type: 'string' },
        policy_version: { type: 'integer' },
        rule: { type: 'string' },
      },
    },
    approval: nullableStringSchema('Its approval, when the policy asked for one.'),
    created_by: { type: 'string' },
    metadata: metadataSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
    finished_at: nullableTimestampSchema,
  },
);

export const paymentBatchItemSchema = {
  $id: 'PaymentBatchItem',
  type: 'object',
  required: [
    'object',
    'row',
    'reference',
    'status',
    'destination',
    'rail',
    'amount',
    'fee',
    'transfer',
    'failure_code',
    'failure_detail',
    'metadata',
    'updated_at',
  ],
  properties: {
    object: { type: 'string', enum: ['payment_batch_item'] },
    row: { type: 'integer', description: 'Its 1-based place in the batch (its row in an uploaded CSV).' },
    reference: { type: 'string' },
    status: { type: 'string', enum: PAYMENT_BATCH_ITEM_STATUSES },
    destination: transferDestinationSchema,
    rail: transferRailSchema,
    amount: { type: 'string' },
    fee: {
      type: 'string',
      description:
        'The fee its transfer is charged on top of the amount, decided when the batch was submitted.',
    },
    transfer: nullableStringSchema('The transfer it became; follow it for the payout’s outcome.'),
    failure_code: { type: ['string', 'null'] },
    failure_detail: { type: ['string', 'null'] },
    metadata: metadataSchema,
    updated_at: timestampSchema,
  },
} as const;

export const paymentBatchBodySchema = {
  type: 'object',
  required: ['source', 'currency', 'reference', 'items'],
  additionalProperties: false,
  properties: {
    source: idSchema(ID_PREFIXES.wallet, 'The paying wallet.'),
    currency: { type: 'string', description: 'The paying wallet’s currency.' },
    reference: { type: 'string', minLength: 1, maxLength: 100, description: 'Unique in the organization.' },
    items: {
      type: 'array',
      minItems: 1,
      maxItems: PAYMENT_BATCH_ITEMS_MAX,
      description:
        'Each item a transfer in either request form without `source` and `currency` (the batch’s): `reference` (unique in the batch), `destination` (an object, or a wallet id), `amount`, optional `rail` and `metadata`. Every item is checked first: a faulty one refuses the whole batch (422 `payment_batch_invalid`, each fault with its `row` and `param`).',
      items: { type: 'object' },
    },
    metadata: metadataSchema,
  },
} as const;

export const PAYMENT_BATCH_SCHEMAS = [paymentBatchSchema, paymentBatchItemSchema];
