/**
 * Sends operators' reversals to their partner and asks again about those whose result has not come: claims
 * a due one (SKIP LOCKED) and leases it in a short transaction, calls the partner with no transaction
 * open, then records the answer in its own transaction if the reversal has not moved meanwhile (its result
 * may have arrived first). Resending after a call whose outcome is unknown is safe: M-Pesa refuses to
 * reverse one receipt twice, and a success names the payout's receipt, so it finds its reversal anyway.
 */
import type { Deps } from '../../../app/deps.ts';
import { RailPartnerUnavailableError } from '../../../rails/partner.ts';
import { findTransfer, RAIL_CALL_TIMEOUT_MS, withTimeout } from '../../transfers/index.ts';
import { findRailPartnerConfig } from '../repository/partners.ts';
import {
  claimDueRailReversals,
  findRailReversal,
  type RailReversal,
  saveRailReversal,
} from '../repository/reversals.ts';
import type { RailPartnerDirectory } from './directory.ts';
import { type LeasedRows, workLeasedRows } from './leasedPass.ts';
import { saveReversalChange } from './reversals.ts';

/** How often the worker looks for reversals to send or ask about. */
export const RAIL_REVERSAL_WORKER_INTERVAL_MS = 1_000;
/** Reversals one pass looks at most. */
export const RAIL_REVERSAL_WORKER_BATCH_ROWS = 50;
/** After a call that threw or timed out: asked (or sent) again this much later. */
export const RAIL_REVERSAL_RETRY_MS = 30_000;
/** An acknowledged reversal is asked about for this long; after it, its result or an operator decides. */
export const RAIL_REVERSAL_POLL_WINDOW_MS = 3 * 24 * 3_600_000;

type Answer =
  | { kind: 'sent'; reference: string; nextCheckAt: Date }
  | { kind: 'refused'; failureCode: string }
  | { kind: 'again'; nextCheckAt: Date | null };

/** One call to the partner for a leased reversal: send it, or ask about it. */
async function ask(deps: Deps, directory: RailPartnerDirectory, r: RailReversal): Promise<Answer> {
  const now = deps.now();
  const retry = (ms: number): Answer => ({ kind: 'again', nextCheckAt: new Date(now.getTime() + ms) });
  const config = await findRailPartnerConfig(deps.store, r.organizationId, r.configId);
  const transfer = await findTransfer(deps.store, r.organizationId, r.transferId);
  if (!config || !transfer) return { kind: 'again', nextCheckAt: null };
  const rail = directory.guarded(config);
  const { reverse, checkReversal } = rail.adapter;
  if (!reverse || !checkReversal) return { kind: 'refused', failureCode: 'reversal_not_supported' };
  try {
    if (r.status === 'requested') {
      // Returned meanwhile (a reconciliation refund, the sandbox): there is nothing left to send back.
      if (transfer.status !== 'settled') return { kind: 'refused', failureCode: 'transfer_not_settled' };
      const sent = await withTimeout(
        rail.call(() =>
          reverse(
            {
              idempotencyReference: r.id,
              transfer,
              partnerTransactionId: r.originalTransactionId,
              remarks: r.reason,
            },
            now,
          ),
        ),
        RAIL_CALL_TIMEOUT_MS,
      );
      return sent.accepted
        ? { kind: 'sent', reference: sent.reference, nextCheckAt: sent.checkAt }
        : { kind: 'refused', failureCode: sent.failureCode };
    }
    if (r.partnerReference === null) return { kind: 'again', nextCheckAt: null };
    if (now.getTime() - r.createdAt.getTime() > RAIL_REVERSAL_POLL_WINDOW_MS) {
      return { kind: 'again', nextCheckAt: null };
    }
    const reference = r.partnerReference;
    const outcome = await withTimeout(
      rail.call(() => checkReversal(reference, r.id, now)),
      RAIL_CALL_TIMEOUT_MS,
    );
    // The answer arrives as a callback; a synchronous one is read there too.
    return { kind: 'again', nextCheckAt: outcome.kind === 'processing' ? outcome.checkAt : null };
  } catch (error) {
    return retry(error instanceof RailPartnerUnavailableError ? error.retryAfterMs : RAIL_REVERSAL_RETRY_MS);
  }
}

/** Records the partner's answer, unless the reversal moved meanwhile (its result came first). */
async function record(deps: Deps, leased: RailReversal, answer: Answer): Promise<void> {
  await deps.store.transaction(async (tx) => {
    const transfer = await findTransfer(tx, leased.organizationId, leased.transferId, { forUpdate: true });
    const current = await findRailReversal(tx, leased.organizationId, leased.id, { forUpdate: true });
    if (!transfer || !current || current.status !== leased.status) return;
    const now = deps.now();
    if (answer.kind === 'again') {
      await saveRailReversal(tx, { ...current, nextCheckAt: answer.nextCheckAt, updatedAt: now });
      return;
    }
    const changed: RailReversal =
      answer.kind === 'sent'
        ? {
            ...current,
            status: 'sent',
            partnerReference: answer.reference,
            nextCheckAt: answer.nextCheckAt,
            updatedAt: now,
          }
        : {
            ...current,
            status: 'refused',
            failureCode: answer.failureCode,
            nextCheckAt: null,
            updatedAt: now,
          };
    await saveReversalChange(tx, deps, changed, transfer);
  });
}

const LEASED_REVERSALS: LeasedRows<RailReversal, string> = {
  claimDue: async (tx, now, seen) => (await claimDueRailReversals(tx, now, 1, seen))[0],
  saveLease: saveRailReversal,
  keyOf: (r) => r.id,
};

/** One pass over the due reversals; returns how many it looked at. */
export async function runRailReversalWorkerOnce(
  deps: Deps,
  directory: RailPartnerDirectory,
): Promise<number> {
  return workLeasedRows(deps, RAIL_REVERSAL_WORKER_BATCH_ROWS, LEASED_REVERSALS, async (leased) =>
    record(deps, leased, await ask(deps, directory, leased)),
  );
}
