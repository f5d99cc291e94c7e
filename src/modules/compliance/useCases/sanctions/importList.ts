/**
 * `mkoba sanctions import FILE`: streams a sanctions list CSV into a new list version and makes it the
 * active one. The version is loaded while `loading` (invisible to screening), in batches that each commit
 * on their own so a server sharing the embedded database keeps answering; then one transaction checks the
 * count, activates it and retires the previous version. A refused or failed file leaves the previous
 * version active and its own rows deleted; an import that died half-way leaves a loading version that the
 * next import deletes once it is SANCTIONS_IMPORT_ABANDONED_AFTER_MS old.
 */
import { createHash } from 'node:crypto';
import { createReadStream, type ReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { type Options, parse } from 'csv-parse';
import type { Deps } from '../../../../app/deps.ts';
import {
  type ColumnPositions,
  readHeader,
  readRecord,
  SANCTIONS_LIST_COLUMNS,
  SANCTIONS_LIST_ENTRIES_MAX,
  SANCTIONS_LIST_FILE_BYTES_MAX,
  SANCTIONS_RECORD_CHARS_MAX,
  type SanctionsListEntryInput,
  SanctionsListFileError,
} from '../../../../domain/screening/listFile.ts';
import {
  activateVersion,
  countEntries,
  deleteLoadingVersion,
  findActiveVersionId,
  findLoadingVersionsBefore,
  insertEntries,
  insertLoadingVersion,
  listVersions,
  type SanctionsListVersion,
} from '../../repository/sanctions.ts';

/** Entries written per statement (each commits on its own while the version is still loading). */
export const SANCTIONS_IMPORT_BATCH_ROWS = 1_000;
/** A version still loading after this long belongs to an import that died; the next import deletes it. */
export const SANCTIONS_IMPORT_ABANDONED_AFTER_MS = 6 * 60 * 60 * 1_000;
/** Versions `mkoba sanctions list` shows at most. */
export const SANCTIONS_VERSIONS_LISTED_MAX = 100;

export interface SanctionsImportProgress {
  bytesRead: number;
  bytesTotal: number;
  entries: number;
}

/** What a list file holds: its entries and their aliases, the entries counted again by type. */
interface ListCounts {
  entries: number;
  aliases: number;
  persons: number;
  entities: number;
}

export interface SanctionsImportSummary extends ListCounts {
  versionId: string;
  sourceFileName: string;
  sha256: string;
  /** The version this one replaced, now retired. */
  retiredVersionId: string | null;
  durationMs: number;
}

/** A list file refused or an import that failed: nothing of it is active, the previous version still is. */
export class SanctionsImportError extends Error {
  constructor(
    readonly sourceFileName: string,
    readonly activeVersionId: string | undefined,
    override readonly cause: unknown,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      `sanctions list ${sourceFileName} refused: ${reason} (nothing was imported; the active list is ${activeVersionId ?? 'none'})`,
    );
    this.name = 'SanctionsImportError';
  }

  /** The line and field at fault, when the file itself was at fault. */
  get fileError(): SanctionsListFileError | undefined {
    return this.cause instanceof SanctionsListFileError ? this.cause : undefined;
  }
}

/** What csv-parse yields with `info`: the fields, and where the record ends (its `lines`). */
interface ParsedRecord {
  record: string[];
  info: { lines: number };
}

/** Counts and hashes the bytes on their way to the parser. */
function byteTap(onBytes: (chunk: Buffer) => void): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      onBytes(chunk);
      callback(null, chunk);
    },
  });
}

/**
 * csv-parse's own errors (quotes, record size) carry the line, and the column when it knows it. The header
 * is passed as the parser saw it: an error in the chunk that holds the header comes before the loop reads it.
 */
function csvSyntaxError(error: unknown, header: readonly string[] | undefined): SanctionsListFileError {
  const e = error as { code?: string; lines?: number; column?: number | string; message?: string };
  const index = typeof e.column === 'number' ? e.column : undefined;
  let columns: ColumnPositions | undefined;
  try {
    columns = header && readHeader(header);
  } catch {
    columns = undefined;
  }
  const field =
    columns && index !== undefined
      ? SANCTIONS_LIST_COLUMNS.find((column) => columns[column] === index)
      : undefined;
  const reason = (e.message ?? String(error)).replace(/ (at|on) line \d+/, '');
  return new SanctionsListFileError(typeof e.lines === 'number' ? e.lines : undefined, field, reason);
}

async function fileSize(filePath: string): Promise<number> {
  let stats: Awaited<ReturnType<typeof stat>>;
  try {
    stats = await stat(filePath);
  } catch (error) {
    throw new SanctionsListFileError(
      undefined,
      undefined,
      `cannot read ${filePath}: ${(error as Error).message}`,
    );
  }
  if (!stats.isFile()) throw new SanctionsListFileError(undefined, undefined, `${filePath} is not a file`);
  if (stats.size > SANCTIONS_LIST_FILE_BYTES_MAX) {
    throw new SanctionsListFileError(
      undefined,
      undefined,
      `the file is ${stats.size} bytes, over the limit of ${SANCTIONS_LIST_FILE_BYTES_MAX}`,
    );
  }
  return stats.size;
}

/** Deletes the loading versions of imports that died at least SANCTIONS_IMPORT_ABANDONED_AFTER_MS ago. */
async function deleteAbandonedLoads(deps: Deps): Promise<void> {
  const before = new Date(deps.now().getTime() - SANCTIONS_IMPORT_ABANDONED_AFTER_MS);
  for (const id of await findLoadingVersionsBefore(deps.store, before)) {
    await deps.store.transaction((tx) => deleteLoadingVersion(tx, id));
  }
}

/** The file on its way to the parser: the records, the stream to stop, and what the bytes came to so far. */
interface ListFileStream {
  records: AsyncIterable<ParsedRecord>;
  source: ReadStream;
  bytesRead(): number;
  /** The first record the parser saw, once it has seen one. */
  header(): string[] | undefined;
  sha256(): string;
}

/** Streams the file through a byte counter and hash into the CSV parser, refusing it past the size limit. */
function streamListFile(filePath: string): ListFileStream {
  const hash = createHash('sha256');
  let bytesRead = 0;
  const tap = byteTap((chunk) => {
    bytesRead += chunk.length;
    hash.update(chunk);
    if (bytesRead > SANCTIONS_LIST_FILE_BYTES_MAX) {
      tap.destroy(
        new SanctionsListFileError(undefined, undefined, `over ${SANCTIONS_LIST_FILE_BYTES_MAX} bytes`),
      );
    }
  });
  let header: string[] | undefined;
  const parser = parse({
    // With `info`, on_record is given the record with its info (csv-parse's types say the bare record).
    on_record: ((output: ParsedRecord) => {
      header ??= output.record;
      return output;
    }) as unknown as Options['on_record'],
    bom: true,
    info: true,
    skip_empty_lines: true,
    // Field counts are checked here, so that the error can name the missing field.
    relax_column_count: true,
    max_record_size: SANCTIONS_RECORD_CHARS_MAX,
  });
  const source = createReadStream(filePath);
  source.on('error', (error) => tap.destroy(error));
  tap.on('error', (error) => parser.destroy(error));
  source.pipe(tap).pipe(parser);
  return {
    records: parser as AsyncIterable<ParsedRecord>,
    source,
    bytesRead: () => bytesRead,
    header: () => header,
    sha256: () => hash.digest('hex'),
  };
}

/** Counts an entry, refusing an id an earlier line has and an entry past SANCTIONS_LIST_ENTRIES_MAX. */
function countEntry(
  counts: ListCounts,
  lineOfId: Map<string, number>,
  line: number,
  entry: SanctionsListEntryInput,
): void {
  const earlier = lineOfId.get(entry.entryId);
  if (earlier !== undefined) {
    throw new SanctionsListFileError(line, 'id', `'${entry.entryId}' is also the id on line ${earlier}`);
  }
  if (counts.entries >= SANCTIONS_LIST_ENTRIES_MAX) {
    throw new SanctionsListFileError(line, undefined, `more than ${SANCTIONS_LIST_ENTRIES_MAX} entries`);
  }
  lineOfId.set(entry.entryId, line);
  counts.entries += 1;
  counts.aliases += entry.aliases.length;
  if (entry.type === 'person') counts.persons += 1;
  else counts.entities += 1;
}

/**
 * Reads the file into the loading version: every record checked (readRecord), ids unique, at most
 * SANCTIONS_LIST_ENTRIES_MAX entries. Returns the counts and the file's SHA-256.
 */
async function loadFile(
  deps: Deps,
  versionId: string,
  filePath: string,
  onProgress: (progress: SanctionsImportProgress) => void,
): Promise<{ sha256: string } & ListCounts> {
  const bytesTotal = await fileSize(filePath);
  const file = streamListFile(filePath);
  let columns: ColumnPositions | undefined;
  const lineOfId = new Map<string, number>();
  let batch: SanctionsListEntryInput[] = [];
  const counts: ListCounts = { entries: 0, aliases: 0, persons: 0, entities: 0 };
  const flush = async () => {
    await insertEntries(deps.store, versionId, batch);
    batch = [];
    onProgress({ bytesRead: file.bytesRead(), bytesTotal, entries: counts.entries });
  };
  try {
    for await (const { record, info } of file.records) {
      const line = info.lines;
      if (columns === undefined) {
        columns = readHeader(record);
        continue;
      }
      const entry = readRecord(line, record, columns);
      countEntry(counts, lineOfId, line, entry);
      batch.push(entry);
      if (batch.length >= SANCTIONS_IMPORT_BATCH_ROWS) await flush();
    }
  } catch (error) {
    file.source.destroy();
    if (error instanceof SanctionsListFileError) throw error;
    if ((error as { code?: unknown }).code?.toString().startsWith('CSV_'))
      throw csvSyntaxError(error, file.header());
    throw error;
  }
  if (columns === undefined) throw new SanctionsListFileError(1, undefined, 'no header row');
  if (counts.entries === 0) throw new SanctionsListFileError(2, undefined, 'no entries after the header');
  await flush();
  return { sha256: file.sha256(), ...counts };
}

export interface ImportOptions {
  onProgress?: (progress: SanctionsImportProgress) => void;
}

export async function importSanctionsList(
  deps: Deps,
  filePath: string,
  options: ImportOptions = {},
): Promise<SanctionsImportSummary> {
  const startedAt = deps.now();
  const sourceFileName = path.basename(filePath);
  await deleteAbandonedLoads(deps);
  const versionId = deps.newId('sanctionsList');
  await insertLoadingVersion(deps.store, { id: versionId, sourceFileName, createdAt: startedAt });
  try {
    const loaded = await loadFile(deps, versionId, filePath, options.onProgress ?? (() => {}));
    const { retiredVersionId } = await deps.store.transaction(async (tx) => {
      const stored = await countEntries(tx, versionId);
      if (stored !== loaded.entries) {
        throw new Error(`version ${versionId} holds ${stored} entries, the file ${loaded.entries}`);
      }
      return activateVersion(tx, {
        id: versionId,
        sha256: loaded.sha256,
        counts: {
          entryCount: loaded.entries,
          aliasCount: loaded.aliases,
          personCount: loaded.persons,
          entityCount: loaded.entities,
        },
        now: deps.now(),
      });
    });
    return {
      versionId,
      sourceFileName,
      sha256: loaded.sha256,
      entries: loaded.entries,
      aliases: loaded.aliases,
      persons: loaded.persons,
      entities: loaded.entities,
      retiredVersionId: retiredVersionId ?? null,
      durationMs: deps.now().getTime() - startedAt.getTime(),
    };
  } catch (error) {
    // Best effort: what is left is a loading version, never active, deleted by a later import.
    await deps.store.transaction((tx) => deleteLoadingVersion(tx, versionId)).catch(() => {});
    throw new SanctionsImportError(
      sourceFileName,
      await findActiveVersionId(deps.store).catch(() => undefined),
      error,
    );
  }
}

/** The newest versions first, the active one among them (`mkoba sanctions list`). */
export function listSanctionsListVersions(deps: Deps): Promise<SanctionsListVersion[]> {
  return listVersions(deps.store, SANCTIONS_VERSIONS_LISTED_MAX);
}
