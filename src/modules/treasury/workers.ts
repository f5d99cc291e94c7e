/**
 * The daily safeguarding check's schedule. Each pass writes the reports still missing for the last closed
 * days (app/safeguarding.ts), at most SAFEGUARDING_CHECKS_PER_PASS of them, each in its own transaction. A
 * day already reported is skipped, so passes may repeat and any number of processes may run them: the
 * currency's trust accounts are locked and the report is unique per organization, currency and day.
 */
import type { Deps } from '../../app/deps.ts';
import { runSafeguardingChecks } from './useCases/safeguarding.ts';

/**
 * How often the worker looks for days to check. A day becomes checkable once, an hour after it ends
 * (SAFEGUARDING_DAY_CLOSE_GRACE_MS), so a few minutes' delay costs nothing and a pass with nothing to do
 * costs three small reads per organization with a trust account.
 */
export const SAFEGUARDING_WORKER_INTERVAL_MS = 300_000;
/** Checks (organization, currency, day) one pass makes at most; the rest wait for the next pass. */
export const SAFEGUARDING_CHECKS_PER_PASS = 200;

export function runSafeguardingWorkerOnce(deps: Deps): Promise<number> {
  return runSafeguardingChecks(deps, SAFEGUARDING_CHECKS_PER_PASS);
}
