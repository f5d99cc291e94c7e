/**
 * The sandbox verification provider's deferred decisions ("verified after a delay"): each pass decides the
 * due ones, claimed with FOR UPDATE SKIP LOCKED so any number of processes may run it.
 */
import type { Deps } from '../../../app/deps.ts';
import { runDueVerifications } from '../useCases/verifications.ts';

/** How often the sandbox provider looks for due decisions. */
export const VERIFICATION_WORKER_INTERVAL_MS = 1_000;

export function runVerificationWorkerOnce(deps: Deps): Promise<number> {
  return runDueVerifications(deps);
}
