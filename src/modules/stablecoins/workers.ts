/**
 * Counts deposits' confirmations into decisions: claims one due deposit at a time (SKIP LOCKED, so any
 * number of worker processes share the queue), and in the same transaction credits it once it has its
 * confirmations, drops it when the chain dropped it, or leaves it for the next observation. A deposit is
 * due when what the chain says about it changed. Idempotent: a deposit already decided is never due, and
 * the decision and its ledger entry commit together or not at all.
 */

import type { Deps } from '../../app/deps.ts';
import { AppError } from '../../domain/errors.ts';
import type { Deposit } from '../../domain/stablecoins.ts';
import { type RailWorkerLog, stderrRailWorkerLog } from '../transfers/index.ts';
import { claimDueDeposits, findDeposit, saveDeposit } from './repository/deposits.ts';
import { decideDeposit } from './useCases/deposits.ts';

export const DEPOSIT_WORKER_INTERVAL_MS = 500;
/** Deposits one pass looks at most. */
export const DEPOSIT_WORKER_BATCH_ROWS = 100;
/** How long a deposit whose credit was refused (a closed wallet) waits before it is tried again. */
export const DEPOSIT_CREDIT_RETRY_MS = 60_000;

/** One pass over the due deposits; returns how many it looked at. */
export async function runDepositWorkerOnce(
  deps: Deps,
  options: { log?: RailWorkerLog } = {},
): Promise<number> {
  const log = options.log ?? stderrRailWorkerLog;
  const seen: string[] = [];
  while (seen.length < DEPOSIT_WORKER_BATCH_ROWS) {
    let claimed: Deposit | undefined;
    try {
      await deps.store.transaction(async (tx) => {
        [claimed] = await claimDueDeposits(tx, deps.now(), 1, seen);
        if (claimed) await decideDeposit(tx, deps, claimed);
      });
    } catch (error) {
      if (!(error instanceof AppError) || !claimed) throw error;
      // The posting module refused the credit (a closed wallet): nothing was written. Look again later.
      const { organizationId, id } = claimed;
      await deps.store.transaction(async (tx) => {
        const current = await findDeposit(tx, organizationId, id, { forUpdate: true });
        if (current?.status !== 'pending') return;
        const now = deps.now();
        await saveDeposit(tx, {
          ...current,
          nextCheckAt: new Date(now.getTime() + DEPOSIT_CREDIT_RETRY_MS),
          updatedAt: now,
        });
      });
      log('error', 'deposit credit refused; retrying later', { deposit_id: id, error: error.message });
    }
    if (!claimed) break;
    seen.push(claimed.id);
  }
  return seen.length;
}
