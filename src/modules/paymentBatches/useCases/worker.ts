/**
 * One pass of the batch worker over one batch, under a lease: authorize and reserve, then its chunks. Any
 * number of processes may run it; a batch whose worker died is taken over when its lease runs out.
 */

import type { Deps } from '../../../app/deps.ts';
import type { LedgerWriter } from '../../transfers/index.ts';
import { PAYMENT_BATCH_LEASE_MS } from '../domain.ts';
import { leaseRunnableBatch, releaseBatchLease } from '../repository.ts';
import { authorizeAndReserve } from './authorize.ts';
import { runNextChunk } from './chunks.ts';

/**
 * One pass of the batch worker: takes one runnable batch under a lease and runs its next step (authorize and
 * reserve, or its chunks until done or the lease is half spent). Returns whether it found work.
 */
export async function runPaymentBatchWorkerOnce(
  deps: Deps,
  writer: LedgerWriter,
  chunksMax = Number.POSITIVE_INFINITY,
): Promise<boolean> {
  const leased = await leaseRunnableBatch(deps.store, deps.now(), PAYMENT_BATCH_LEASE_MS);
  if (!leased) return false;
  const startedMs = Date.now();
  try {
    await authorizeAndReserve(deps, leased.organizationId, leased.id);
    for (
      let chunks = 0;
      chunks < chunksMax && Date.now() - startedMs < PAYMENT_BATCH_LEASE_MS / 2;
      chunks++
    ) {
      if (!(await runNextChunk(deps, writer, leased.organizationId, leased.id))) break;
    }
  } finally {
    await releaseBatchLease(deps.store, leased.id);
  }
  return true;
}
