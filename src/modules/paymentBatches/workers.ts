/**
 * Runs payment batches: each pass takes runnable batches one at a time under a lease (authorize and hold,
 * then chunks of items through the ledger writer), at most PAYMENT_BATCH_WORKER_BATCHES_PER_PASS of them.
 * Any number of processes may run it; a batch whose worker died is taken over when its lease runs out.
 */
import type { Deps } from '../../app/deps.ts';
import type { LedgerWriter } from '../transfers/index.ts';
import { runPaymentBatchWorkerOnce } from './useCases/worker.ts';

/** How often the worker looks for runnable batches. */
export const PAYMENT_BATCH_WORKER_INTERVAL_MS = 500;
/** Batches one pass runs at most, so a pass stays bounded. */
export const PAYMENT_BATCH_WORKER_BATCHES_PER_PASS = 10;

export async function runPaymentBatchPass(deps: Deps, writer: LedgerWriter): Promise<number> {
  let ran = 0;
  while (ran < PAYMENT_BATCH_WORKER_BATCHES_PER_PASS && (await runPaymentBatchWorkerOnce(deps, writer)))
    ran++;
  return ran;
}
