/**
 * Where each export type's records come from (a table read in id order, EXPORT_PAGE_ROWS rows at a time,
 * within the job's creation range) and how a type's records are written, which the composition root hands
 * in (src/modules/exports/routes/formats.ts).
 */
import type { IdPrefix } from '../../../domain/ids.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { EVENT_COLUMNS, eventFromRow } from '../../../store/repositories/events.ts';
import { EVIDENCE_COLUMNS, evidenceFromRow } from '../../../store/repositories/evidence.ts';
import { type CreatedRange, readAscending } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import { JOURNAL_ENTRY_COLUMNS, withPostings } from '../../ledger/index.ts';
import { TRANSFER_COLUMNS, transferFromRow } from '../../transfers/index.ts';
import { EXCEPTION_COLUMNS, exceptionFromRow } from '../../treasury/index.ts';
import { EXPORT_PAGE_ROWS, type ExportType } from '../domain.ts';

/** How one type's records are written: JSON lines use its wire form; CSV its columns, a row or more each. */
export interface ExportFormatter {
  csvHeader: readonly string[];
  csvRows(record: unknown): (string | null)[][];
  json(record: unknown): unknown;
}

export type ExportFormatters = Record<ExportType, ExportFormatter>;

/** A type's table, its id prefix, and how a page of its records is read. */
export interface ExportSource {
  table: string;
  prefix: IdPrefix;
  read(
    db: Queryable,
    organizationId: string,
    afterId: string | undefined,
    range: CreatedRange,
  ): Promise<{ id: string; record: unknown }[]>;
}

function source(
  table: string,
  prefix: IdPrefix,
  columns: string,
  toRecords: (db: Queryable, rows: Record<string, unknown>[]) => Promise<unknown[]> | unknown[],
): ExportSource {
  return {
    table,
    prefix,
    async read(db, organizationId, afterId, range) {
      const rows = await readAscending(db, {
        table,
        columns,
        prefix,
        organizationId,
        afterId,
        range,
        rowsMax: EXPORT_PAGE_ROWS,
      });
      const records = await toRecords(db, rows);
      return rows.map((row, i) => ({ id: String(row.id), record: records[i] }));
    },
  };
}

/** Where each type's rows come from. */
export const EXPORT_SOURCES: Record<ExportType, ExportSource> = {
  transfers: source('transfers', ID_PREFIXES.transfer, TRANSFER_COLUMNS, (_db, rows) =>
    rows.map(transferFromRow),
  ),
  ledger_entries: source('journal_entries', ID_PREFIXES.journalEntry, JOURNAL_ENTRY_COLUMNS, (db, rows) =>
    withPostings(db, rows),
  ),
  events: source('events', ID_PREFIXES.event, EVENT_COLUMNS, (_db, rows) => rows.map(eventFromRow)),
  evidence: source('evidence_records', ID_PREFIXES.evidence, EVIDENCE_COLUMNS, (_db, rows) =>
    rows.map(evidenceFromRow),
  ),
  reconciliation_exceptions: source(
    'reconciliation_exceptions',
    ID_PREFIXES.reconciliationException,
    EXCEPTION_COLUMNS,
    (_db, rows) => rows.map(exceptionFromRow),
  ),
};
