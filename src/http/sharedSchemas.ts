/**
 * The response schemas of the core resources, registered by $id so routes share them and the OpenAPI
 * document names them as components (in this order).
 */

import { customerSchema } from './customerSchemas.ts';
import { eventSchema } from './eventEnvelopeSchemas.ts';
import { journalEntrySchema, ledgerAccountSchema } from './ledgerSchemas.ts';
import { problemSchema } from './schemas.ts';
import { transferEventDataSchema, transferSchema } from './transferSchemas.ts';
import { accountDetailsSchema, balanceSchema, walletSchema } from './walletSchemas.ts';

export const SHARED_SCHEMAS = [
  problemSchema,
  walletSchema,
  accountDetailsSchema,
  balanceSchema,
  customerSchema,
  transferSchema,
  transferEventDataSchema,
  eventSchema,
  journalEntrySchema,
  ledgerAccountSchema,
];
