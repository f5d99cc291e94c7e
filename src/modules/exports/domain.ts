/**
 * Exports, pure: what can be exported, in which formats, the job's statuses and limits. How a CSV is laid
 * out is the shared core's `src/domain/csv.ts`.
 */

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
