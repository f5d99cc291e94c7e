/**
 * Runs once before the test files: migrates an empty embedded database and keeps its data directory as a
 * template, so each test file's PGlite database starts from it (harness.ts) instead of running initdb and
 * every migration again; with TEST_DATABASE_URL, does the same on PostgreSQL with a template database that
 * each test database is copied from (CREATE DATABASE … TEMPLATE). Templates are named by the migrations'
 * contents, so a changed migration makes a new one; each is rebuilt whenever missing.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { listMigrations, migrate } from '../../src/store/migrate.ts';
import { openPgliteStore } from '../../src/store/pglite.ts';
import { ensurePostgresTemplate } from './postgresTemplate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated embedded database's data directory tarball (see test/support/globalSetup.ts). */
    pgliteTemplatePath: string;
    /** The migrated PostgreSQL template database's name, when TEST_DATABASE_URL is set (postgresTemplate.ts). */
    postgresTemplateDatabase: string | undefined;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  // Named by everything that shapes it: the migrations, the code applying them, and PGlite's version.
  const hash = createHash('sha256');
  for (const migration of await listMigrations()) hash.update(migration.version).update(migration.sql);
  hash.update(await readFile(new URL('../../src/store/migrate.ts', import.meta.url)));
  hash.update(
    await readFile(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url)),
  );
  const templateId = hash.digest('hex').slice(0, 16);
  const file = path.join(tmpdir(), `mkoba-test-template-${templateId}.tar`);
  if (!existsSync(file)) {
    const store = await openPgliteStore(undefined);
    try {
      await migrate(store);
      const dump = await store.dumpDataDir?.();
      if (!dump) throw new Error('the embedded store cannot dump its data directory');
      const partial = `${file}.${process.pid}.partial`;
      await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
      await rename(partial, file);
    } finally {
      await store.close();
    }
  }
  // Read once here, so a broken template fails the run at once rather than in every file.
  if ((await readFile(file)).length === 0) throw new Error(`empty test template ${file}`);
  project.provide('pgliteTemplatePath', file);
  const databaseUrl = process.env.TEST_DATABASE_URL;
  project.provide(
    'postgresTemplateDatabase',
    databaseUrl ? await ensurePostgresTemplate(databaseUrl, templateId) : undefined,
  );
}
