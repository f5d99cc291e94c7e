/**
 * Running an export: an organization's history streamed to a file, page by page (EXPORT_PAGE_ROWS rows in
 * memory at most, written with backpressure), as CSV (RFC 4180 by csvRecords: CRLF after each record,
 * formula cells neutralised) or JSON lines. A worker leases a `queued` job, writes a temporary file and
 * renames it when complete, recording its size and SHA-256; a worker that dies leaves the job to the next
 * once its lease runs out, which starts it again from the first row. `export.ready` announces the file; it
 * stays for EXPORT_RETENTION_MS, then the worker deletes it.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Deps } from '../../../app/deps.ts';
import { newEvent, recordEvents } from '../../../app/events.ts';
import { csvRecords } from '../../../domain/csv.ts';
import type { EventRecord } from '../../../domain/events.ts';
import { type CreatedRange, countInRange } from '../../../store/repositories/rows.ts';
import {
  EXPORT_LEASE_MS,
  EXPORT_PROGRESS_PAGES,
  EXPORT_RETENTION_MS,
  type ExportFormat,
  type ExportJob,
} from '../domain.ts';
import { expireExports, finishExport, leaseExport, reportExportProgress } from '../repository.ts';
import { type CreateExportInput, createExport, fileOf } from './jobs.ts';
import { EXPORT_SOURCES, type ExportFormatter, type ExportFormatters } from './sources.ts';

/** Expired files one pass deletes at most. */
export const EXPORT_EXPIRY_BATCH_MAX = 100;

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

/** A finished file: its rows, its size in bytes and its SHA-256. */
interface WrittenFile {
  rows: number;
  bytes: number;
  sha256: string;
}

/**
 * Writes a job's records to `file`: pages read in id order, written as they come, hashed on the way, the
 * lease renewed every EXPORT_PROGRESS_PAGES pages; the file is renamed into place only when complete.
 * Returns what was written, or undefined if the job lost its lease (its partial file removed).
 */
async function writeExportFile(
  deps: Deps,
  job: ExportJob,
  formatter: ExportFormatter,
  file: string,
  onProgress: (progress: ExportProgress) => void,
): Promise<WrittenFile | undefined> {
  const src = EXPORT_SOURCES[job.type];
  const range: CreatedRange = { from: job.from ?? undefined, to: job.to ?? undefined };
  const estimated = await countInRange(deps.store, {
    table: src.table,
    prefix: src.prefix,
    organizationId: job.organizationId,
    range,
  });
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
      await emit(pageText(job.format, formatter, page));
      rows += page.length;
      afterId = page.at(-1)?.id;
      pages++;
      onProgress({ rowsWritten: rows, rowsEstimated: Math.max(estimated, rows) });
      if (pages % EXPORT_PROGRESS_PAGES === 0) await renewLease(deps, job, rows, estimated);
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
  return { rows, bytes, sha256: hash.digest('hex') };
}

/** A page of records as the file's text: CSV records, or one JSON line each. */
function pageText(format: ExportFormat, formatter: ExportFormatter, page: { record: unknown }[]): string {
  if (format === 'csv') return csvRecords(page.flatMap(({ record }) => formatter.csvRows(record)));
  return page.map(({ record }) => `${JSON.stringify(formatter.json(record))}\n`).join('');
}

/** Reports the job's progress and extends its lease; throws LeaseLost when another worker holds it now. */
async function renewLease(deps: Deps, job: ExportJob, rows: number, estimated: number): Promise<void> {
  const leaseUntil = new Date(deps.now().getTime() + EXPORT_LEASE_MS);
  const still = await reportExportProgress(deps.store, job.id, { written: rows, estimated }, leaseUntil);
  if (!still) throw new LeaseLost();
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
  const file = fileOf(deps, job);
  const written = await writeExportFile(deps, job, formatters[job.type], file, onProgress);
  if (!written) return undefined;
  const now = deps.now();
  return deps.store.transaction(async (tx) => {
    const ready = await finishExport(tx, job.id, {
      status: 'ready',
      rows: written.rows,
      bytes: written.bytes,
      sha256: written.sha256,
      fileName: path.basename(file),
      expiresAt: new Date(now.getTime() + EXPORT_RETENTION_MS),
      now,
    });
    if (ready) await recordEvents(tx, deps, [exportEvent(deps, ready, now)]);
    return ready;
  });
}

/** Thrown while a file is written when the job's lease was taken by another worker. */
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
