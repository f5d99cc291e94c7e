/** An export job in its wire form. */

import { isoOrNull } from '../../../http/presenters.ts';
import type { ExportJob } from '../domain.ts';

export function presentExport(job: ExportJob) {
  return {
    object: 'export',
    id: job.id,
    type: job.type,
    format: job.format,
    from: isoOrNull(job.from),
    to: isoOrNull(job.to),
    status: job.status,
    rows_written: job.rowsWritten,
    rows_estimated: job.rowsEstimated,
    bytes: job.bytes,
    sha256: job.sha256,
    error: job.error,
    created_by: job.createdBy,
    created_at: job.createdAt.toISOString(),
    started_at: isoOrNull(job.startedAt),
    finished_at: isoOrNull(job.finishedAt),
    expires_at: isoOrNull(job.expiresAt),
  };
}
