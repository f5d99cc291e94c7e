/**
 * The rules of docs/ARCHITECTURE.md over src/: SQL only in the store and modules' repositories, no store or
 * repository import from the HTTP edge, a pure domain, modules reached only through their index, modules
 * importing only lower ones and the shared core none. Each rule is first shown to catch a violation in a
 * small fixture, so a checker that finds nothing cannot pass unnoticed. (Import cycles are biome's
 * `noImportCycles`, an error.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkArchitecture, readSources, type SourceFile } from './support/architecture.ts';
import { checkSizes, FILE_LINES_MAX, FUNCTION_LINES_MAX } from './support/sizes.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
/** How a test file is named: kebab-case words, then `.test.ts` (`.browser.test.ts` for a browser's). */
const TEST_FILE_NAME = /^[a-z0-9]+(-[a-z0-9]+)*(\.browser)?\.test\.ts$/;

const fixture: SourceFile[] = [
  {
    path: 'src/app/reports.ts',
    text: [
      "import type { Deps } from './deps.ts';",
      'export async function count(deps: Deps) {',
      "  return deps.store.query('SELECT count(*) FROM wallets WHERE organization_id = $1', ['org']);",
      '}',
    ].join('\n'),
  },
  {
    path: 'src/app/steps.ts',
    text: "export const undo = (tx) => tx.query('ROLLBACK TO SAVEPOINT step');",
  },
  {
    path: 'src/workers/sweep.ts',
    text: 'const STATEMENT = `\n  UPDATE transfers SET status = $1 WHERE id = $2`;\nexport { STATEMENT };',
  },
  {
    path: 'src/http/routes/wallets.ts',
    text: "import type { Wallet } from '../../domain/wallets.ts';\nimport type { WalletRow } from '../../store/repositories/wallets.ts';",
  },
  {
    path: 'src/domain/fees.ts',
    text: "import { readFileSync } from 'node:fs';\nimport { createHash } from 'node:crypto';\nimport { now } from '../app/testClock.ts';",
  },
  // Not violations: SQL in the store, the HTTP edge on the use cases, the domain on itself and Node's crypto.
  {
    path: 'src/store/repositories/wallets.ts',
    text: "export const find = (db) => db.query('SELECT * FROM wallets WHERE id = $1', ['w']);",
  },
  {
    path: 'src/http/routes/transfers.ts',
    text: "import { createTransfer } from '../../app/transfers.ts';\nconst detail = 'Select a wallet, then update its metadata.';",
  },
  {
    path: 'src/domain/ledger.ts',
    text: "import { sha256 } from '@noble/hashes/sha2.js';\nimport { parseAmount } from './money.ts';",
  },
  // Modules: SQL outside the repository, a route on the repository, an impure domain, an internal import,
  // an upward one (lending is above savings), the core importing a module, and a module not yet ranked.
  {
    path: 'src/modules/lending/useCases.ts',
    text: [
      "import { organizationNow } from '../testClock/index.ts';",
      "export const overdue = (db) => db.query('UPDATE loans SET status = $1', ['overdue']);",
    ].join('\n'),
  },
  {
    path: 'src/modules/lending/routes.ts',
    text: "import { applyForLoan } from './useCases.ts';\nimport { findLoan } from './repository.ts';",
  },
  {
    path: 'src/modules/lending/domain.ts',
    text: "import { DAY_MS } from '../testClock/domain.ts';\nimport { disburse } from './useCases.ts';",
  },
  {
    path: 'src/modules/savings/useCases.ts',
    text: "import { utcDay } from '../testClock/index.ts';\nimport { LOAN_DAY_WORK } from '../lending/useCases.ts';",
  },
  {
    path: 'src/app/transfers.ts',
    text: "import { refuseSavingsSource } from '../modules/savings/index.ts';",
  },
  { path: 'src/modules/wires/index.ts', text: 'export const WIRES = [];' },
  // The money seam: the core may import it (its index, or its pure domain), never its use cases; the seam
  // itself imports no module.
  {
    path: 'src/app/conversions.ts',
    text: [
      "import { PostingSession } from '../modules/ledger/index.ts';",
      "import { walletBalances } from '../modules/ledger/domain/ledger.ts';",
      "import { postEntry } from '../modules/ledger/useCases/postingSession.ts';",
    ].join('\n'),
  },
  {
    path: 'src/modules/ledger/useCases/postingSession.ts',
    text: "import { organizationNow } from '../../testClock/index.ts';",
  },
  // Not violations: a module's repository holds its SQL; the edges import modules through their index.
  {
    path: 'src/modules/lending/repository.ts',
    text: "export const findLoan = (db, id) => db.query('SELECT * FROM loans WHERE id = $1', [id]);",
  },
  {
    path: 'src/http/app.ts',
    text: "import { lendingHttp } from '../modules/lending/index.ts';",
  },
];

describe('architecture rules', () => {
  it('reports each kind of violation in a fixture, and nothing where the rules allow it', () => {
    const found = checkArchitecture(fixture).map((v) => ({ rule: v.rule, path: v.path, line: v.line }));
    expect(found).toEqual([
      { rule: 'sql_outside_store', path: 'src/app/reports.ts', line: 3 },
      { rule: 'sql_outside_store', path: 'src/app/steps.ts', line: 1 },
      { rule: 'sql_outside_store', path: 'src/workers/sweep.ts', line: 1 },
      { rule: 'http_imports_store', path: 'src/http/routes/wallets.ts', line: 2 },
      { rule: 'domain_imports_outside_domain', path: 'src/domain/fees.ts', line: 1 },
      { rule: 'domain_imports_outside_domain', path: 'src/domain/fees.ts', line: 3 },
      { rule: 'sql_outside_store', path: 'src/modules/lending/useCases.ts', line: 2 },
      { rule: 'http_imports_store', path: 'src/modules/lending/routes.ts', line: 2 },
      { rule: 'domain_imports_outside_domain', path: 'src/modules/lending/domain.ts', line: 2 },
      { rule: 'module_internals', path: 'src/modules/savings/useCases.ts', line: 2 },
      { rule: 'module_upward', path: 'src/modules/savings/useCases.ts', line: 2 },
      { rule: 'module_upward', path: 'src/app/transfers.ts', line: 1 },
      { rule: 'module_unranked', path: 'src/modules/wires/index.ts', line: 1 },
      { rule: 'module_internals', path: 'src/app/conversions.ts', line: 3 },
      { rule: 'module_upward', path: 'src/modules/ledger/useCases/postingSession.ts', line: 1 },
    ]);
  });

  it('src/ keeps them', () => {
    const sources = readSources(root, 'src');
    expect(sources.length).toBeGreaterThan(100);
    expect(checkArchitecture(sources)).toEqual([]);
  });

  it('finds a file or function past its size that does not say why, and none that does', () => {
    const body = (lines: number) => Array.from({ length: lines - 2 }, (_, i) => `  const v${i} = ${i};`);
    const longFunction = ['export function sweep() {', ...body(FUNCTION_LINES_MAX + 1), '}'];
    const reasoned = [
      'export function settle() {',
      '  // Past 70 lines: one transaction.',
      ...body(FUNCTION_LINES_MAX + 1).slice(1),
      '}',
    ];
    const filler = Array.from({ length: FILE_LINES_MAX }, (_, i) => `export const c${i} = ${i};`);
    const found = checkSizes([
      { path: 'src/modules/wires/useCases.ts', text: [...longFunction, ...filler].join('\n') },
      {
        path: 'src/modules/wires/domain.ts',
        text: ['/** Past 400 lines: one table. */', ...reasoned, ...filler].join('\n'),
      },
    ]).map((v) => ({ rule: v.rule, path: v.path, line: v.line }));
    expect(found).toEqual([
      { rule: 'file_too_long', path: 'src/modules/wires/useCases.ts', line: 1 },
      { rule: 'function_too_long', path: 'src/modules/wires/useCases.ts', line: 1 },
    ]);
  });

  it('src/ keeps files within 400 lines and functions within 70, or says why', () => {
    const sources = readSources(root, 'src');
    expect(sources.length).toBeGreaterThan(300);
    expect(checkSizes(sources)).toEqual([]);
  });

  it('test files are named one way: kebab-case, `.test.ts`', () => {
    const names = readdirSync(new URL('./', import.meta.url), { recursive: true }) as string[];
    const tests = names.filter((n) => n.endsWith('.test.ts'));
    expect(tests.length).toBeGreaterThan(100);
    expect(tests.filter((n) => !TEST_FILE_NAME.test(path.posix.basename(n.replaceAll('\\', '/'))))).toEqual(
      [],
    );
    expect(
      TEST_FILE_NAME.test('payment-batches.test.ts') && !TEST_FILE_NAME.test('paymentBatches.test.ts'),
    ).toBe(true);
  });

  it('biome refuses import cycles in src/ and test/', () => {
    const config = JSON.parse(readFileSync(`${root}biome.json`, 'utf8')) as {
      overrides: { includes: string[]; linter?: { rules?: { suspicious?: { noImportCycles?: string } } } }[];
    };
    const cycles = config.overrides.find((o) => o.linter?.rules?.suspicious?.noImportCycles === 'error');
    expect(cycles?.includes).toEqual(['src/**', 'test/**']);
  });
});
