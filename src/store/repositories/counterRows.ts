/**
 * Counter rows a batch locks and writes back together (customer limit usage, pilot cap usage): each key
 * once, locked in one order, and the locked rows found again by their keys.
 */

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
