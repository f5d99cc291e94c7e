/**
 * Exports, pure: what can be exported, in which formats, the job's statuses and limits, the one rule that
 * keeps a CSV cell from being read as a formula by a spreadsheet, and how every CSV the service writes is
 * laid out (RFC 4180).
 */
import { stringify } from 'csv-stringify/sync';

export const EXPORT_TYPES = [
  'transfers',
  'ledger_entries',
  'events',
  'evidence',
  'reconciliation_exceptions',
] as const;
export type ExportType = (typeof EXPORT_TYPES)[number];

/** Types only operators (the `compliance` scope) may export or download: the routes that read them are theirs. */
export const OPERATOR_EXPORT_TYPES: readonly ExportType[] = ['evidence', 'reconciliation_exceptions'];

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_STATUSES = ['queued', 'running', 'ready', 'failed', 'expired'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

/** Rows read and written per page: the most an export holds in memory at once. */
export const EXPORT_PAGE_ROWS = 1_000;
/** How long a finished file stays downloadable: 7 days. */
export const EXPORT_RETENTION_MS = 7 * 24 * 3_600_000;
/** A running export's lease; a worker that died leaves it to the next after this. */
export const EXPORT_LEASE_MS = 60_000;
/** How often a running export reports its progress (and renews its lease), in pages. */
export const EXPORT_PROGRESS_PAGES = 10;

export interface ExportJob {
  id: string;
  organizationId: string;
  type: ExportType;
  format: ExportFormat;
  from: Date | null;
  to: Date | null;
  status: ExportStatus;
  rowsWritten: number;
  rowsEstimated: number | null;
  bytes: number | null;
  sha256: string | null;
  fileName: string | null;
  error: string | null;
  createdBy: string;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  expiresAt: Date | null;
}

/** Characters that make a spreadsheet treat a cell as a formula (OWASP's list, with tab and carriage return). */
const FORMULA_TRIGGERS = new Set(['=', '+', '-', '@', '\t', '\r']);

/**
 * A CSV cell as a spreadsheet will read it safely: text starting with a formula character is prefixed with
 * a quote, which spreadsheets show as text. Numbers stay numbers: a negative amount is exported as `-12.50`
 * only from the amount columns, which are decimal strings checked here.
 */
export function neutraliseCell(value: string): string {
  if (value === '' || !FORMULA_TRIGGERS.has(value.charAt(0))) return value;
  if (/^-\d+(\.\d+)?$/.test(value)) return value;
  return `'${value}`;
}

/** RFC 4180 §2: every record, the last one too, ends in CRLF. */
export const CSV_RECORD_DELIMITER = '\r\n';

/**
 * Records as RFC 4180 CSV, each cell neutralised (a null is an empty cell): CRLF after every record, and a
 * cell with a comma, a double quote or any line break (a lone CR or LF too, which readers also break on)
 * quoted, its double quotes doubled. Every CSV the service writes goes through here.
 */
export function csvRecords(rows: readonly (readonly (string | null)[])[]): string {
  return stringify(
    rows.map((cells) => cells.map((c) => (c === null ? '' : neutraliseCell(c)))),
    { record_delimiter: CSV_RECORD_DELIMITER, quoted_match: /[\r\n]/ },
  );
}
