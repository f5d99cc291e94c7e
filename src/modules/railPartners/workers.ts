/**
 * Applies partner callbacks still waiting: one that arrived before its payout's reference was recorded,
 * or whose applying threw. Each is applied in its own transaction (useCases/callbacks.ts), claimed with
 * SKIP LOCKED, so any number of processes may sweep.
 */
import type { Deps } from '../../app/deps.ts';
import { dueRailCallbackIds } from './repository/callbacks.ts';
import { applyRailCallback, deferFailedApply } from './useCases/callbacks.ts';
import type { RailPartnerDirectory } from './useCases/directory.ts';

/** How often waiting callbacks are looked at again. */
export const RAIL_CALLBACK_SWEEP_INTERVAL_MS = 1_000;
/** Callbacks one sweep applies at most. */
export const RAIL_CALLBACK_SWEEP_ROWS = 100;

/** One sweep; returns how many callbacks it looked at. */
export async function runRailCallbackSweepOnce(deps: Deps, directory: RailPartnerDirectory): Promise<number> {
  const ids = await dueRailCallbackIds(deps.store, deps.now(), RAIL_CALLBACK_SWEEP_ROWS);
  for (const id of ids) {
    try {
      await applyRailCallback(deps, directory, id);
    } catch (error) {
      await deferFailedApply(deps, id, error);
    }
  }
  return ids.length;
}

/** Payers' payments asked of their partner before they are credited (useCases/creditVerificationWorker.ts). */
export {
  RAIL_CREDIT_VERIFICATION_WORKER_INTERVAL_MS,
  runRailCreditVerificationWorkerOnce,
} from './useCases/creditVerificationWorker.ts';
/** Operators' reversals sent to their partner and asked about again (useCases/reversalWorker.ts). */
export { RAIL_REVERSAL_WORKER_INTERVAL_MS, runRailReversalWorkerOnce } from './useCases/reversalWorker.ts';
