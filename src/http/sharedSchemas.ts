/**
 * The response schemas of the core's resources (problems, events, the ledger's entries and accounts),
 * registered by $id so routes share them and the OpenAPI document names them as components.
 */
import { eventSchema } from './eventEnvelopeSchemas.ts';
import { journalEntrySchema, ledgerAccountSchema } from './ledgerSchemas.ts';
import { problemSchema } from './schemas.ts';

export const SHARED_SCHEMAS = [problemSchema, eventSchema, journalEntrySchema, ledgerAccountSchema];
