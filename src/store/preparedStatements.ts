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
