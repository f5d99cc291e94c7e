/**
 * Statements the PostgreSQL driver prepares once per connection, then only binds and executes. An unnamed
 * statement is parsed and planned on every call: for the few run on every transfer (a cold wallet's identity
 * and savings check, an Idempotency-Key's record) planning cost more PostgreSQL CPU than running them.
 * PostgreSQL re-plans a prepared statement by itself after DDL or a new ANALYZE of its tables.
 *
 * Only fixed texts are registered (a statement built per call would prepare without bound), only ones whose
 * plan does not depend on their values (a lookup by key of fixed arity: PostgreSQL keeps re-planning a
 * `= ANY($1)` one, whose generic plan assumes ten elements; the AML activity read's generic plan scanned the
 * organization's transfers, so it stays unnamed), and only ones that name their columns (`SELECT *` in a
 * prepared statement fails with "cached plan must not change result type" once a migration adds a column
 * while the server runs). MKOBA_PG_PREPARED_STATEMENTS=off sends them unnamed too; the embedded database
 * ignores the registry.
 */

import type { Queryable, Row } from './store.ts';

/** Registered texts by their statement name. */
const names = new Map<string, string>();

/** Registers a fixed statement text for preparing, and returns it unchanged. */
export function prepared(text: string): string {
  if (!names.has(text)) names.set(text, `mkoba_${names.size + 1}`);
  return text;
}

/** The name a registered text is prepared under, else undefined (run unnamed). */
export function preparedNameOf(text: string): string | undefined {
  return names.get(text);
}

/** A lookup by ids as statements of fixed arity: prepared ones for one id and for two, `= ANY` for more. */
export interface ByIdsStatements {
  /** The leading parameters, then `$n` for the one id. */
  one: string;
  /** The leading parameters, then `$n, $n+1` for the two ids. */
  two: string;
  /** The leading parameters, then an array of the ids. */
  many: string;
}

/** Runs the lookup of `ids` (repeats dropped) with the statement of their count. */
export function queryByIds(
  db: Queryable,
  statements: ByIdsStatements,
  leading: readonly unknown[],
  ids: readonly string[],
): Promise<Row[]> {
  const distinct = [...new Set(ids)];
  if (distinct.length === 1) return db.query(statements.one, [...leading, ...distinct]);
  if (distinct.length === 2) return db.query(statements.two, [...leading, ...distinct]);
  return db.query(statements.many, [...leading, distinct]);
}
