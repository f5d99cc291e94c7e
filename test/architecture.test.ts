/**
 * The layering rules of docs/ARCHITECTURE.md over src/: SQL only in src/store/, no store import from
 * src/http/, a pure src/domain/. Each rule is first shown to catch a violation in a small fixture, so a
 * checker that finds nothing cannot pass unnoticed. (Import cycles are biome's `noImportCycles`, an error.)
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkArchitecture, readSources, type SourceFile } from './support/architecture.ts';

const root = fileURLToPath(new URL('../', import.meta.url));

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
];

describe('architecture rules', () => {
  it('reports each kind of violation in a fixture, and nothing where the rules allow it', () => {
    const found = checkArchitecture(fixture).map((v) => ({ rule: v.rule, path: v.path, line: v.line }));
    expect(found).toEqual([
      { rule: 'sql_outside_store', path: 'src/app/reports.ts', line: 3 },
      { rule: 'sql_outside_store', path: 'src/workers/sweep.ts', line: 1 },
      { rule: 'http_imports_store', path: 'src/http/routes/wallets.ts', line: 2 },
      { rule: 'domain_imports_outside_domain', path: 'src/domain/fees.ts', line: 1 },
      { rule: 'domain_imports_outside_domain', path: 'src/domain/fees.ts', line: 3 },
    ]);
  });

  it('src/ keeps them', () => {
    const sources = readSources(root, 'src');
    expect(sources.length).toBeGreaterThan(100);
    expect(checkArchitecture(sources)).toEqual([]);
  });

  it('biome refuses import cycles in src/ and test/', () => {
    const config = JSON.parse(readFileSync(`${root}biome.json`, 'utf8')) as {
      overrides: { includes: string[]; linter?: { rules?: { suspicious?: { noImportCycles?: string } } } }[];
    };
    const cycles = config.overrides.find((o) => o.linter?.rules?.suspicious?.noImportCycles === 'error');
    expect(cycles?.includes).toEqual(['src/**', 'test/**']);
  });
});
