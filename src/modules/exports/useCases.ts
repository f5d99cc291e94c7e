/**
 * Exports: an organization's history streamed to a file, page by page (EXPORT_PAGE_ROWS rows in memory at
 * most, written with backpressure), as CSV (RFC 4180 by csvRecords: CRLF after each record, formula cells
 * neutralised) or JSON lines. A job is created `queued`; a worker leases it, writes a temporary file and renames it when complete,
 * recording its size and SHA-256; a worker that dies leaves the job to the next once its lease runs out,
 * which starts it again from the first row. `export.ready` announces the file; it stays for
 * EXPORT_RETENTION_MS, then the worker deletes it.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, type ReadStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Deps } from '../../app/deps.ts';
import { newEvent, recordEvents } from '../../app/events.ts';
import { csvRecords } from '../../domain/csv.ts';
import { AppError, resourceMissing, validationError } from '../../domain/errors.ts';
import type { EventRecord } from '../../domain/events.ts';
import type { IdPrefix } from '../../domain/ids.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { type Page, type PageRequest, toPage } from '../../domain/pagination.ts';
import { EVENT_COLUMNS, eventFromRow } from '../../store/repositories/events.ts';
import { EVIDENCE_COLUMNS, evidenceFromRow } from '../../store/repositories/evidence.ts';
import { JOURNAL_ENTRY_COLUMNS, withPostings } from '../../store/repositories/ledger.ts';
import { EXCEPTION_COLUMNS, exceptionFromRow } from '../../store/repositories/reconciliation.ts';
import { type CreatedRange, countInRange, readAscending } from '../../store/repositories/rows.ts';
import { TRANSFER_COLUMNS, transferFromRow } from '../../store/repositories/transfers.ts';
import type { Queryable } from '../../store/store.ts';
import {
  EXPORT_LEASE_MS,
  EXPORT_PAGE_ROWS,
  EXPORT_PROGRESS_PAGES,
  EXPORT_RETENTION_MS,
  type ExportFormat,
  type ExportJob,
  type ExportType,
} from './domain.ts';
import {
  expireExports,
  findExport,
  finishExport,
  insertExport,
  leaseExport,
  listExports,
  reportExportProgress,
} from './repository.ts';

/** Expired files one pass deletes at most. */
export const EXPORT_EXPIRY_BATCH_MAX = 100;

/** How one type's records are written: JSON lines use its wire form; CSV its columns, a row or more each. */
export interface ExportFormatter {
  csvHeader: readonly string[];
  csvRows(record: unknown): (string | null)[][];
  json(record: unknown): unknown;
}

export type ExportFormatters = Record<ExportType, ExportFormatter>;

interface ExportSource {
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

export async function getExport(deps: Deps, organizationId: string, id: string): Promise<ExportJob> {
  const job = await findExport(deps.store, organizationId, id);
  if (!job) throw resourceMissing('export', id);
  return job;
}

export async function listOrganizationExports(
  deps: Deps,
  organizationId: string,
  request: PageRequest,
): Promise<Page<ExportJob>> {
  return toPage(await listExports(deps.store, organizationId, request, request.limit + 1), request.limit);
}

function fileOf(deps: Deps, job: Pick<ExportJob, 'organizationId' | 'id' | 'format'>): string {
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
    throw new AppError({
      status: 409,
      code: 'invalid_state_transition',
      title: 'Export not ready',
      detail: `Export ${job.id} is ${job.status}; its file can be downloaded once it is ready${job.status === 'expired' ? ' (it expired and was deleted: export again)' : ''}.`,
    });
  }
  return { job, stream: createReadStream(fileOf(deps, job)) };
}

/** Writes a chunk, waiting for the stream to drain when its buffer is full (constant memory). */
function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: unknown) => reject(error);
    stream.once('error', onError);
    const done = () => {
      stream.off('error', onError);
      resolve();
    };
    if (stream.write(text)) done();
    else stream.once('drain', done);
  });
}

export interface ExportProgress {
  rowsWritten: number;
  rowsEstimated: number;
}

/**
 * Runs one leased job to its file: pages read in id order, written as they come, hashed on the way; the
 * file is renamed into place only when complete. Returns the finished job, or undefined if it lost its lease.
 */
async function runExport(
  deps: Deps,
  job: ExportJob,
  formatters: ExportFormatters,
  onProgress: (progress: ExportProgress) => void,
): Promise<ExportJob | undefined> {
  const src = EXPORT_SOURCES[job.type];
  const formatter = formatters[job.type];
  const range: CreatedRange = { from: job.from ?? undefined, to: job.to ?? undefined };
  const estimated = await countInRange(deps.store, {
    table: src.table,
    prefix: src.prefix,
    organizationId: job.organizationId,
    range,
  });
  const file = fileOf(deps, job);
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.partial`;
  const out = createWriteStream(temporary);
  const hash = createHash('sha256');
  let bytes = 0;
  const emit = async (text: string) => {
    hash.update(text);
    bytes += Buffer.byteLength(text);
    await write(out, text);
  };
  let rows = 0;
  let pages = 0;
  let afterId: string | undefined;
  try {
    if (job.format === 'csv') await emit(csvRecords([formatter.csvHeader]));
    for (;;) {
      const page = await src.read(deps.store, job.organizationId, afterId, range);
      if (page.length === 0) break;
      let text = '';
      if (job.format === 'csv') {
        text = csvRecords(page.flatMap(({ record }) => formatter.csvRows(record)));
      } else {
        text = page.map(({ record }) => `${JSON.stringify(formatter.json(record))}\n`).join('');
      }
      await emit(text);
      rows += page.length;
      afterId = page.at(-1)?.id;
      pages++;
      onProgress({ rowsWritten: rows, rowsEstimated: Math.max(estimated, rows) });
      if (pages % EXPORT_PROGRESS_PAGES === 0) {
        const leaseUntil = new Date(deps.now().getTime() + EXPORT_LEASE_MS);
        const still = await reportExportProgress(
          deps.store,
          job.id,
          { written: rows, estimated },
          leaseUntil,
        );
        if (!still) throw new LeaseLost();
      }
    }
    await new Promise<void>((resolve, reject) =>
      out.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
    await rename(temporary, file);
  } catch (error) {
    out.destroy();
    await rm(temporary, { force: true });
    if (error instanceof LeaseLost) return undefined;
    throw error;
  }
  const now = deps.now();
  return deps.store.transaction(async (tx) => {
    const ready = await finishExport(tx, job.id, {
      status: 'ready',
      rows,
      bytes,
      sha256: hash.digest('hex'),
      fileName: path.basename(file),
      expiresAt: new Date(now.getTime() + EXPORT_RETENTION_MS),
      now,
    });
    if (ready) await recordEvents(tx, deps, [exportEvent(deps, ready, now)]);
    return ready;
  });
}

class LeaseLost extends Error {}

export function exportEventData(job: ExportJob): Record<string, unknown> {
  return {
    export_id: job.id,
    type: job.type,
    format: job.format,
    status: job.status,
    rows: job.rowsWritten,
    bytes: job.bytes,
    sha256: job.sha256,
    expires_at: job.expiresAt?.toISOString() ?? null,
  };
}

function exportEvent(deps: Deps, job: ExportJob, now: Date): EventRecord {
  return newEvent(
    deps,
    {
      organizationId: job.organizationId,
      type: job.status === 'ready' ? 'export.ready' : 'export.failed',
      resourceId: job.id,
      data: exportEventData(job),
    },
    now,
  );
}

/**
 * One pass of the export worker: deletes expired files, then runs the next leased job, if any, to its end.
 * A job that fails (a full disk, a broken directory) is marked failed with `export.failed`.
 */
export async function runExportWorkerOnce(
  deps: Deps,
  formatters: ExportFormatters,
  onProgress: (job: ExportJob, progress: ExportProgress) => void = () => {},
): Promise<ExportJob | undefined> {
  for (const expired of await expireExports(deps.store, deps.now(), EXPORT_EXPIRY_BATCH_MAX)) {
    await rm(fileOf(deps, expired), { force: true });
  }
  const job = await leaseExport(deps.store, deps.now(), EXPORT_LEASE_MS);
  if (!job) return undefined;
  try {
    return await runExport(deps, job, formatters, (progress) => onProgress(job, progress));
  } catch (error) {
    const now = deps.now();
    return deps.store.transaction(async (tx) => {
      const failed = await finishExport(tx, job.id, {
        status: 'failed',
        error: error instanceof Error ? error.message : String(error),
        now,
      });
      if (failed) await recordEvents(tx, deps, [exportEvent(deps, failed, now)]);
      return failed;
    });
  }
}

/**
 * `mkoba export`: creates an export for the organization of that name and runs it here and now (not through
 * the queue), reporting progress; returns the finished job and its file's path.
 */
export async function runExportNow(
  deps: Deps,
  organizationId: string,
  input: CreateExportInput,
  formatters: ExportFormatters,
  onProgress: (progress: ExportProgress) => void,
): Promise<{ job: ExportJob; file: string }> {
  const created = await deps.store.transaction((tx) =>
    createExport(tx, deps, organizationId, input, 'system'),
  );
  const leased = await leaseExport(deps.store, deps.now(), EXPORT_LEASE_MS, created.id);
  if (!leased) throw new Error(`export ${created.id} was taken by a worker`);
  let job: ExportJob | undefined;
  try {
    job = await runExport(deps, leased, formatters, onProgress);
  } catch (error) {
    await finishExport(deps.store, created.id, {
      status: 'failed',
      error: error instanceof Error ? error.message : String(error),
      now: deps.now(),
    });
    throw error;
  }
  if (!job) throw new Error(`export ${created.id} lost its lease while it ran`);
  return { job, file: fileOf(deps, job) };
}
