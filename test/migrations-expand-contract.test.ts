/**
 * Migrations are expand-then-contract (docs/OPERATIONS.md, "Schema changes: expand, then contract"): while
 * a rolling deploy runs, the previous release serves the newest schema, so a migration may not take away
 * or tighten what that release reads or writes. Every statement from EXPAND_CONTRACT_FROM on that drops,
 * renames, retypes or tightens a column or table must say it is a contract step, with a `-- contract:`
 * comment of its own naming the release that stopped using it. test/e2e/old-code-new-schema.test.ts runs
 * the previous release on the newest schema; this check is the cheap one, on the text.
 */
import { describe, expect, it } from 'vitest';
import { listMigrations } from '../src/store/migrate.ts';

/** The first migration written under the rule; the ones before it predate it (0002, 0006 and 0007 contract). */
const EXPAND_CONTRACT_FROM = '0083';
const CONTRACT_MARK = /--\s*contract:\s*\S/i;

/** What the previous release may still read or write: each a contract step. */
const CONTRACTING = [
  { name: 'DROP COLUMN', pattern: /\bDROP\s+COLUMN\b/i },
  { name: 'DROP TABLE', pattern: /\bDROP\s+TABLE\b/i },
  { name: 'RENAME', pattern: /\bRENAME\b/i },
  { name: 'SET NOT NULL', pattern: /\bSET\s+NOT\s+NULL\b/i },
  { name: 'a column type change', pattern: /\bALTER\s+COLUMN\s+\S+\s+(?:SET\s+DATA\s+)?TYPE\b/i },
];

/** Top-level pieces of a statement split at `separator` (commas inside parentheses stay). */
function topLevelParts(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '(') depth++;
    else if (char === ')') depth--;
    else if (char === separator && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** The statement without its comments and quoted literals, so only its SQL is matched. */
function sqlOnly(statement: string): string {
  return statement
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/'(?:[^']|'')*'/g, "''");
}

/** The contracting steps of a migration's text not marked `-- contract:`, each with its statement's start. */
function unmarkedContractSteps(sql: string): string[] {
  const found: string[] = [];
  for (const statement of topLevelParts(sql, ';')) {
    if (CONTRACT_MARK.test(statement)) continue;
    const text = sqlOnly(statement);
    const excerpt = text.trim().replace(/\s+/g, ' ').slice(0, 80);
    for (const { name, pattern } of CONTRACTING) {
      if (pattern.test(text)) found.push(`${name}: ${excerpt}`);
    }
    // A new NOT NULL column without a default refuses the previous release's inserts, which omit it.
    if (/^\s*ALTER\s+TABLE\b/i.test(text)) {
      for (const part of topLevelParts(text, ',')) {
        if (
          /\bADD\s+(?!CONSTRAINT\b|PRIMARY\b|UNIQUE\b|FOREIGN\b|CHECK\b)/i.test(part) &&
          /\bNOT\s+NULL\b/i.test(part) &&
          !/\bDEFAULT\b/i.test(part)
        ) {
          found.push(`ADD COLUMN NOT NULL without DEFAULT: ${excerpt}`);
        }
      }
    }
  }
  return found;
}

describe('expand-then-contract migrations', () => {
  it('finds each contracting step in a fixture, and accepts it once marked', () => {
    const contracting = [
      'ALTER TABLE wallets DROP COLUMN label;',
      'DROP TABLE IF EXISTS old_things;',
      'ALTER TABLE wallets RENAME COLUMN label TO name;',
      'ALTER TABLE wallets ALTER COLUMN label SET NOT NULL;',
      'ALTER TABLE wallets ALTER COLUMN amount TYPE numeric(20, 2);',
      'ALTER TABLE wallets ADD COLUMN kind text, ADD COLUMN tier numeric(10, 2) NOT NULL;',
    ];
    for (const sql of contracting) {
      expect(unmarkedContractSteps(sql), sql).toHaveLength(1);
      const marked = `-- contract: nothing reads it since 0.9\n${sql}`;
      expect(unmarkedContractSteps(marked), marked).toEqual([]);
    }
    const expanding = [
      "ALTER TABLE wallets ADD COLUMN label text NOT NULL DEFAULT 'main';",
      'ALTER TABLE wallets ADD COLUMN label text;',
      'CREATE TABLE things (id text PRIMARY KEY, amount bigint NOT NULL);',
      "COMMENT ON TABLE things IS 'we never DROP COLUMN here';",
      '-- a remark on DROP TABLE\nCREATE INDEX things_idx ON things (id);',
    ];
    for (const sql of expanding) expect(unmarkedContractSteps(sql), sql).toEqual([]);
  });

  it(`no migration from ${EXPAND_CONTRACT_FROM} on takes away or tightens anything unmarked`, async () => {
    const migrations = (await listMigrations()).filter((m) => m.version >= EXPAND_CONTRACT_FROM);
    const unmarked = migrations.flatMap((m) =>
      unmarkedContractSteps(m.sql).map((step) => `${m.version}: ${step}`),
    );
    expect(unmarked).toEqual([]);
  });
});
