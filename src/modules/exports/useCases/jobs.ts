/**
 * Export jobs: created `queued` for the worker, read, and their finished file opened for download from the
 * organization's folder of the export directory.
 */

import { createReadStream, type ReadStream } from 'node:fs';
import path from 'node:path';
import type { Deps } from '../../../app/deps.ts';
import { getById, listPage } from '../../../app/reads.ts';
import { invalidStateTransition, validationError } from '../../../domain/errors.ts';
import type { Queryable } from '../../../store/store.ts';
import type { ExportFormat, ExportJob, ExportType } from '../domain.ts';
import { findExport, insertExport, listExports } from '../repository.ts';

export interface CreateExportInput {
  type: ExportType;
  format: ExportFormat;
  from?: string | undefined;
  to?: string | undefined;
}

function dateOf(text: string | undefined, param: string): Date | null {
  if (text === undefined) return null;
  const date = new Date(text);
  if (Number.isNaN(date.getTime()))
    throw validationError(param, `${param} must be an RFC 3339 date-time`, 'invalid_format');
  return date;
}

export async function createExport(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: CreateExportInput,
  createdBy: string,
): Promise<ExportJob> {
  const from = dateOf(input.from, 'from');
  const to = dateOf(input.to, 'to');
  if (from && to && to < from) throw validationError('to', 'to must not be before from', 'out_of_range');
  const job: ExportJob = {
    id: deps.newId('export'),
    organizationId,
    type: input.type,
    format: input.format,
    from,
    to,
    status: 'queued',
    rowsWritten: 0,
    rowsEstimated: null,
    bytes: null,
    sha256: null,
    fileName: null,
    error: null,
    createdBy,
    createdAt: deps.now(),
    startedAt: null,
    finishedAt: null,
    expiresAt: null,
  };
  await insertExport(tx, job);
  return job;
}

export const getExport = getById<ExportJob>(findExport, 'export');

export const listOrganizationExports = listPage(listExports);

/** Where a job's file is written: the organization's folder of the export directory. */
export function fileOf(deps: Deps, job: Pick<ExportJob, 'organizationId' | 'id' | 'format'>): string {
  return path.join(deps.exportDirectory, job.organizationId, `${job.id}.${job.format}`);
}

/** The finished file, opened for download, or a 409 while it is not ready (a 404 once it expired). */
export async function openExportFile(
  deps: Deps,
  organizationId: string,
  id: string,
): Promise<{ job: ExportJob; stream: ReadStream }> {
  const job = await getExport(deps, organizationId, id);
  if (job.status !== 'ready') {
    throw invalidStateTransition(
      'Export not ready',
      `Export ${job.id} is ${job.status}; its file can be downloaded once it is ready${job.status === 'expired' ? ' (it expired and was deleted: export again)' : ''}.`,
    );
  }
  return { job, stream: createReadStream(fileOf(deps, job)) };
}
