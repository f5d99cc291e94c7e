/**
 * The reads of a setting an organization keeps in numbered versions (the authorization policy, the fee
 * schedule), one row a version keyed by (organization_id, version): the newest, one by its number, a page
 * newest first, and the lock that serialises its writers.
 */
import type { Queryable } from '../store.ts';

/** A table of versions as its repository reads it. */
export interface VersionTable<T> {
  name: string;
  columns: string;
  fromRow: (row: Record<string, unknown>) => T;
  /** The advisory lock's name: writers of one organization's setting take it in turn. */
  lockName: string;
}

/** A page of versions: those below `beforeVersion` (all when undefined), `rowsMax` at most. */
export interface VersionPage {
  beforeVersion: number | undefined;
  rowsMax: number;
}

/** The reads of `table`'s versions, and the lock its writers take. */
export function versionedRecords<T>(table: VersionTable<T>) {
  return {
    /** The organization's newest version, if it has written one. */
    async findCurrent(db: Queryable, organizationId: string): Promise<T | undefined> {
      const [row] = await db.query(
        `SELECT ${table.columns} FROM ${table.name} WHERE organization_id = $1 ORDER BY version DESC LIMIT 1`,
        [organizationId],
      );
      return row && table.fromRow(row);
    },

    async findVersion(db: Queryable, organizationId: string, version: number): Promise<T | undefined> {
      const [row] = await db.query(
        `SELECT ${table.columns} FROM ${table.name} WHERE organization_id = $1 AND version = $2`,
        [organizationId, version],
      );
      return row && table.fromRow(row);
    },

    /** Newest first, up to `rowsMax` below `beforeVersion` (when given); served by the primary key. */
    async listVersions(db: Queryable, organizationId: string, page: VersionPage): Promise<T[]> {
      const rows = await db.query(
        `SELECT ${table.columns} FROM ${table.name} WHERE organization_id = $1 AND ($2::int IS NULL OR version < $2)
      ORDER BY version DESC LIMIT $3`,
        [organizationId, page.beforeVersion ?? null, page.rowsMax],
      );
      return rows.map(table.fromRow);
    },

    /**
     * Serialises the organization's writers for the rest of the transaction: with the primary key refusing a
     * second writer of one number, versions never fork.
     */
    async lockWrites(db: Queryable, organizationId: string): Promise<void> {
      await db.query(`SELECT pg_advisory_xact_lock(hashtext('${table.lockName}'), hashtext($1))`, [
        organizationId,
      ]);
    },
  };
}
