import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAppliedMigrations, listMigrations, migrate } from '../src/store/migrate.ts';
import { openPostgresStore } from '../src/store/postgres.ts';
import type { Store } from '../src/store/store.ts';
import { BACKENDS, openTestDatabase, TEST_DATABASE_URL, type TestDatabase } from './support/harness.ts';

describe.each(BACKENDS)('migrations on %s', (backend) => {
  let db: TestDatabase;
  /** A second connection pool to the same database, as a second process would have; PGlite has one session. */
  let other: Store;
  let versions: string[];

  beforeAll(async () => {
    db = await openTestDatabase(backend, { empty: true });
    other =
      backend === 'postgres' && TEST_DATABASE_URL
        ? await openPostgresStore({ connectionString: db.url as string, schema: db.schema })
        : db.store;
    versions = (await listMigrations()).map((m) => m.version);
  });
  afterAll(async () => {
    if (other !== db.store) await other.close();
    await db.close();
  });

  it('applies every migration once when two migrate at the same time, each recorded once', async () => {
    expect(await listAppliedMigrations(db.store)).toEqual([]);
    const [first, second] = await Promise.all([migrate(db.store), migrate(other)]);
    // One of them did all the work; the other waited for the lock and found nothing left.
    expect([...first.applied, ...second.applied]).toEqual(versions);
    expect([first.applied.length, second.applied.length].sort()).toEqual([0, versions.length]);
    expect(await listAppliedMigrations(db.store)).toEqual(versions);
  });

  it('is a no-op the second time', async () => {
    expect(await migrate(db.store)).toEqual({ applied: [] });
    expect(await migrate(other)).toEqual({ applied: [] });
    expect(await listAppliedMigrations(other)).toEqual(versions);
  });

  it('rolls a failing run back and names the failing file', async () => {
    const migrations = await listMigrations();
    const fine = { version: '9998_fine', sql: 'CREATE TABLE migration_probe (id int)' };
    const broken = { version: '9999_broken', sql: 'SELEC nonsense' };
    await expect(migrate(db.store, [...migrations, fine, broken])).rejects.toThrow(
      /^migration 9999_broken failed: /,
    );
    expect(await listAppliedMigrations(db.store)).toEqual(versions);
    // 9998 was rolled back with it, so it applies cleanly once the broken file is gone.
    expect(await migrate(db.store, [...migrations, fine])).toEqual({ applied: ['9998_fine'] });
  });
});

describe('migration files', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mkoba-migrations-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('are numbered with four digits so that name order is apply order', async () => {
    for (const { version } of await listMigrations()) expect(version).toMatch(/^\d{4}_[a-z0-9_]+$/);

    writeFileSync(path.join(dir, '0001_first.sql'), 'SELECT 1');
    writeFileSync(path.join(dir, '10_second.sql'), 'SELECT 1');
    await expect(listMigrations(dir)).rejects.toThrow(/'10_second.sql' is not named NNNN_/);
  });

  it('never share a number', async () => {
    rmSync(path.join(dir, '10_second.sql'));
    writeFileSync(path.join(dir, '0001_again.sql'), 'SELECT 1');
    await expect(listMigrations(dir)).rejects.toThrow(/two migration files are numbered 0001/);
  });
});
