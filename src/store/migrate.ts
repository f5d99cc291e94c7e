/**
 * Plain SQL files in migrations/, applied in name order, each recorded in schema_migrations.
 * All pending files run in one transaction behind a transaction-scoped advisory lock, so two processes
 * migrating at once serialise: the second waits, then finds nothing left to do.
 */
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Store } from './store.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
/** An arbitrary constant every Mkoba process uses for the migration lock. */
const MIGRATION_LOCK_KEY = 7_345_001;

export interface MigrationResult {
  applied: string[];
}

export async function listMigrations(): Promise<{ version: string; sql: string }[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
  return Promise.all(
    files.map(async (file) => ({
      version: file.replace(/\.sql$/, ''),
      sql: await readFile(MIGRATIONS_DIR + file, 'utf8'),
    })),
  );
}

export async function migrate(store: Store): Promise<MigrationResult> {
  const migrations = await listMigrations();
  return store.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version),
    );
    const applied: string[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [migration.version]);
      applied.push(migration.version);
    }
    return { applied };
  });
}
