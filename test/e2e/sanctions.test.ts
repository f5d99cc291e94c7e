/**
 * `mkoba sanctions import` and `mkoba sanctions list` as an operator runs them: real processes on a
 * temporary MKOBA_DATA_DIR, alone and beside a running server (which then reads the file and loads it over
 * the control channel), and against PostgreSQL (DATABASE_URL) when TEST_DATABASE_URL is set. A malformed
 * file exits 1 naming its line and field, and the active list stays.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSchema, dropSchema } from '../../src/store/postgres.ts';
import { TEST_DATABASE_URL } from '../support/harness.ts';
import {
  killAllMkobaProcesses,
  MkobaProcesses,
  mkobaEnv,
  READINESS_LAST_RESORT_MS,
  temporaryDataDir,
  waitForBanner,
} from './mkobaProcess.ts';

/** Creating an embedded database and starting a server, on a machine busy with other suites. */
const DATABASE_CREATING_TEST_TIMEOUT_MS = 2 * READINESS_LAST_RESORT_MS;
const HEADER = 'id,name,aliases,type,country,date_of_birth,program';
const VERSION_ID = /^sl_[0-9a-z]{26}$/;

afterAll(killAllMkobaProcesses);

const files = mkdtempSync(path.join(tmpdir(), 'mkoba-e2e-sanctions-'));
afterAll(() => rmSync(files, { recursive: true, force: true }));
const malformed = path.join(files, 'malformed.csv');
writeFileSync(
  malformed,
  `${HEADER}\nA1,Anna Nowak,,person,PL,1970,P\nA2,Jan Nowak,Janek,person,PL,1970-13-01,P\n`,
);
const valid = path.join(files, 'valid.csv');
writeFileSync(
  valid,
  `${HEADER}\nB1,Berta Kowalska,Bertha Kowalski,person,PL,1971,P\nB2,Wisla Shipping Ltd,,entity,PL,,P\n`,
);

describe.concurrent('mkoba sanctions on an embedded database', () => {
  const mkoba = new MkobaProcesses();
  afterAll(() => mkoba.killAll());

  it('refuses a malformed file alone, naming the line and field, with a non-zero exit', {
    timeout: DATABASE_CREATING_TEST_TIMEOUT_MS,
  }, async () => {
    const data = temporaryDataDir();
    try {
      const env = mkobaEnv({ MKOBA_DATA_DIR: data.dir });
      const refused = await mkoba.run(['sanctions', 'import', malformed], env);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(
        /mkoba: sanctions list malformed\.csv refused: line 3, field date_of_birth: must be YYYY-MM-DD, YYYY or empty.* \(nothing was imported; the active list is none\)/,
      );
      const listed = await mkoba.run(['sanctions', 'list'], env);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toBe('');
      expect(listed.stderr).toMatch(/no sanctions list imported yet/);
    } finally {
      data.remove();
    }
  });

  it('imports through a running server that holds the database, and refuses there too', {
    timeout: DATABASE_CREATING_TEST_TIMEOUT_MS,
  }, async () => {
    const data = temporaryDataDir();
    try {
      const env = mkobaEnv({ MKOBA_DATA_DIR: data.dir, PORT: '0' });
      const server = await mkoba.start(['serve'], env);
      await waitForBanner(server);
      // The sandbox seed loaded the sample list.
      const seeded = await mkoba.run(['sanctions', 'list'], env);
      expect(seeded.code, seeded.stderr).toBe(0);
      const [sampleLine] = seeded.stdout.trim().split('\n');
      expect(sampleLine).toMatch(/^\*\tsl_\S+\tactive\t48 entries\tsample\.csv\t/);
      const sampleId = sampleLine?.split('\t')[1] ?? '';

      const imported = await mkoba.run(['sanctions', 'import', path.relative(process.cwd(), valid)], env);
      expect(imported.code, imported.stderr).toBe(0);
      const versionId = imported.stdout.trim();
      expect(versionId).toMatch(VERSION_ID);
      expect(imported.stderr).toContain(
        `imported valid.csv as sanctions list version ${versionId}, now active`,
      );
      expect(imported.stderr).toMatch(/entries 2 \(persons 1, entities 1\), aliases 1, in \d+\.\d\d s/);
      expect(imported.stderr).toContain(`retired ${sampleId}`);

      const refused = await mkoba.run(['sanctions', 'import', malformed], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`line 3, field date_of_birth: must be YYYY-MM-DD, YYYY or empty`);
      expect(refused.stderr).toContain(`the active list is ${versionId}`);

      const listed = await mkoba.run(['sanctions', 'list'], env);
      expect(
        listed.stdout
          .trim()
          .split('\n')
          .map((line) => line.split('\t').slice(0, 3)),
      ).toEqual([
        ['*', versionId, 'active'],
        [' ', sampleId, 'retired'],
      ]);
      expect((await server.stop()).code).toBe(0);
    } finally {
      data.remove();
    }
  });
});

describe.runIf(TEST_DATABASE_URL)('mkoba sanctions on PostgreSQL', () => {
  const mkoba = new MkobaProcesses();
  afterAll(() => mkoba.killAll());

  it('imports, refuses, and lists against DATABASE_URL directly', {
    timeout: DATABASE_CREATING_TEST_TIMEOUT_MS,
  }, async () => {
    const schema = `e2e_sanctions_${randomBytes(4).toString('hex')}`;
    const base = TEST_DATABASE_URL ?? '';
    await createSchema(base, schema);
    try {
      // node-postgres takes libpq's `options` from the URL: this process's tables live in their own schema.
      const url = new URL(base);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const env = mkobaEnv({ DATABASE_URL: url.toString(), MKOBA_ENV: 'production' });
      const imported = await mkoba.run(['sanctions', 'import', valid], env);
      expect(imported.code, imported.stderr).toBe(0);
      const versionId = imported.stdout.trim();
      expect(versionId).toMatch(VERSION_ID);
      const refused = await mkoba.run(['sanctions', 'import', malformed], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('line 3, field date_of_birth:');
      expect(refused.stderr).toContain(`the active list is ${versionId}`);
      const listed = await mkoba.run(['sanctions', 'list'], env);
      expect(listed.stdout.trim().split('\t').slice(0, 4)).toEqual(['*', versionId, 'active', '2 entries']);
    } finally {
      await dropSchema(base, schema);
    }
  });
});
