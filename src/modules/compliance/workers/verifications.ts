/**
 * The sandbox verification provider's deferred decisions ("verified after a delay"): each pass decides the
 * due ones, claimed with FOR UPDATE SKIP LOCKED so any number of processes may run it. And Smile ID's jobs
 * (every environment): sent once queued, polled when their callback is late, leased the same way.
 */
import type { Deps } from '../../../app/deps.ts';
import { runSmileIdJobsOnce } from '../useCases/smileId/jobs.ts';
import { runDueVerifications } from '../useCases/verifications.ts';

/** How often the sandbox provider looks for due decisions. */
export const VERIFICATION_WORKER_INTERVAL_MS = 1_000;

export function runVerificationWorkerOnce(deps: Deps): Promise<number> {
  return runDueVerifications(deps);
}

/** How often Smile ID's due jobs are sent or polled. */
export const SMILE_ID_WORKER_INTERVAL_MS = 2_000;

/** One pass of Smile ID's jobs, each leased for `leaseMs` (MKOBA_SMILE_ID_LEASE_MS). */
export function runSmileIdWorkerOnce(deps: Deps, leaseMs: number): Promise<number> {
  return runSmileIdJobsOnce(deps, deps.now(), leaseMs);
}
