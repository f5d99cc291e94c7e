/**
 * Plain SQL files in migrations/ named NNNN_description.sql, applied in number order, each recorded in
 * schema_migrations. All pending files run in one transaction behind a transaction-scoped advisory lock,
 * so two processes migrating at once serialise: the second waits, then finds nothing left to do. A
 * failing file rolls the whole run back and is named in the error.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Queryable, Store } from './store.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
/** Four digits first, so that name order is number order. */
const MIGRATION_FILE_PATTERN = /^(\d{4})_[a-z0-9_]+\.sql$/;
/** An arbitrary constant every Mkoba process uses for the migration lock. */
export const MIGRATION_LOCK_KEY = 7_345_001;

export interface Migration {
  version: string;
  sql: string;
}

export interface MigrationResult {
  applied: string[];
}

export async function listMigrations(directory: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(directory)).filter((f) => f.endsWith('.sql')).sort();
  const numbers = new Set<string>();
  for (const file of files) {
    const number = MIGRATION_FILE_PATTERN.exec(file)?.[1];
    if (number === undefined) {
      throw new Error(`migration file '${file}' is not named NNNN_lowercase_description.sql`);
    }
    if (numbers.has(number)) throw new Error(`two migration files are numbered ${number}`);
    numbers.add(number);
  }
  return Promise.all(
    files.map(async (file) => ({
      version: file.replace(/\.sql$/, ''),
      sql: await readFile(path.join(directory, file), 'utf8'),
    })),
  );
}

async function ensureMigrationsTable(db: Queryable): Promise<void> {
  await db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
  );
}

export async function migrate(store: Store, migrations?: Migration[]): Promise<MigrationResult> {
  const all = migrations ?? (await listMigrations());
  return store.transaction(async (tx) => {
    // The connection's time-outs are for requests: a migration may wait for another process's migration
    // and may rewrite a large table.
    await tx.exec('SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0');
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await ensureMigrationsTable(tx);
    const done = new Set(
      (await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version),
    );
    const applied: string[] = [];
    for (const migration of all) {
      if (done.has(migration.version)) continue;
      try {
        await tx.exec(migration.sql);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new Error(`migration ${migration.version} failed: ${reason}`, { cause: error });
      }
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [migration.version]);
      applied.push(migration.version);
    }
    return { applied };
  });
}

/** The recorded migrations, oldest first; none when the database was never migrated. */
export async function listAppliedMigrations(store: Store): Promise<string[]> {
  const [table] = await store.query<{ present: boolean }>(
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS present",
  );
  if (!table?.present) return [];
  const rows = await store.query<{ version: string }>(
    'SELECT version FROM schema_migrations ORDER BY version',
  );
  return rows.map((r) => r.version);
}
