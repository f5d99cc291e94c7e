/**
 * One pass of a rail partner worker over its due rows, one at a time: each row is claimed and leased in a
 * transaction of its own (RAIL_CLAIM_LEASE_MS, so a process that dies holding it lets another take it once
 * the lease runs out), then worked on, the partner's call outside any transaction.
 */
import type { Deps } from '../../../app/deps.ts';
import type { Queryable } from '../../../store/store.ts';
import { RAIL_CLAIM_LEASE_MS } from '../../transfers/index.ts';

/** A worker's rows as a pass claims them: the next due one not yet seen, its lease saved, its key. */
export interface LeasedRows<Row extends { nextCheckAt: Date | null }, Key> {
  claimDue(tx: Queryable, now: Date, seen: readonly Key[]): Promise<Row | undefined>;
  saveLease(tx: Queryable, leased: Row): Promise<void>;
  keyOf(row: Row): Key;
}

/** Leases and works on up to `rowsMax` due rows, none twice; returns how many it looked at. */
export async function workLeasedRows<Row extends { nextCheckAt: Date | null }, Key>(
  deps: Deps,
  rowsMax: number,
  rows: LeasedRows<Row, Key>,
  work: (leased: Row) => Promise<void>,
): Promise<number> {
  const seen: Key[] = [];
  while (seen.length < rowsMax) {
    const leased = await deps.store.transaction(async (tx) => {
      const now = deps.now();
      const due = await rows.claimDue(tx, now, seen);
      if (!due) return undefined;
      const lease = { ...due, nextCheckAt: new Date(now.getTime() + RAIL_CLAIM_LEASE_MS) };
      await rows.saveLease(tx, lease);
      return lease;
    });
    if (!leased) break;
    seen.push(rows.keyOf(leased));
    await work(leased);
  }
  return seen.length;
}
