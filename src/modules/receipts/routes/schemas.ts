/** The receipt of a settled transfer, as JSON. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { TRANSFER_STATUSES } from '../../../domain/transfers.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  currencySchema,
  decimalStringSchema,
  idSchema,
  nullableStringSchema,
  timestampSchema,
  transferRailSchema,
} from '../../../http/schemas.ts';

export const receiptSchema = apiObjectSchema(
  'Receipt',
  'receipt',
  'A receipt of a settled transfer, with the journal entry that made it final and a verification code anyone can check.',
  {
    code: {
      type: 'string',
      description: 'The verification code: `MKR-` and five groups of four characters.',
    },
    organization: { type: 'string', description: 'The paying organization’s name.' },
    transfer: idSchema(ID_PREFIXES.transfer, 'The transfer.'),
    amount: decimalStringSchema('Decimal string at the currency exponent.'),
    fee: {
      type: 'string',
      description: 'The fee the sender paid on top of the amount (`0.00` when none).',
    },
    total: decimalStringSchema('Amount + fee: what the paying wallet was debited.'),
    currency: currencySchema,
    rail: transferRailSchema,
    rail_reference: nullableStringSchema('The partner’s reference for the payout.'),
    journal_entry: idSchema(ID_PREFIXES.journalEntry, 'The entry that made the transfer final.'),
    source: nullableStringSchema('The paying wallet; masked (its last six characters) by the public check.'),
    destination: { type: 'string', description: 'The destination, masked (e.g. `mpesa +254••••••00`).' },
    status: {
      type: 'string',
      enum: TRANSFER_STATUSES,
      description: 'The transfer’s status now: `settled`, or `returned` if it was sent back since.',
    },
    settled_at: { type: ['string', 'null'], format: 'date-time' },
    issued_at: timestampSchema,
  },
);
