/**
 * Applies partner callbacks still waiting: one that arrived before its payout's reference was recorded,
 * or whose applying threw. Each is applied in its own transaction (useCases/callbacks.ts), claimed with
 * SKIP LOCKED, so any number of processes may sweep.
 */
import type { Deps } from '../../app/deps.ts';
import { deferRailCallback, dueRailCallbackIds } from './repository/callbacks.ts';
import { applyRailCallback, RAIL_CALLBACK_ERROR_RETRY_MS } from './useCases/callbacks.ts';
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
      await deferRailCallback(
        deps.store,
        id,
        new Date(deps.now().getTime() + RAIL_CALLBACK_ERROR_RETRY_MS),
        `apply failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return ids.length;
}

/** Operators' reversals sent to their partner and asked about again (useCases/reversalWorker.ts). */
export { RAIL_REVERSAL_WORKER_INTERVAL_MS, runRailReversalWorkerOnce } from './useCases/reversalWorker.ts';
