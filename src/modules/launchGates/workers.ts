/**
 * The sandbox's evaluation of every organization's launch gates, so that a gate changes (with its event and
 * evidence) soon after what passes it happens, not only when someone lists the gates, and so that pilot and
 * production read a fresh record. Each pass takes the next organizations in id order, each in its own
 * transaction; the walk starts over after the last. Any number of processes may run it: an evaluation
 * locks the organization's gate rows, so a change is recorded once.
 */
import type { Deps } from '../../app/deps.ts';
import { listOrganizationIdsAfter } from '../../store/repositories/organizations.ts';
import { evaluateOrganizationGates } from './useCases.ts';

/** How often a pass runs: a gate's change is announced within about this long. */
export const LAUNCH_GATE_WORKER_INTERVAL_MS = 30_000;
/** Organizations one pass evaluates at most; the walk goes on from there at the next pass. */
export const LAUNCH_GATE_ORGANIZATIONS_PER_PASS = 50;

/** A walk over every organization, remembered by this process between passes. */
export function launchGateWalker(deps: Deps): () => Promise<number> {
  let after = '';
  return async () => {
    const ids = await listOrganizationIdsAfter(deps.store, after, LAUNCH_GATE_ORGANIZATIONS_PER_PASS);
    after = ids.length < LAUNCH_GATE_ORGANIZATIONS_PER_PASS ? '' : (ids.at(-1) ?? '');
    for (const id of ids) await evaluateOrganizationGates(deps, id);
    return ids.length;
  };
}
