/**
 * Statements the PostgreSQL driver prepares once per connection, then only binds and executes. An unnamed
 * statement is parsed and planned on every call: for the few run on every request (a transfer's wallets, its
 * Idempotency-Key, the source guard, the AML activity read) planning cost more PostgreSQL CPU than running
 * them. PostgreSQL keeps a prepared statement's plan and re-plans it by itself after any DDL on its tables.
 *
 * Only fixed texts are registered (a statement built per call would prepare without bound), and only ones
 * that name their columns: `SELECT *` or `RETURNING *` in a prepared statement fails with "cached plan must
 * not change result type" once a migration adds a column while the server runs. The embedded database
 * plans in process and ignores the registry.
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
