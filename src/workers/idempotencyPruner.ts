/** Deletes idempotency records past the published retention window, in bounded batches. */
import type { Deps } from '../app/deps.ts';
import { IDEMPOTENCY_PRUNE_BATCH_ROWS } from '../config/retention.ts';
import { IDEMPOTENCY_RETENTION_HOURS } from '../domain/idempotency.ts';
import { pruneIdempotencyRecords } from '../store/repositories/idempotency.ts';

export async function pruneExpiredIdempotencyRecords(deps: Deps): Promise<number> {
  const cutoff = new Date(deps.now().getTime() - IDEMPOTENCY_RETENTION_HOURS * 3_600_000);
  let total = 0;
  for (;;) {
    const deleted = await pruneIdempotencyRecords(deps.store, cutoff, IDEMPOTENCY_PRUNE_BATCH_ROWS);
    total += deleted;
    if (deleted < IDEMPOTENCY_PRUNE_BATCH_ROWS) return total;
  }
}
