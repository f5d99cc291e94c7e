/**
 * The embedded driver: PGlite (PostgreSQL compiled to WebAssembly) in a data directory or in memory. The
 * package is imported when a store is opened, so a process on PostgreSQL never loads it, compiled or not
 * (bin/compiledSources.js puts a module's static imports of packages at the top of the one file).
 */
import type { PGlite, Transaction } from '@electric-sql/pglite';
import type { Queryable, Row, Store } from './store.ts';

function wrap(target: PGlite | Transaction): Queryable {
  return {
    async query<R extends Row>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
      const result = await target.query<R>(sql, params as unknown[]);
      return result.rows;
    },
    async exec(sql: string): Promise<void> {
      await target.exec(sql);
    },
  };
}

export interface PgliteStoreOptions {
  /**
   * A data directory dumped earlier (`dumpPgliteDataDir`) to start from instead of an empty database: an
   * in-memory store opened from one skips initdb and whatever the dump already holds (tests start from a
   * migrated template this way).
   */
  loadDataDir?: Blob;
}

/** `dataDir` undefined means in memory (tests). PGlite runs one session, so its own mutex serialises transactions. */
export async function openPgliteStore(
  dataDir: string | undefined,
  options: PgliteStoreOptions = {},
): Promise<Store> {
  const { PGlite } = await import('@electric-sql/pglite');
  const db = new PGlite({
    ...(dataDir === undefined ? {} : { dataDir }),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
  });
  await db.waitReady;
  const base = wrap(db);
  return {
    driver: 'pglite',
    query: base.query,
    exec: base.exec,
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx))),
    // One session: a NOTIFY committed by any transaction reaches this callback in process.
    listen: (channel, onNotify) => db.listen(channel, () => onNotify()),
    close: () => db.close(),
    dumpDataDir: async () => db.dumpDataDir('none'),
  };
}
