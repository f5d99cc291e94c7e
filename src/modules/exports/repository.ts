/** Export jobs: their rows, the worker's lease, its progress and outcome, and the expiry of old files. */
import { ID_PREFIXES } from '../../domain/ids.ts';
import {
  byStatus,
  newestFirstLister,
  organizationRecordFinder,
  recordTable,
} from '../../store/repositories/records.ts';
import { column, stored } from '../../store/repositories/rowMappers.ts';
import { nullableDate, nullableText, toBigInt, toDate } from '../../store/repositories/rows.ts';
import type { Queryable } from '../../store/store.ts';
import type { ExportJob, ExportStatus } from './domain.ts';

/** A count column that may be unset (bigint, read as a number). */
const nullableCount = (v: unknown) => (v === null || v === undefined ? null : Number(toBigInt(v)));

const EXPORTS = recordTable<ExportJob>('exports', ID_PREFIXES.export, {
  id: String,
  organizationId: String,
  type: stored,
  format: stored,
  from: column('created_from', nullableDate),
  to: column('created_to', nullableDate),
  status: stored,
  rowsWritten: (v) => Number(toBigInt(v)),
  rowsEstimated: nullableCount,
  bytes: nullableCount,
  sha256: nullableText,
  fileName: nullableText,
  error: nullableText,
  createdBy: String,
  createdAt: toDate,
  startedAt: nullableDate,
  finishedAt: nullableDate,
  expiresAt: nullableDate,
});

export async function insertExport(db: Queryable, job: ExportJob): Promise<void> {
  await db.query(
    `INSERT INTO exports (id, organization_id, type, format, created_from, created_to, status, created_by, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      job.id,
      job.organizationId,
      job.type,
      job.format,
      job.from,
      job.to,
      job.status,
      job.createdBy,
      job.createdAt,
    ],
  );
}

export const findExport = organizationRecordFinder(EXPORTS);

export const listExports = newestFirstLister(EXPORTS, byStatus<ExportStatus>);

/** Takes a queued export, or a running one whose worker's lease ran out, for `leaseMs`. */
export async function leaseExport(
  db: Queryable,
  now: Date,
  leaseMs: number,
  onlyId?: string,
): Promise<ExportJob | undefined> {
  const [row] = await db.query(
    `UPDATE exports SET status = 'running', lease_until = $2, started_at = COALESCE(started_at, $1), rows_written = 0
      WHERE id = (SELECT id FROM exports
                   WHERE (status = 'queued' OR (status = 'running' AND lease_until <= $1))
                     AND ($3::text IS NULL OR id = $3)
                   ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING ${EXPORTS.columns}`,
    [now, new Date(now.getTime() + leaseMs), onlyId ?? null],
  );
  return row && EXPORTS.fromRow(row);
}

/** Records progress and renews the lease; false when the export is no longer this worker's. */
export async function reportExportProgress(
  db: Queryable,
  id: string,
  rows: { written: number; estimated: number | null },
  leaseUntil: Date,
): Promise<boolean> {
  const updated = await db.query(
    `UPDATE exports SET rows_written = $2, rows_estimated = COALESCE($3, rows_estimated), lease_until = $4
      WHERE id = $1 AND status = 'running' RETURNING id`,
    [id, rows.written, rows.estimated, leaseUntil],
  );
  return updated.length === 1;
}

export async function finishExport(
  db: Queryable,
  id: string,
  result:
    | {
        status: 'ready';
        rows: number;
        bytes: number;
        sha256: string;
        fileName: string;
        expiresAt: Date;
        now: Date;
      }
    | { status: 'failed'; error: string; now: Date },
): Promise<ExportJob | undefined> {
  const [row] =
    result.status === 'ready'
      ? await db.query(
          `UPDATE exports SET status = 'ready', rows_written = $2, rows_estimated = $2, bytes = $3, sha256 = $4,
              file_name = $5, expires_at = $6, finished_at = $7, lease_until = NULL
            WHERE id = $1 AND status = 'running' RETURNING ${EXPORTS.columns}`,
          [id, result.rows, result.bytes, result.sha256, result.fileName, result.expiresAt, result.now],
        )
      : await db.query(
          `UPDATE exports SET status = 'failed', error = $2, finished_at = $3, lease_until = NULL
            WHERE id = $1 AND status = 'running' RETURNING ${EXPORTS.columns}`,
          [id, result.error, result.now],
        );
  return row && EXPORTS.fromRow(row);
}

/** Ready exports past their retention, to delete their files. */
export async function expireExports(db: Queryable, now: Date, rowsMax: number): Promise<ExportJob[]> {
  const rows = await db.query(
    `UPDATE exports SET status = 'expired'
      WHERE id IN (SELECT id FROM exports WHERE status = 'ready' AND expires_at <= $1 ORDER BY expires_at LIMIT $2)
      RETURNING ${EXPORTS.columns}`,
    [now, rowsMax],
  );
  return rows.map(EXPORTS.fromRow);
}
