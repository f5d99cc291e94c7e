/**
 * Moves transfers to their rail outcome, outside the request. Each tick claims due transfers with
 * FOR UPDATE SKIP LOCKED and leases them (pushes their next check forward) in a short transaction, talks
 * to the rail with no transaction open, then records each result in its own transaction after checking
 * the transfer has not moved meanwhile. Any number of workers may share the queue.
 */
import type { Deps } from '../app/deps.ts';
import { applyStatusChange, type StatusChange } from '../app/transfers.ts';
import type { Transfer } from '../domain/transferRecord.ts';
import type { RailRegistry } from '../rails/rail.ts';
import { claimDueRailChecks, findTransfer, saveTransfer } from '../store/repositories/transfers.ts';

export const RAIL_WORKER_INTERVAL_MS = 200;
export const RAIL_WORKER_BATCH_ROWS = 100;
/** How long a claimed transfer is left alone by other workers while this one talks to the rail. */
export const RAIL_CLAIM_LEASE_MS = 30_000;
/** Retry delay after a rail call threw (network error, partner down). */
export const RAIL_ERROR_RETRY_MS = 5_000;

/**
 * Claiming a pending transfer is the hand-off: it becomes `processing` here, before the rail is called,
 * so a cancel can never race a payout that is already under way.
 */
async function claim(deps: Deps): Promise<Transfer[]> {
  return deps.store.transaction(async (tx) => {
    const now = deps.now();
    const due = await claimDueRailChecks(tx, now, RAIL_WORKER_BATCH_ROWS);
    const leaseUntil = new Date(now.getTime() + RAIL_CLAIM_LEASE_MS);
    const claimed: Transfer[] = [];
    for (const t of due) {
      if (t.status === 'pending') {
        claimed.push(await applyStatusChange(tx, deps, t, { to: 'processing', nextRailCheckAt: leaseUntil }));
      } else {
        const leased = { ...t, nextRailCheckAt: leaseUntil };
        await saveTransfer(tx, leased);
        claimed.push(leased);
      }
    }
    return claimed;
  });
}

type RailStep = StatusChange | { recheckAt: Date; reason?: string; railReference?: string };

async function askRail(rails: RailRegistry, transfer: Transfer, now: Date): Promise<RailStep> {
  const rail = rails[transfer.rail];
  if (transfer.railReference === null) {
    const submitted = await rail.submit(transfer, now);
    if (!submitted.accepted) return { to: 'failed', failureCode: submitted.failureCode };
    return { recheckAt: submitted.checkAt, railReference: submitted.reference };
  }
  const outcome = await rail.check(transfer, now);
  if (outcome.kind === 'settled') return { to: 'settled' };
  if (outcome.kind === 'failed') return { to: 'failed', failureCode: outcome.failureCode };
  return { recheckAt: outcome.checkAt, ...(outcome.reason ? { reason: outcome.reason } : {}) };
}

/** One pass over the due queue; returns how many transfers it looked at. */
export async function runRailWorkerOnce(deps: Deps, rails: RailRegistry): Promise<number> {
  const claimed = await claim(deps);
  for (const transfer of claimed) {
    let result: RailStep;
    try {
      result = await askRail(rails, transfer, deps.now());
    } catch {
      result = {
        recheckAt: new Date(deps.now().getTime() + RAIL_ERROR_RETRY_MS),
        reason: 'rail_unavailable',
      };
    }
    await deps.store.transaction(async (tx) => {
      const current = await findTransfer(tx, transfer.organizationId, transfer.id, { forUpdate: true });
      // Someone (a cancel, a sandbox settle) moved it while we were at the rail: their change stands.
      if (!current || current.status !== transfer.status || current.railReference !== transfer.railReference)
        return;
      if ('to' in result) {
        await applyStatusChange(tx, deps, current, result);
      } else {
        await saveTransfer(tx, {
          ...current,
          nextRailCheckAt: result.recheckAt,
          statusReason: result.reason ?? current.statusReason,
          railReference: result.railReference ?? current.railReference,
          updatedAt: deps.now(),
        });
      }
    });
  }
  return claimed.length;
}
