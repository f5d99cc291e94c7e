/**
 * Statements that shape a transaction rather than read or write rows: savepoints (a step whose writes can
 * be undone while the transaction goes on) and a whole-history check's snapshot. Use cases call these
 * instead of writing the statements themselves, so SQL stays in the store.
 */
import type { Queryable } from './store.ts';

/** The savepoints use cases set, by name: each is a fixed identifier, never built from input. */
export type SavepointName =
  | 'governed_change_check'
  | 'governed_change_apply'
  | 'idempotent_effect'
  | 'rail_partner_update';

export async function setSavepoint(tx: Queryable, name: SavepointName): Promise<void> {
  await tx.query(`SAVEPOINT ${name}`);
}

/** Undoes every write since the savepoint; the savepoint stays set. */
export async function rollbackToSavepoint(tx: Queryable, name: SavepointName): Promise<void> {
  await tx.query(`ROLLBACK TO SAVEPOINT ${name}`);
}

/** Keeps the writes since the savepoint and forgets it. */
export async function releaseSavepoint(tx: Queryable, name: SavepointName): Promise<void> {
  await tx.query(`RELEASE SAVEPOINT ${name}`);
}

/**
 * Makes the transaction (before its first read) one snapshot of the whole database, with no statement
 * time-out: what a check over the whole history (`ledger verify`, `evidence verify`) reads in.
 */
export async function beginWholeHistorySnapshot(tx: Queryable): Promise<void> {
  await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
  // A whole-history check may take longer than any request: it is exempt from the statement time-out.
  await tx.query('SET LOCAL statement_timeout = 0');
}
