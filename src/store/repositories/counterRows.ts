/**
 * Counter rows a batch locks and writes back together (customer limit usage, pilot cap usage): each key
 * once, locked in one order, and the locked rows found again by their keys.
 */
import type { Queryable } from '../store.ts';
import { fieldArrays } from './rows.ts';

/** A table of counter rows as a batch locks them. */
export interface CounterRows<K, T extends K> {
  /** Creates the rows that do not exist yet and locks them all, given each key field's values as an array. */
  lockStatement: string;
  /** The key's fields, in the order the statement takes their arrays. */
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
  const rows = await db.query(counters.lockStatement, fieldArrays(unique, ...counters.keyFields));
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
