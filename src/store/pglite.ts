/** The embedded driver: PGlite (PostgreSQL compiled to WebAssembly) in a data directory or in memory. */
import { PGlite, type Transaction } from '@electric-sql/pglite';
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

/** `dataDir` undefined means in memory (tests). PGlite runs one session, so its own mutex serialises transactions. */
export async function openPgliteStore(dataDir: string | undefined): Promise<Store> {
  const db = dataDir === undefined ? new PGlite() : new PGlite(dataDir);
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
  };
}
