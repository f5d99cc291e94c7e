/**
 * Sanctions list import and the switch of the running screening, on each database: a valid file becomes
 * the active version with its counts; a malformed one is refused naming its line and field, with the
 * previous version still active and none of its rows left; each import is a new version and retires the
 * previous one; the database keeps one version active and loaded entries fixed; a screening during or
 * after an import sees the whole old list or the whole new one; a process starts building a new version
 * within SANCTIONS_LIST_CHECK_INTERVAL_MS of its activation (on a controlled clock), at once on its NOTIFY,
 * and screens with it once built. test/sanctions-switch.test.ts holds a build open across a transfer.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import { type Deps, systemDeps } from '../src/app/deps.ts';
import { seedSandbox } from '../src/app/seed.ts';
import { SANCTIONS_LIST_COLUMNS } from '../src/domain/screening/listFile.ts';
import {
  importSanctionsList,
  SANCTIONS_IMPORT_BATCH_ROWS,
  SanctionsImportError,
} from '../src/modules/compliance/useCases/sanctions/importList.ts';
import {
  SAMPLE_SANCTIONS_LIST_FILE,
  seedSampleSanctionsList,
} from '../src/modules/compliance/useCases/sanctions/sampleList.ts';
import {
  SANCTIONS_LIST_CHECK_INTERVAL_MS,
  screeningIndexSettled,
  watchSanctionsList,
} from '../src/modules/compliance/useCases/sanctions/screeningIndex.ts';
import { screenParty } from '../src/modules/compliance/useCases/sanctions/screenParty.ts';
import { migrate } from '../src/store/migrate.ts';
import { BACKENDS, openTestDatabase, type TestDatabase } from './support/harness.ts';

const HEADER = SANCTIONS_LIST_COLUMNS.join(',');
/** A bound on waiting for a NOTIFY to arrive from the database (real time, not the screening clock). */
const NOTIFY_WAIT_MS_MAX = 10_000;

const directory = mkdtempSync(path.join(tmpdir(), 'mkoba-sanctions-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function csvFile(name: string, lines: readonly string[]): string {
  const file = path.join(directory, name);
  writeFileSync(file, `${[HEADER, ...lines].join('\n')}\n`);
  return file;
}

/** `count` persons named `<first> Surname<i>`; the first name tells the lists apart. */
function generatedList(name: string, first: string, count: number, badLine?: { at: number; text: string }) {
  const lines = Array.from(
    { length: count },
    (_, i) => `${first}-${i},${first} Kowalczyk${i},,person,PL,1970,TEST`,
  );
  if (badLine) lines[badLine.at - 2] = badLine.text;
  return csvFile(name, lines);
}

async function tableCounts(db: TestDatabase) {
  const [row] = await db.store.query<{ versions: string; loading: string; active: string; entries: string }>(
    `SELECT (SELECT count(*) FROM sanctions_list_versions) AS versions,
            (SELECT count(*) FROM sanctions_list_versions WHERE status = 'loading') AS loading,
            (SELECT count(*) FROM sanctions_list_versions WHERE status = 'active') AS active,
            (SELECT count(*) FROM sanctions_list_entries) AS entries`,
  );
  return {
    versions: Number(row?.versions),
    loading: Number(row?.loading),
    active: Number(row?.active),
    entries: Number(row?.entries),
  };
}

async function refusal(promise: Promise<unknown>): Promise<SanctionsImportError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SanctionsImportError);
  return error as SanctionsImportError;
}

describe.each(BACKENDS)('sanctions list import (%s)', (backend) => {
  let db: TestDatabase;
  let deps: Deps;
  let clockMs = Date.parse('2026-11-24T08:00:00Z');
  let sampleVersionId: string;

  beforeAll(async () => {
    db = await openTestDatabase(backend);
    await migrate(db.store);
    deps = { ...systemDeps(db.store, 'production'), now: () => new Date(clockMs) };
  });
  afterAll(async () => {
    await db?.close();
  });

  it.sequential('screens nothing before any list is imported', async () => {
    expect(await screenParty(deps, { name: 'Viktor Dragomirov' })).toEqual({
      listVersionId: null,
      decision: 'clear',
      scoreMin: 8_800,
      hits: [],
    });
  });

  it.sequential('imports a valid file as the active version, with its counts', async () => {
    const progress: number[] = [];
    const summary = await importSanctionsList(deps, SAMPLE_SANCTIONS_LIST_FILE, {
      onProgress: (p) => progress.push(p.entries),
    });
    expect(summary).toMatchObject({
      versionId: expect.stringMatching(/^sl_[0-9a-z]{26}$/),
      sourceFileName: 'sample.csv',
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      entries: 48,
      persons: 31,
      entities: 17,
      aliases: 50,
      retiredVersionId: null,
    });
    expect(progress.at(-1)).toBe(48);
    sampleVersionId = summary.versionId;
    const listed = await runAdminCommand(deps, { name: 'sanctions.list' });
    expect(listed).toEqual({
      name: 'sanctions.list',
      versions: [
        {
          id: sampleVersionId,
          status: 'active',
          sourceFileName: 'sample.csv',
          entries: 48,
          createdAt: new Date(clockMs).toISOString(),
          activatedAt: new Date(clockMs).toISOString(),
          retiredAt: null,
        },
      ],
    });
    expect(await tableCounts(db)).toEqual({ versions: 1, loading: 0, active: 1, entries: 48 });
  });

  it.sequential('screens against it once the check interval has passed, recording the version', async () => {
    clockMs += SANCTIONS_LIST_CHECK_INTERVAL_MS;
    const result = await screenParty(deps, {
      name: 'Mr Victor DRAGOMIROV',
      country: 'ru',
      dateOfBirth: '1968',
    });
    expect(result).toMatchObject({
      listVersionId: sampleVersionId,
      decision: 'hit',
      hits: [{ entryId: 'MKS-0001', score: 9_400, program: 'SANDBOX-EUROPE' }],
    });
    expect(await screenParty(deps, { name: 'Viktor Dragan' })).toMatchObject({
      listVersionId: sampleVersionId,
      decision: 'clear',
      hits: [],
    });
  });

  it.sequential.each([
    ['a type outside the vocabulary', ['A1,Anna Nowak,,person,PL,,P', 'A2,Boat,,vessel,PL,,P'], 3, 'type'],
    ['an impossible date', ['A1,Anna Nowak,,person,PL,1970-02-30,P'], 2, 'date_of_birth'],
    ['an unknown country', ['A1,Anna Nowak,,person,QQ,,P'], 2, 'country'],
    ['a missing field', ['A1,Anna Nowak,,person,PL,1970'], 2, 'program'],
    ['a repeated id', ['A1,Anna Nowak,,person,PL,,P', 'A1,Jan Nowak,,person,PL,,P'], 3, 'id'],
    ['a stray quote', ['A1,Anna Nowak,,person,PL,,P', 'A2,"Jan" Nowak,,person,PL,,P'], 3, 'name'],
  ])('refuses a file with %s, naming the line and field', async (_what, lines, line, field) => {
    const before = await tableCounts(db);
    const error = await refusal(importSanctionsList(deps, csvFile('bad.csv', lines)));
    expect(error.fileError).toMatchObject({ line, field });
    expect(error.message).toMatch(
      new RegExp(
        `^sanctions list bad\\.csv refused: line ${line}, field ${field}: .+ \\(nothing was imported; the active list is ${sampleVersionId}\\)$`,
      ),
    );
    expect(await tableCounts(db)).toEqual(before);
  });

  it.sequential('refuses a header without entries, an unknown column, an empty file and a missing file', async () => {
    const header = await refusal(importSanctionsList(deps, csvFile('header-only.csv', [])));
    expect(header.message).toMatch(/line 2: no entries after the header/);
    const unknown = path.join(directory, 'unknown.csv');
    writeFileSync(unknown, 'id,name,aliases,kind,country,date_of_birth,program\n');
    expect((await refusal(importSanctionsList(deps, unknown))).fileError).toMatchObject({
      line: 1,
      field: 'kind',
    });
    const empty = path.join(directory, 'empty.csv');
    writeFileSync(empty, '');
    expect((await refusal(importSanctionsList(deps, empty))).message).toMatch(/line 1: no header row/);
    expect((await refusal(importSanctionsList(deps, path.join(directory, 'absent.csv')))).message).toMatch(
      /cannot read/,
    );
    expect(await tableCounts(db)).toEqual({ versions: 1, loading: 0, active: 1, entries: 48 });
  });

  it.sequential('leaves no rows of a file refused after several batches were written', async () => {
    const at = SANCTIONS_IMPORT_BATCH_ROWS * 2 + 10;
    const file = generatedList('late.csv', 'Late', at + 5, {
      at,
      text: 'X,Late Error,,person,PL,19700,TEST',
    });
    const error = await refusal(importSanctionsList(deps, file));
    expect(error.fileError).toMatchObject({ line: at, field: 'date_of_birth' });
    expect(await tableCounts(db)).toEqual({ versions: 1, loading: 0, active: 1, entries: 48 });
    clockMs += SANCTIONS_LIST_CHECK_INTERVAL_MS;
    expect((await screenParty(deps, { name: 'Late Kowalczyk7' })).listVersionId).toBe(sampleVersionId);
  });

  it.sequential('makes each import a new version and retires the previous one', async () => {
    const summary = await importSanctionsList(deps, generatedList('second.csv', 'Second', 30));
    expect(summary).toMatchObject({
      entries: 30,
      persons: 30,
      entities: 0,
      retiredVersionId: sampleVersionId,
    });
    const listed = await runAdminCommand(deps, { name: 'sanctions.list' });
    expect(listed.name === 'sanctions.list' && listed.versions.map((v) => [v.id, v.status])).toEqual([
      [summary.versionId, 'active'],
      [sampleVersionId, 'retired'],
    ]);
    // Retired versions keep their entries: a recorded hit can always be traced to its entry.
    expect(await tableCounts(db)).toEqual({ versions: 2, loading: 0, active: 1, entries: 78 });
  });

  it.sequential('starts building a version within the check interval of its activation, never before, and switches once built', async () => {
    clockMs += SANCTIONS_LIST_CHECK_INTERVAL_MS;
    // The second version, imported by the test before, is noticed here and built.
    await screenParty(deps, { name: 'Second Kowalczyk3' });
    await screeningIndexSettled(deps);
    const before = await screenParty(deps, { name: 'Second Kowalczyk3' });
    const current = before.listVersionId;
    expect(before.decision).toBe('hit');
    const third = await importSanctionsList(deps, generatedList('third.csv', 'Third', 20));
    clockMs += SANCTIONS_LIST_CHECK_INTERVAL_MS - 1;
    const stale = await screenParty(deps, { name: 'Third Kowalczyk3' });
    expect(stale).toMatchObject({ listVersionId: current, decision: 'clear' });
    await screeningIndexSettled(deps);
    expect(await screenParty(deps, { name: 'Third Kowalczyk3' })).toMatchObject({
      listVersionId: current,
      decision: 'clear',
    });
    clockMs += 1;
    // This screening notices the new version and starts its build, answered by the version in use.
    const noticing = await screenParty(deps, { name: 'Third Kowalczyk3' });
    expect(noticing).toMatchObject({ listVersionId: current, decision: 'clear' });
    await screeningIndexSettled(deps);
    const switched = await screenParty(deps, { name: 'Third Kowalczyk3' });
    expect(switched).toMatchObject({ listVersionId: third.versionId, decision: 'hit' });
    expect((await screenParty(deps, { name: 'Second Kowalczyk3' })).decision).toBe('clear');
  });

  it.sequential('switches at once when the activation is notified, with the clock standing still', async () => {
    const stop = await watchSanctionsList(deps, (error) => {
      throw error;
    });
    try {
      clockMs += SANCTIONS_LIST_CHECK_INTERVAL_MS;
      await screenParty(deps, { name: 'warm up' });
      const fourth = await importSanctionsList(deps, generatedList('fourth.csv', 'Fourth', 20));
      const deadline = Date.now() + NOTIFY_WAIT_MS_MAX;
      let seen = (await screenParty(deps, { name: 'Fourth Kowalczyk1' })).listVersionId;
      while (seen !== fourth.versionId && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        seen = (await screenParty(deps, { name: 'Fourth Kowalczyk1' })).listVersionId;
      }
      expect(seen).toBe(fourth.versionId);
    } finally {
      await stop();
    }
  });

  it.sequential('lets a screening during an import see the whole old list or the whole new one', async () => {
    clockMs += SANCTIONS_LIST_CHECK_INTERVAL_MS;
    const old = await screenParty(deps, { name: 'Fourth Kowalczyk1' });
    const oldVersion = old.listVersionId;
    const importing = importSanctionsList(
      deps,
      generatedList('fifth.csv', 'Fifth', SANCTIONS_IMPORT_BATCH_ROWS * 3),
    );
    let done = false;
    void importing.finally(() => {
      done = true;
    });
    // Each screening, by the version it reports: the old list whole (its name a hit, the new one's clear)
    // or the new list whole; a swap may fall between two screenings, never inside one, and never back.
    const seen: { version: string | null; listedInOld: boolean; hit: boolean }[] = [];
    const screenBoth = async () => {
      // Every screening looks at the active version again.
      clockMs += SANCTIONS_LIST_CHECK_INTERVAL_MS;
      for (const [name, listedInOld] of [
        ['Fourth Kowalczyk1', true],
        [`Fifth Kowalczyk${SANCTIONS_IMPORT_BATCH_ROWS * 3 - 1}`, false],
      ] as const) {
        const result = await screenParty(deps, { name });
        seen.push({ version: result.listVersionId, listedInOld, hit: result.decision === 'hit' });
      }
    };
    while (!done) {
      await screenBoth();
      // An embedded database answers without a turn of the event loop: let the import read its file.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const fifth = await importing;
    await screenBoth();
    await screeningIndexSettled(deps);
    await screenBoth();
    expect(seen[0]?.version).toBe(oldVersion);
    const firstNew = seen.findIndex((s) => s.version !== oldVersion);
    expect(firstNew).toBeGreaterThan(0);
    seen.forEach((s, i) => {
      expect(s.version).toBe(i < firstNew ? oldVersion : fifth.versionId);
      expect(s.hit).toBe(s.version === oldVersion ? s.listedInOld : !s.listedInOld);
    });
    expect(seen.at(-1)?.version).toBe(fifth.versionId);
  });

  it.sequential('has the database keep one version active and loaded entries fixed', async () => {
    const [active] = await db.store.query<{ id: string }>(
      `SELECT id FROM sanctions_list_versions WHERE status = 'active'`,
    );
    const activeId = active?.id ?? '';
    await expect(
      db.store.query(
        `INSERT INTO sanctions_list_versions (id, source_file_name, sha256, entry_count, person_count, status, created_at, activated_at)
         VALUES ('sl_second_active', 'x.csv', repeat('a', 64), 1, 1, 'active', now(), now())`,
      ),
    ).rejects.toThrow(/sanctions_list_versions_one_active/);
    await expect(
      db.store.query(`UPDATE sanctions_list_entries SET name = 'changed' WHERE version_id = $1`, [activeId]),
    ).rejects.toThrow(/never changed/);
    await expect(
      db.store.query(
        `INSERT INTO sanctions_list_entries (version_id, entry_id, name, type, name_normalized)
         VALUES ($1, 'late', 'Late Entry', 'person', 'entry late')`,
        [activeId],
      ),
    ).rejects.toThrow(/only while their version is loading/);
    await expect(
      db.store.query('DELETE FROM sanctions_list_versions WHERE id = $1', [sampleVersionId]),
    ).rejects.toThrow(/delete refused/);
    await expect(
      db.store.query(`UPDATE sanctions_list_versions SET status = 'active' WHERE id = $1`, [sampleVersionId]),
    ).rejects.toThrow(/change from retired to active refused/);
  });
});

describe.each(BACKENDS)('the sample list in the sandbox seed (%s)', (backend) => {
  let db: TestDatabase;
  afterAll(async () => {
    await db?.close();
  });

  it('is imported once by the seed, and never over a list the operator imported', async () => {
    db = await openTestDatabase(backend);
    await migrate(db.store);
    const deps = systemDeps(db.store, 'sandbox');
    await seedSandbox(deps, undefined);
    await seedSandbox(deps, undefined);
    const listed = await runAdminCommand(deps, { name: 'sanctions.list' });
    expect(
      listed.name === 'sanctions.list' && listed.versions.map((v) => [v.sourceFileName, v.status, v.entries]),
    ).toEqual([['sample.csv', 'active', 48]]);
    expect((await screenParty(deps, { name: 'Viktor Dragomirov' })).decision).toBe('hit');

    const other = await openTestDatabase(backend);
    try {
      await migrate(other.store);
      const otherDeps = systemDeps(other.store, 'sandbox');
      await importSanctionsList(otherDeps, generatedList('operator.csv', 'Operator', 3));
      await seedSampleSanctionsList(otherDeps);
      const versions = await runAdminCommand(otherDeps, { name: 'sanctions.list' });
      expect(versions.name === 'sanctions.list' && versions.versions.map((v) => v.sourceFileName)).toEqual([
        'operator.csv',
      ]);
    } finally {
      await other.close();
    }
  });
});
