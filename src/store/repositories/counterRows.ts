/**
 * Counter rows a batch locks and writes back together (customer limit usage, pilot cap usage, an
 * organization's evidence chain head): each key once, locked in one order, and the locked rows found again
 * by their keys.
 */
import type { Queryable, Row } from '../store.ts';
import { fieldArrays } from './rows.ts';

/** A table of counter rows as a batch locks them. */
export interface CounterRows<K, T extends K> {
  /**
   * Creates the rows that do not exist yet and locks them all (an upsert ending `DO UPDATE SET … WHERE
   * false`), given each key field's values as an array.
   */
  lockStatement: string;
  /** Reads the locked rows, given the same arrays. */
  readStatement: string;
  /** The key's fields, in the order the statements take their arrays. */
  keyFields: readonly (keyof K)[];
  keyOf: (key: K) => string;
  fromRow: (row: Record<string, unknown>) => T;
}

/** Locks the counter rows of these keys (created at zero where missing), each once and in lock order. */
export async function lockCounterRows<K, T extends K>(
  db: Queryable,
  counters: CounterRows<K, T>,
  keys: readonly K[],
): Promise<Map<string, T>> {
  const unique = inLockOrder(keys, counters.keyOf);
  if (unique.length === 0) return new Map();
  const rows = await lockedCounterRows(
    db,
    counters.lockStatement,
    counters.readStatement,
    fieldArrays(unique, ...counters.keyFields),
  );
  return byCounterKey(rows, counters.fromRow, counters.keyOf);
}

/**
 * Each key once (by `keyOf`), in `keyOf` order: the order every batch locks counter rows in, so that two
 * batches never deadlock on them.
 */
export function inLockOrder<K>(keys: readonly K[], keyOf: (key: K) => string): K[] {
  return [...new Map(keys.map((k) => [keyOf(k), k])).values()].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1));
}

/** The locked rows, mapped by `fromRow`, by the key `keyOf` gives what they map to. */
export function byCounterKey<T>(
  rows: readonly Record<string, unknown>[],
  fromRow: (row: Record<string, unknown>) => T,
  keyOf: (counter: T) => string,
): Map<string, T> {
  return new Map(
    rows.map((row) => {
      const counter = fromRow(row);
      return [keyOf(counter), counter];
    }),
  );
}

/**
 * Locks counter rows, creating the missing ones, and reads them: `lock` is an upsert ending
 * `DO UPDATE SET … WHERE false`, which locks an existing row without writing a new version of it (the
 * holder writes one when it saves), and `read` selects the rows. The two are sent together; the read's
 * snapshot is taken once the upsert holds the locks, so it sees each row's latest committed values.
 */
export async function lockedCounterRows(
  db: Queryable,
  lock: string,
  read: string,
  params: readonly unknown[],
  readParams: readonly unknown[] = params,
): Promise<Row[]> {
  const [, rows] = await Promise.all([db.query(lock, params), db.query(read, readParams)]);
  return rows;
}
