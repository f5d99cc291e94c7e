/**
 * The screening case (`npm run bench -- --cases screening`): a generated list of invented names (50 000
 * entries by default, deterministic) is imported through the real import path (importSanctionsList, the
 * code of `mkoba sanctions import`) into PGlite, and into PostgreSQL when a database URL is given; then
 * 1 000 names (hits with a typo, swapped words, diacritics, an honorific or an alias; near misses; clean
 * names) are screened one by one through screenParty. Prints the import time, the index build (reading
 * the entries, and building), and the screening total with per-name p50 and p99, as a Markdown table.
 * Then the same list is imported again as a second version, which the process notices (its NOTIFY) and
 * builds beside the index in use while names keep being screened, each after a turn of the event loop as a
 * request arriving would be: how long the switch took, and what a screening waited meanwhile.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemDeps } from '../src/app/deps.ts';
import { SANCTIONS_LIST_COLUMNS } from '../src/domain/screening/listFile.ts';
import { ScreeningIndex } from '../src/domain/screening/screeningIndex.ts';
import { importSanctionsList } from '../src/modules/compliance/useCases/sanctions/importList.ts';
import {
  buildScreeningIndex,
  screeningIndexInUse,
  watchSanctionsList,
} from '../src/modules/compliance/useCases/sanctions/screeningIndex.ts';
import { screenParty } from '../src/modules/compliance/useCases/sanctions/screenParty.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPgliteStore } from '../src/store/pglite.ts';
import { createSchema, dropSchema, openPostgresStore } from '../src/store/postgres.ts';
import type { Store } from '../src/store/store.ts';
import {
  type BenchValues,
  benchBackends,
  benchDatabaseUrl,
  fixed,
  log,
  textOption,
  wholeNumber,
} from './options.ts';
import { percentile, seededRandom } from './stats.ts';

export const SCREENING_USAGE = `Screening (a generated sanctions list imported, then names screened against it):

  --screening-entries N  list entries (BENCH_SCREENING_ENTRIES, default 50000)
  --screening-names N    names screened (BENCH_SCREENING_NAMES, default 1000: 40 % hits, 30 % near
                         misses, 30 % clean)
  --backends, --database-url  as above
`;

export const SCREENING_OPTIONS = {
  'screening-entries': { type: 'string' },
  'screening-names': { type: 'string' },
} as const;

const ENTRIES_DEFAULT = 50_000;
const NAMES_DEFAULT = 1_000;
const ENTRIES_MAX = 1_000_000;
const NAMES_MAX = 100_000;
/** The seed of the generator: the same list and names on every run. */
const GENERATOR_SEED = 20_261_124;
/** The names are screened twice: cold, right after the index is built, then warm. */
const SCREENING_PASSES = 2;
/** A switch to a second version that takes longer than this is reported as not done. */
const SWITCH_WAIT_MS_MAX = 120_000;

const ONSETS = [
  'b',
  'd',
  'g',
  'k',
  'l',
  'm',
  'n',
  'r',
  's',
  't',
  'v',
  'z',
  'ch',
  'sh',
  'kh',
  'br',
  'dr',
  'tr',
  'gr',
];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou', 'ia'];
const CODAS = ['', '', 'n', 'r', 'v', 'k', 'sh', 'l'];
const COUNTRIES = [
  'RU',
  'UA',
  'NG',
  'KE',
  'VE',
  'IR',
  'SY',
  'KP',
  'BY',
  'AE',
  'TR',
  'PK',
  'CN',
  'CO',
  'MX',
  'LB',
];
const ENTITY_WORDS = [
  'Trading',
  'Shipping',
  'Maritime',
  'Petroleum',
  'Holdings',
  'Logistics',
  'Capital',
  'Minerals',
];
const LEGAL_FORMS = ['Ltd', 'LLC', 'S.A.', 'GmbH', 'Company', 'FZE'];
const HONORIFICS = ['Mr', 'Dr.', 'Sheikh', 'Alhaji', 'Hon.'];

interface GeneratedEntry {
  id: string;
  name: string;
  aliases: string[];
  type: 'person' | 'entity';
  country: string;
  dateOfBirth: string;
}

interface Query {
  name: string;
  kind: 'hit' | 'near miss' | 'clean';
}

function capitalised(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** The list and the names to screen, from the seed. */
export function generateScreeningData(entryCount: number, nameCount: number) {
  const random = seededRandom(GENERATOR_SEED);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const word = (syllables: number) => {
    let text = '';
    for (let i = 0; i < syllables; i++)
      text += pick(ONSETS) + pick(VOWELS) + (i === syllables - 1 ? pick(CODAS) : '');
    return capitalised(text);
  };
  // Given names are few and shared by many entries (as on real lists), family names many.
  const givenNames = Array.from({ length: 400 }, () => word(2));
  const familyName = () => word(2 + Math.floor(random() * 2));
  const entries: GeneratedEntry[] = [];
  for (let i = 0; i < entryCount; i++) {
    const entity = random() < 0.2;
    const name = entity
      ? `${word(2)} ${pick(ENTITY_WORDS)} ${pick(LEGAL_FORMS)}`
      : `${pick(givenNames)} ${random() < 0.3 ? `${pick(givenNames)} ` : ''}${familyName()}`;
    const aliases: string[] = [];
    if (random() < 0.4) aliases.push(name.split(' ').reverse().join(' '));
    if (random() < 0.2) aliases.push(`${pick(givenNames)} ${familyName()}`);
    entries.push({
      id: `GEN-${String(i).padStart(7, '0')}`,
      name,
      aliases,
      type: entity ? 'entity' : 'person',
      country: random() < 0.8 ? pick(COUNTRIES) : '',
      dateOfBirth: entity || random() < 0.4 ? '' : `${1940 + Math.floor(random() * 60)}`,
    });
  }
  const variants: ((e: GeneratedEntry) => string)[] = [
    (e) => e.name,
    // One letter changed in the last word.
    (e) =>
      e.name.replace(
        /([a-z])([a-z]*)$/,
        (_m, _first: string, rest: string) => `${rest.length > 2 ? 'x' : 'y'}${rest}`,
      ),
    (e) => e.name.split(' ').reverse().join(', '),
    (e) => e.name.replace(/a/, 'á').replace(/e/, 'é').replace(/o/, 'ö'),
    (e) => `${pick(HONORIFICS)} ${e.name}`,
    (e) => e.aliases[0] ?? e.name.toUpperCase(),
  ];
  const queries: Query[] = [];
  for (let i = 0; i < nameCount; i++) {
    const share = i % 10;
    const entry = pick(entries);
    if (share < 4) {
      queries.push({ name: pick(variants)(entry), kind: 'hit' });
    } else if (share < 7) {
      // A listed given name with another family name.
      queries.push({ name: `${entry.name.split(' ')[0]} ${familyName()}`, kind: 'near miss' });
    } else {
      queries.push({ name: `${word(3)} ${word(3)}`, kind: 'clean' });
    }
  }
  return { entries, queries };
}

function csvField(text: string): string {
  return /[",\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function listCsv(entries: readonly GeneratedEntry[]): string {
  const lines = entries.map((e) =>
    [e.id, e.name, e.aliases.join(';'), e.type, e.country, e.dateOfBirth, 'BENCH'].map(csvField).join(','),
  );
  return `${[SANCTIONS_LIST_COLUMNS.join(','), ...lines].join('\n')}\n`;
}

interface ScreeningRun {
  backend: string;
  importMs: number;
  loadMs: number;
  buildMs: number;
  indexedNames: number;
  firstPassMs: number;
  secondPassMs: number;
  /** Per name, in the second pass. */
  p50Ms: number;
  p99Ms: number;
  hitsByKind: Record<Query['kind'], { hit: number; of: number }>;
  /** From the second version's activation to the first screening by it; NaN when it never came. */
  switchMs: number;
  /** Screenings while the second version was building, all by the first, and the longest wait of one. */
  switchScreenings: number;
  switchP99Ms: number;
  switchMaxMs: number;
}

/**
 * Imports the list again as a second version and screens names, one per turn of the event loop, until one
 * is screened by it: every screening before must be by the first version, none waiting for the build.
 */
async function measureSwitch(
  deps: ReturnType<typeof systemDeps>,
  file: string,
  queries: readonly Query[],
): Promise<Pick<ScreeningRun, 'switchMs' | 'switchScreenings' | 'switchP99Ms' | 'switchMaxMs'>> {
  const stop = await watchSanctionsList(deps, (error) => {
    throw error;
  });
  try {
    const first = (await screeningIndexInUse(deps))?.listVersionId;
    const second = await importSanctionsList(deps, file);
    const activatedAt = performance.now();
    const waits: number[] = [];
    for (let i = 0; performance.now() - activatedAt < SWITCH_WAIT_MS_MAX; i++) {
      const arrived = performance.now();
      await new Promise((resolve) => setImmediate(resolve));
      const result = await screenParty(deps, { name: queries[i % queries.length]?.name ?? 'x' });
      if (result.listVersionId === second.versionId) {
        waits.sort((a, b) => a - b);
        return {
          switchMs: performance.now() - activatedAt,
          switchScreenings: waits.length,
          switchP99Ms: percentile(waits, 99),
          switchMaxMs: waits.at(-1) ?? Number.NaN,
        };
      }
      if (result.listVersionId !== first)
        throw new Error(`screened by ${result.listVersionId} during the switch`);
      waits.push(performance.now() - arrived);
    }
    return { switchMs: Number.NaN, switchScreenings: 0, switchP99Ms: Number.NaN, switchMaxMs: Number.NaN };
  } finally {
    await stop();
  }
}

async function runOn(
  backend: string,
  store: Store,
  file: string,
  entries: readonly GeneratedEntry[],
  queries: readonly Query[],
): Promise<ScreeningRun> {
  await migrate(store);
  const deps = systemDeps(store, 'production');
  log(`screening (${backend}): importing ${entries.length} entries`);
  let started = performance.now();
  const summary = await importSanctionsList(deps, file);
  const importMs = performance.now() - started;

  // The index as a process builds it: the entries read in pages, then indexed. Timed apart.
  started = performance.now();
  const loaded = await buildScreeningIndex(store, summary.versionId);
  const loadAndBuildMs = performance.now() - started;
  started = performance.now();
  const rebuilt = new ScreeningIndex(summary.versionId, loaded.entries);
  const buildMs = performance.now() - started;
  // The process's own index, so that the screenings below find it built.
  await screeningIndexInUse(deps);

  log(`screening (${backend}): screening ${queries.length} names`);
  // Two passes over the same names: the first right after the index is built (cold code), the second warm.
  const passTotalsMs: number[] = [];
  let timings: number[] = [];
  const hitsByKind: ScreeningRun['hitsByKind'] = {
    hit: { hit: 0, of: 0 },
    'near miss': { hit: 0, of: 0 },
    clean: { hit: 0, of: 0 },
  };
  for (let pass = 0; pass < SCREENING_PASSES; pass++) {
    timings = [];
    const passStarted = performance.now();
    for (const query of queries) {
      const one = performance.now();
      const result = await screenParty(deps, { name: query.name });
      timings.push(performance.now() - one);
      if (pass > 0) continue;
      hitsByKind[query.kind].of += 1;
      if (result.decision === 'hit') hitsByKind[query.kind].hit += 1;
    }
    passTotalsMs.push(performance.now() - passStarted);
  }
  timings.sort((a, b) => a - b);
  log(`screening (${backend}): switching to a second version while screening`);
  const switched = await measureSwitch(deps, file, queries);
  return {
    ...switched,
    backend,
    importMs,
    loadMs: loadAndBuildMs - buildMs,
    buildMs,
    indexedNames: rebuilt.indexedNames,
    firstPassMs: passTotalsMs[0] ?? Number.NaN,
    secondPassMs: passTotalsMs[1] ?? Number.NaN,
    p50Ms: percentile(timings, 50),
    p99Ms: percentile(timings, 99),
    hitsByKind,
  };
}

function printTable(runs: readonly ScreeningRun[], entryCount: number, nameCount: number): void {
  const rate = (r: ScreeningRun, kind: Query['kind']) => `${r.hitsByKind[kind].hit}/${r.hitsByKind[kind].of}`;
  const lines = [
    `Screening: ${entryCount} entries, ${nameCount} names (Node ${process.version}, ${os.cpus().length} CPUs, load ${fixed(os.loadavg()[0] ?? Number.NaN, 1)})`,
    '',
    '| backend | import s | index: read ms | index: build ms | names indexed | screen all, 1st pass ms | 2nd pass ms | p50 ms | p99 ms | hits: hit names | near misses | clean |',
    '| ------- | -------: | ------------: | --------------: | ------------: | ----------------------: | ----------: | -----: | -----: | --------------: | ----------: | ----: |',
    ...runs.map(
      (r) =>
        `| ${r.backend} | ${fixed(r.importMs / 1000, 1)} | ${fixed(r.loadMs, 0)} | ${fixed(r.buildMs, 0)} | ${r.indexedNames} | ${fixed(r.firstPassMs, 0)} | ${fixed(r.secondPassMs, 0)} | ${fixed(r.p50Ms, 3)} | ${fixed(r.p99Ms, 3)} | ${rate(r, 'hit')} | ${rate(r, 'near miss')} | ${rate(r, 'clean')} |`,
    ),
  ];
  lines.push(
    '',
    '| backend | switch: activation to first screening by it, ms | screenings meanwhile | p99 ms | max ms |',
    '| ------- | ----------------------------------------------: | -------------------: | -----: | -----: |',
    ...runs.map(
      (r) =>
        `| ${r.backend} | ${fixed(r.switchMs, 0)} | ${r.switchScreenings} | ${fixed(r.switchP99Ms, 2)} | ${fixed(r.switchMaxMs, 1)} |`,
    ),
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

export async function runScreeningBench(values: BenchValues): Promise<number> {
  const entryCount = wholeNumber(
    '--screening-entries',
    textOption(values, 'screening-entries') ?? process.env.BENCH_SCREENING_ENTRIES,
    ENTRIES_DEFAULT,
    1,
    ENTRIES_MAX,
  );
  const nameCount = wholeNumber(
    '--screening-names',
    textOption(values, 'screening-names') ?? process.env.BENCH_SCREENING_NAMES,
    NAMES_DEFAULT,
    1,
    NAMES_MAX,
  );
  const databaseUrl = benchDatabaseUrl(values);
  const { entries, queries } = generateScreeningData(entryCount, nameCount);
  const directory = mkdtempSync(path.join(os.tmpdir(), 'mkoba-bench-screening-'));
  const file = path.join(directory, 'generated-list.csv');
  writeFileSync(file, listCsv(entries));
  const runs: ScreeningRun[] = [];
  try {
    for (const backend of benchBackends(values, databaseUrl)) {
      if (backend === 'pglite') {
        const store = await openPgliteStore(path.join(directory, 'pglite'));
        try {
          runs.push(await runOn('PGlite', store, file, entries, queries));
        } finally {
          await store.close();
        }
      } else if (databaseUrl) {
        const schema = `bench_screening_${randomBytes(4).toString('hex')}`;
        await createSchema(databaseUrl, schema);
        const store = await openPostgresStore({ connectionString: databaseUrl, schema });
        try {
          runs.push(await runOn('PostgreSQL', store, file, entries, queries));
        } finally {
          await store.close();
          await dropSchema(databaseUrl, schema);
        }
      }
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  printTable(runs, entryCount, nameCount);
  return 0;
}
