/** An export job in its wire form. */
import type { ExportJob } from '../domain.ts';

export function presentExport(job: ExportJob) {
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  return {
    object: 'export',
    id: job.id,
    type: job.type,
    format: job.format,
    from: iso(job.from),
    to: iso(job.to),
    status: job.status,
    rows_written: job.rowsWritten,
    rows_estimated: job.rowsEstimated,
    bytes: job.bytes,
    sha256: job.sha256,
    error: job.error,
    created_by: job.createdBy,
    created_at: job.createdAt.toISOString(),
    started_at: iso(job.startedAt),
    finished_at: iso(job.finishedAt),
    expires_at: iso(job.expiresAt),
  };
}
