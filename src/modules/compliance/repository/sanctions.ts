/** Sanctions list versions and their entries (migration 0012). Lists are platform-wide. */
import type { ScreeningListEntry } from '../../../domain/screening/screeningIndex.ts';
import { recordFinderBy, rowTable } from '../../../store/repositories/records.ts';
import { rowMapper, stored } from '../../../store/repositories/rowMappers.ts';
import { nullableDate, nullableText, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

export type SanctionsListStatus = 'loading' | 'active' | 'retired';

export interface SanctionsListCounts {
  entryCount: number;
  aliasCount: number;
  personCount: number;
  entityCount: number;
}

/** A list version: the file it came from, its counts and where it stands. */
export interface SanctionsListVersion extends SanctionsListCounts {
  id: string;
  sourceFileName: string;
  sha256: string | null;
  status: SanctionsListStatus;
  createdAt: Date;
  activatedAt: Date | null;
  retiredAt: Date | null;
}

/**
 * Notified by the transaction that activates a version: every process's screening looks at the active
 * version again at its next screening instead of waiting for its check interval.
 */
export const SANCTIONS_LIST_CHANNEL = 'mkoba_sanctions_list';
/** An arbitrary constant: activations take it, so two imports finishing at once go live one after the other. */
const SANCTIONS_ACTIVATION_LOCK_KEY = 7_345_012;

const VERSIONS = rowTable<SanctionsListVersion>('sanctions_list_versions', {
  id: String,
  sourceFileName: String,
  sha256: nullableText,
  entryCount: Number,
  aliasCount: Number,
  personCount: Number,
  entityCount: Number,
  status: stored,
  createdAt: toDate,
  activatedAt: nullableDate,
  retiredAt: nullableDate,
});

export async function insertLoadingVersion(
  db: Queryable,
  version: { id: string; sourceFileName: string; createdAt: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO sanctions_list_versions (id, source_file_name, status, created_at) VALUES ($1, $2, 'loading', $3)`,
    [version.id, version.sourceFileName, version.createdAt],
  );
}

/** One batch of entries into a version still loading (the database refuses any other). */
export async function insertEntries(
  db: Queryable,
  versionId: string,
  entries: readonly ScreeningListEntry[],
): Promise<void> {
  if (entries.length === 0) return;
  const rows = entries.map((e) => ({
    entry_id: e.entryId,
    name: e.name,
    aliases: e.aliases,
    type: e.type,
    country: e.country,
    date_of_birth: e.dateOfBirth,
    program: e.program,
    name_normalized: e.nameNormalized,
    aliases_normalized: e.aliasesNormalized,
  }));
  await db.query(
    `INSERT INTO sanctions_list_entries
       (version_id, entry_id, name, aliases, type, country, date_of_birth, program, name_normalized, aliases_normalized)
     SELECT $1, r.entry_id, r.name, r.aliases, r.type, r.country, r.date_of_birth, r.program, r.name_normalized, r.aliases_normalized
       FROM jsonb_to_recordset($2::jsonb) AS r(entry_id text, name text, aliases text[], type text, country text,
            date_of_birth text, program text, name_normalized text, aliases_normalized text[])`,
    [versionId, JSON.stringify(rows)],
  );
}

export async function countEntries(db: Queryable, versionId: string): Promise<number> {
  const [row] = await db.query('SELECT count(*) AS n FROM sanctions_list_entries WHERE version_id = $1', [
    versionId,
  ]);
  return Number(row?.n ?? 0);
}

/**
 * Makes a loading version the active one and retires the one it replaces, in the caller's transaction,
 * and notifies SANCTIONS_LIST_CHANNEL on commit. Returns the retired version's id, if there was one.
 */
export async function activateVersion(
  db: Queryable,
  version: { id: string; sha256: string; counts: SanctionsListCounts; now: Date },
): Promise<{ retiredVersionId: string | undefined }> {
  await db.query('SELECT pg_advisory_xact_lock($1)', [SANCTIONS_ACTIVATION_LOCK_KEY]);
  const retired = await db.query(
    `UPDATE sanctions_list_versions SET status = 'retired', retired_at = $1 WHERE status = 'active' RETURNING id`,
    [version.now],
  );
  const activated = await db.query(
    `UPDATE sanctions_list_versions
        SET status = 'active', activated_at = $2, sha256 = $3,
            entry_count = $4, alias_count = $5, person_count = $6, entity_count = $7
      WHERE id = $1 AND status = 'loading'
      RETURNING id`,
    [
      version.id,
      version.now,
      version.sha256,
      version.counts.entryCount,
      version.counts.aliasCount,
      version.counts.personCount,
      version.counts.entityCount,
    ],
  );
  if (activated.length !== 1) throw new Error(`sanctions list version ${version.id} is no longer loading`);
  await db.query(`NOTIFY ${SANCTIONS_LIST_CHANNEL}`);
  const [row] = retired;
  return { retiredVersionId: row === undefined ? undefined : String(row.id) };
}

/** Deletes a version that never went live, with its entries (the database refuses any other). */
export async function deleteLoadingVersion(db: Queryable, versionId: string): Promise<void> {
  await db.query('DELETE FROM sanctions_list_entries WHERE version_id = $1', [versionId]);
  await db.query(`DELETE FROM sanctions_list_versions WHERE id = $1 AND status = 'loading'`, [versionId]);
}

/** Versions still loading that were started before `before`: imports that died half-way. */
export async function findLoadingVersionsBefore(db: Queryable, before: Date): Promise<string[]> {
  const rows = await db.query(
    `SELECT id FROM sanctions_list_versions WHERE status = 'loading' AND created_at < $1 ORDER BY created_at`,
    [before],
  );
  return rows.map((r) => String(r.id));
}

export async function findActiveVersionId(db: Queryable): Promise<string | undefined> {
  const [row] = await db.query(`SELECT id FROM sanctions_list_versions WHERE status = 'active'`);
  return row === undefined ? undefined : String(row.id);
}

export const findVersion = recordFinderBy(VERSIONS, 'id');

/** The newest versions first (ids sort by creation), at most `limit`. */
export async function listVersions(db: Queryable, limit: number): Promise<SanctionsListVersion[]> {
  const rows = await db.query(
    `SELECT ${VERSIONS.columns} FROM sanctions_list_versions ORDER BY id DESC LIMIT $1`,
    [limit],
  );
  return rows.map(VERSIONS.fromRow);
}

const entryFromRow = rowMapper<ScreeningListEntry>({
  entryId: String,
  name: String,
  aliases: stored,
  type: stored,
  country: nullableText,
  dateOfBirth: nullableText,
  program: nullableText,
  nameNormalized: String,
  aliasesNormalized: stored,
});

/** One page of a version's entries in entry id order, after `afterEntryId` (the primary key serves it). */
export async function listEntriesPage(
  db: Queryable,
  versionId: string,
  afterEntryId: string | undefined,
  limit: number,
): Promise<ScreeningListEntry[]> {
  const rows = await db.query(
    `SELECT entry_id, name, aliases, type, country, date_of_birth, program, name_normalized, aliases_normalized
       FROM sanctions_list_entries
      WHERE version_id = $1 AND entry_id > $2
      ORDER BY entry_id
      LIMIT $3`,
    // Every entry id is non-empty, so '' starts before the first.
    [versionId, afterEntryId ?? '', limit],
  );
  return rows.map(entryFromRow);
}
