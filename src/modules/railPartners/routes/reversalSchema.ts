/** The wire format of a payout's reversal through its rail partner (the route's answer and its event's data). */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  amountSchema,
  currencySchema,
  idSchema,
  timestampSchema,
  transferRailSchema,
} from '../../../http/schemas.ts';
import { RAIL_REVERSAL_STATUSES } from '../useCases/reversals.ts';

const nullableText = { type: ['string', 'null'] } as const;

export const transferReversalSchema = apiObjectSchema(
  'TransferReversal',
  'transfer_reversal',
  'A settled payout sent back through the rail partner that paid it: `requested` (recorded, not yet acknowledged by the partner), `sent` (acknowledged; its result is awaited or asked for), `succeeded` (the transfer is `returned`), or `refused` (the transfer stays `settled`; `failure_code` says why).',
  {
    id: idSchema(ID_PREFIXES.railReversal, 'Reversal id.'),
    transfer: idSchema(ID_PREFIXES.transfer, 'The payout reversed.'),
    status: { type: 'string', enum: RAIL_REVERSAL_STATUSES },
    reason: { type: 'string', description: 'Why, as the operator who asked wrote it.' },
    requested_by: { type: 'string', description: 'The member (or the key acting for none) who asked.' },
    partner: { type: 'string' },
    rail: transferRailSchema,
    amount: amountSchema('The payout’s amount, sent back whole.'),
    currency: currencySchema,
    original_transaction_id: { type: 'string', description: 'The partner’s receipt of the payout.' },
    partner_reference: { ...nullableText, description: 'The partner’s id for the reversal request.' },
    partner_transaction_id: { ...nullableText, description: 'The partner’s receipt of the reversal.' },
    failure_code: {
      ...nullableText,
      description:
        'Why the partner refused it: `already_reversed`, `original_transaction_invalid`, `partner_configuration_error`, `insufficient_funds`, `partner_rejected`, …',
    },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
);
