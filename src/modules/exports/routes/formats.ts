/**
 * How each export type is written: JSON lines carry each record's API wire form (the same presenters as the
 * routes), CSV a flat row per record (a ledger entry: a row per posting). Handed to the export worker by the
 * composition root, so the worker writes what the API shows.
 */

import type { Environment } from '../../../domain/access.ts';
import type { EventRecord } from '../../../domain/events.ts';
import type { EvidenceRecord } from '../../../domain/evidence.ts';
import { formatAmount } from '../../../domain/money.ts';
import { feeOf, type Transfer } from '../../../domain/transferRecord.ts';
import { isoOrNull, presentEvent, presentJournalEntry, presentTransfer } from '../../../http/presenters.ts';
import { presentEvidence } from '../../../http/routes/evidence.ts';
import type { JournalEntry, Posting } from '../../ledger/index.ts';
import type { ReconciliationException } from '../../treasury/index.ts';
import { presentException } from '../../treasury/index.ts';
import type { ExportFormatter, ExportFormatters } from '../useCases/sources.ts';

/** The payee's name as the integrator gave it, where the destination has one. */
function destinationName(destination: Transfer['destination']): string | null {
  if (destination.type === 'mobile_money') return destination.name ?? null;
  if (destination.type === 'bank_account') return destination.account_name ?? null;
  return null;
}

/** A CSV column: its header, and its cell in a row (null: an empty cell). */
type Column<Row> = readonly [header: string, cell: (row: Row) => string | null];

/**
 * A type's format: its CSV columns, named once beside their cells, over the rows `rowsOf` makes of a
 * record (one row a record, or one a posting), and its JSON line, the record's API form.
 */
function exportFormat<Item, Row>(
  columns: readonly Column<Row>[],
  rowsOf: (record: Item) => Row[],
  json: (record: Item) => unknown,
): ExportFormatter {
  return {
    csvHeader: columns.map(([header]) => header),
    csvRows: (record) => rowsOf(record as Item).map((row) => columns.map(([, cell]) => cell(row))),
    json: (record) => json(record as Item),
  };
}

/** A record that is its only row. */
const oneRow = <Item>(record: Item): Item[] => [record];

/** A transfer a row, its destination and metadata as JSON. */
const transferFormat = exportFormat<Transfer, Transfer>(
  [
    ['id', (t) => t.id],
    ['created_at', (t) => t.createdAt.toISOString()],
    ['direction', (t) => t.direction],
    ['status', (t) => t.status],
    ['source', (t) => t.sourceWalletId],
    ['destination_type', (t) => t.destination.type],
    ['destination_name', (t) => destinationName(t.destination)],
    ['destination', (t) => JSON.stringify(t.destination)],
    ['amount', (t) => formatAmount(t.amountMinor, t.currency)],
    ['currency', (t) => t.currency],
    ['rail', (t) => t.rail],
    ['rail_reference', (t) => t.railReference],
    ['ledger_state', (t) => t.ledgerState],
    ['failure_code', (t) => t.failureCode],
    ['settled_at', (t) => isoOrNull(t.settledAt)],
    ['created_by', (t) => t.createdBy],
    ['metadata', (t) => JSON.stringify(t.metadata)],
    ['fee', (t) => formatAmount(feeOf(t), t.currency)],
  ],
  oneRow,
  presentTransfer,
);

/** A ledger entry a row per posting. */
const ledgerEntryFormat = exportFormat<JournalEntry, { entry: JournalEntry; posting: Posting }>(
  [
    ['entry', ({ entry }) => entry.id],
    ['created_at', ({ entry }) => entry.createdAt.toISOString()],
    ['kind', ({ entry }) => entry.kind],
    ['transfer', ({ entry }) => entry.transferId],
    ['hold_entry', ({ entry }) => entry.holdEntryId],
    ['account', ({ posting }) => posting.accountId],
    ['side', ({ posting }) => posting.side],
    ['phase', ({ posting }) => posting.phase],
    ['amount', ({ posting }) => formatAmount(posting.amountMinor, posting.currency)],
    ['currency', ({ posting }) => posting.currency],
  ],
  (entry) => entry.postings.map((posting) => ({ entry, posting })),
  presentJournalEntry,
);

/** An event a row, its data as JSON. */
function eventFormat(environment: Environment): ExportFormatter {
  return exportFormat<EventRecord, EventRecord>(
    [
      ['id', (e) => e.id],
      ['created_at', (e) => e.createdAt.toISOString()],
      ['type', (e) => e.type],
      ['resource', (e) => e.resourceId],
      ['data', (e) => JSON.stringify(e.data)],
    ],
    oneRow,
    (e) => presentEvent(e, environment),
  );
}

/** An evidence record a row. */
const evidenceFormat = exportFormat<EvidenceRecord, EvidenceRecord>(
  [
    ['id', (r) => r.id],
    ['sequence', (r) => String(r.sequence)],
    ['created_at', (r) => r.createdAt.toISOString()],
    ['kind', (r) => r.kind],
    ['transfer', (r) => r.transferId],
    ['customer', (r) => r.customerId],
    ['wallet', (r) => r.walletId],
    ['previous_hash', (r) => r.previousHash],
    ['hash', (r) => r.hash],
    ['payload', (r) => r.payload],
  ],
  oneRow,
  presentEvidence,
);

/** A reconciliation exception a row, its details as JSON. */
const reconciliationExceptionFormat = exportFormat<ReconciliationException, ReconciliationException>(
  [
    ['id', (e) => e.id],
    ['created_at', (e) => e.createdAt.toISOString()],
    ['kind', (e) => e.kind],
    ['status', (e) => e.status],
    ['transfer', (e) => e.transferId],
    ['statement', (e) => e.statementId],
    ['line', (e) => (e.line === null ? null : String(e.line))],
    ['details', (e) => JSON.stringify(e.details)],
    ['resolution', (e) => e.resolution],
    ['note', (e) => e.note],
    ['resolved_by', (e) => e.resolvedBy],
    ['journal_entry', (e) => e.journalEntryId],
    ['resolved_at', (e) => isoOrNull(e.resolvedAt)],
  ],
  oneRow,
  presentException,
);

export function exportFormatters(environment: Environment): ExportFormatters {
  return {
    transfers: transferFormat,
    ledger_entries: ledgerEntryFormat,
    events: eventFormat(environment),
    evidence: evidenceFormat,
    reconciliation_exceptions: reconciliationExceptionFormat,
  };
}
