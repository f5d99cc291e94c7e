/**
 * Deletes events past the retention period, with their finished webhook deliveries and attempt logs, oldest
 * first, one bounded batch per transaction. Transfers and journal entries are the ledger: never pruned.
 */
import type { Deps } from '../app/deps.ts';
import { RETENTION_PRUNE_BATCH_EVENTS } from '../config/retention.ts';
import { DAY_MS } from '../domain/days.ts';
import { type PruneCursor, pruneEventsBatch } from '../store/repositories/retention.ts';

export interface PruneTotals {
  events: number;
  deliveries: number;
  attempts: number;
  batches: number;
}

/**
 * One run: walks every event older than the retention once, so kept events are not read again and again.
 * With an event stream (deps.eventStream), events not yet published to it are kept.
 */
export async function pruneExpiredHistory(
  deps: Deps,
  retentionDays: number,
  batchEvents: number = RETENTION_PRUNE_BATCH_EVENTS,
): Promise<PruneTotals> {
  const cutoff = new Date(deps.now().getTime() - retentionDays * DAY_MS);
  const totals: PruneTotals = { events: 0, deliveries: 0, attempts: 0, batches: 0 };
  let cursor: PruneCursor | undefined;
  for (;;) {
    const batch = await deps.store.transaction((tx) =>
      pruneEventsBatch(tx, cutoff, cursor, batchEvents, deps.eventStream),
    );
    totals.batches += 1;
    totals.events += batch.events;
    totals.deliveries += batch.deliveries;
    totals.attempts += batch.attempts;
    if (batch.examined < batchEvents || !batch.cursor) return totals;
    cursor = batch.cursor;
  }
}
