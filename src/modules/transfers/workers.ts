/**
 * Moves transfers to their rail outcome, outside the request. A pass takes due transfers one at a time:
 * it claims one with FOR UPDATE SKIP LOCKED and leases it (pushes its next check forward) in a short
 * transaction, talks to the rail with no transaction open, then records the answer in its own transaction
 * after checking the transfer has not moved meanwhile. Claiming per transfer means a lease only has to
 * cover one rail call, not a whole batch, so a slow partner cannot make another worker take over the tail
 * of a batch and submit it again. Any number of workers may share the queue.
 *
 * Every submit carries the transfer id as the rail's idempotency reference, so even a submit repeated
 * after a lease ran out (a call slower than the lease, a worker that died) finds the first payout. A
 * failure with one transfer (the rail throws or is too slow, recording throws) is logged and the pass goes
 * on with the next.
 */
import type { Deps } from '../../app/deps.ts';
import type { Transfer } from '../../domain/transferRecord.ts';
import { RailPartnerUnavailableError, type ResolvedRail } from '../../rails/partner.ts';
import { RAIL_TIMEOUT_REASON, type RailRegistry } from '../../rails/rail.ts';
import { unlessHandedBack } from '../../workers/periodic.ts';
import {
  claimDueRailChecks,
  deferRailCheck,
  findTransfer,
  handBackRailCheck,
  saveTransfer,
} from './repository.ts';
import { applyStatusChange, type StatusChange } from './useCases/statusChanges.ts';

export const RAIL_WORKER_INTERVAL_MS = 200;
/** The most transfers one pass takes to the rail. */
export const RAIL_WORKER_BATCH_ROWS = 100;
/** Rail calls one pass has in flight at once: a slow partner holds these, not the whole pass. */
export const RAIL_WORKER_CONCURRENCY = 8;
/**
 * How long the worker keeps asking a partner about a payout it still reports processing (a callback that
 * never came): 3 days, after which the payout waits for the rail's statement (`RAIL_POLL_WINDOW_OVER_REASON`).
 */
export const RAIL_STATUS_POLL_WINDOW_MS = 3 * 24 * 3_600_000;
export const RAIL_POLL_WINDOW_OVER_REASON = 'awaiting_statement';
/**
 * How long a partner may leave a payout it accepted without an outcome (no result, its status enquiry still
 * "processing") before the payout counts as timed out: 60 s, well past the seconds a partner's result
 * normally takes. It then shows `status_reason: rail_timeout` (RAIL_TIMEOUT_REASON) but is not failed: the
 * money may have moved, so the hold stays, the worker keeps asking (RAIL_STATUS_POLL_WINDOW_MS), and a late
 * result, the status enquiry or the rail's statement decides it.
 */
export const RAIL_RESULT_TIMEOUT_MS = 60_000;
/** The failure code of a transfer on a rail that no partner carries for its organization. */
export const RAIL_NOT_CONFIGURED_FAILURE = 'rail_not_configured';
/**
 * How long a claimed transfer is left alone by other workers while this one talks to the rail. Longer
 * than RAIL_CALL_TIMEOUT_MS, so a live worker gives up on a call before another may take the transfer.
 */
export const RAIL_CLAIM_LEASE_MS = 30_000;
/** A rail call unanswered after this long is treated as a rail error (and asked again later). */
export const RAIL_CALL_TIMEOUT_MS = 20_000;
/** Retry delay after a rail call threw, timed out, or the transfer could not be claimed. */
export const RAIL_ERROR_RETRY_MS = 5_000;
/**
 * The `status_reason` of a transfer for which the rail reported a second, different reference: the
 * partner may have paid twice. The first reference is kept, and the transfer leaves the rail queue until
 * someone reconciles it with the partner.
 */
export const RAIL_REFERENCE_CONFLICT_REASON = 'rail_reference_conflict';

/**
 * Where the worker reports what went wrong with a transfer. Fields carry ids, the rail, references and
 * error messages, never credentials or request bodies.
 */
export type RailWorkerLog = (
  level: 'warn' | 'error',
  message: string,
  fields: Record<string, string>,
) => void;

/** One JSON line on stderr: the default, so that a caller that passes no log still hears about failures. */
export const stderrRailWorkerLog: RailWorkerLog = (level, message, fields) => {
  process.stderr.write(`${JSON.stringify({ level, worker: 'rail-worker', msg: message, ...fields })}\n`);
};

export interface RailWorkerOptions {
  /** RAIL_CLAIM_LEASE_MS unless given (tests use a short one). */
  leaseMs?: number | undefined;
  /** RAIL_CALL_TIMEOUT_MS unless given. */
  callTimeoutMs?: number | undefined;
  /** RAIL_WORKER_BATCH_ROWS unless given. */
  batchRows?: number | undefined;
  /** RAIL_WORKER_CONCURRENCY unless given. */
  concurrency?: number | undefined;
  log?: RailWorkerLog | undefined;
  /** Fires when the process stops: no further transfer is claimed (the pass ends between items). */
  stopping?: AbortSignal | undefined;
  /** Fires when the process gives up on calls in flight: their transfers are handed back, due at once. */
  handBack?: AbortSignal | undefined;
}

/** The rail that carries a transfer (undefined: none is configured for its organization). */
export type RailResolver = (transfer: Transfer) => Promise<ResolvedRail | undefined>;

/** A fixed registry (the sandbox's simulated rails) as a resolver: every call goes straight through. */
export function registryResolver(rails: RailRegistry): RailResolver {
  return async (transfer) => ({ adapter: rails[transfer.rail], call: (work) => work() });
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function transferFields(transfer: Transfer, extra: Record<string, string> = {}): Record<string, string> {
  return { transfer_id: transfer.id, rail: transfer.rail, ...extra };
}

/**
 * Claims the next due transfer not yet seen in this pass. Claiming a pending transfer is the hand-off:
 * it becomes `processing` here, before the rail is called, so a cancel can never race a payout that is
 * already under way. Returns undefined when nothing is due; `transfer` is missing when the one found could
 * not be claimed (logged, and pushed back so it is not retried at once); `again` when the one found was
 * already stepped in this pass (left as it is).
 */
async function claimNext(
  deps: Deps,
  stepped: Set<string>,
  leaseMs: number,
  log: RailWorkerLog,
): Promise<{ id: string; transfer?: Transfer; again?: true } | undefined> {
  let found: Transfer | undefined;
  let steppedAlready: string | undefined;
  try {
    const transfer = await deps.store.transaction(async (tx) => {
      const now = deps.now();
      const [due] = await claimDueRailChecks(tx, now, 1, [...stepped]);
      if (!due) return undefined;
      // The query's exclusion list is the one this lane had when it issued it; under load it can run after
      // another lane of this pass stepped the same transfer (its answer, or its lease running out, made it
      // due again). One step a pass: leave it as it is for the next one.
      if (stepped.has(due.id)) {
        steppedAlready = due.id;
        return undefined;
      }
      // Marked before this claim commits: a lane whose query locks the row after the commit (its lease
      // already run out on a slow machine) may get its answer first, and must find it stepped.
      stepped.add(due.id);
      found = due;
      const leaseUntil = new Date(now.getTime() + leaseMs);
      if (due.status === 'pending') {
        return applyStatusChange(tx, deps, due, { to: 'processing', nextRailCheckAt: leaseUntil });
      }
      const leased = { ...due, nextRailCheckAt: leaseUntil };
      await saveTransfer(tx, leased);
      return leased;
    });
    if (steppedAlready !== undefined) return { id: steppedAlready, again: true };
    // A hand-off the release gate refused failed the transfer instead: there is nothing to ask the rail.
    if (transfer?.status === 'failed') return { id: transfer.id };
    return transfer && { id: transfer.id, transfer };
  } catch (error) {
    // The queue itself could not be read: the pass ends and the periodic loop reports it.
    if (found === undefined) throw error;
    const failed: Transfer = found;
    log(
      'error',
      'could not claim transfer for the rail',
      transferFields(failed, { error: errorMessage(error) }),
    );
    try {
      await deferRailCheck(deps.store, failed.id, new Date(deps.now().getTime() + RAIL_ERROR_RETRY_MS));
    } catch (deferError) {
      log('error', 'could not defer rail check', transferFields(failed, { error: errorMessage(deferError) }));
    }
    return { id: failed.id };
  }
}

/** What the rail said: the reference it named (if any), and where the transfer goes next. */
interface RailAnswer {
  reference?: string | undefined;
  next: StatusChange | { recheckAt: Date; reason?: string | undefined };
}

async function askRail(resolve: RailResolver, transfer: Transfer, now: Date): Promise<RailAnswer> {
  const rail = await resolve(transfer);
  if (!rail) return { next: { to: 'failed', failureCode: RAIL_NOT_CONFIGURED_FAILURE } };
  if (transfer.railReference === null) {
    const submitted = await rail.call(() =>
      rail.adapter.submit({ idempotencyReference: transfer.id, transfer }, now),
    );
    if (!submitted.accepted) return { next: { to: 'failed', failureCode: submitted.failureCode } };
    return { reference: submitted.reference, next: { recheckAt: submitted.checkAt } };
  }
  const outcome = await rail.call(() => rail.adapter.check(transfer, now));
  const reference = outcome.reference;
  if (outcome.kind === 'settled')
    return { reference, next: { to: 'settled', networkFee: outcome.networkFee } };
  if (outcome.kind === 'failed')
    return { reference, next: { to: 'failed', failureCode: outcome.failureCode } };
  const handedOverAt = transfer.processingAt ?? transfer.createdAt;
  const timedOut = now.getTime() - handedOverAt.getTime() >= RAIL_RESULT_TIMEOUT_MS;
  return {
    reference,
    next: {
      recheckAt: outcome.checkAt,
      reason: outcome.reason ?? (timedOut ? RAIL_TIMEOUT_REASON : undefined),
    },
  };
}

/** Rejects after `ms` if `work` has not settled by then; the call itself is abandoned, not cancelled. */
export async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the rail did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Records the rail's answer for a claimed transfer, on its current (locked) row. A reference that differs
 * from the recorded one is never dropped or overwritten: it is a conflict, logged with both references and
 * shown on the transfer. A transfer someone moved while we were at the rail (a sandbox settle, another
 * worker after our lease ran out) keeps their change; only a reference it lacks is added.
 */
async function record(deps: Deps, claimed: Transfer, answer: RailAnswer, log: RailWorkerLog): Promise<void> {
  await deps.store.transaction(async (tx) => {
    const current = await findTransfer(tx, claimed.organizationId, claimed.id, { forUpdate: true });
    if (!current) return;
    const now = deps.now();
    const reported = answer.reference;
    if (reported !== undefined && current.railReference !== null && reported !== current.railReference) {
      log(
        'error',
        'rail reported a second reference for one transfer; kept the first and took the transfer off the rail queue',
        transferFields(current, { rail_reference: current.railReference, reported_reference: reported }),
      );
      await saveTransfer(tx, {
        ...current,
        statusReason: RAIL_REFERENCE_CONFLICT_REASON,
        nextRailCheckAt: null,
        updatedAt: now,
      });
      return;
    }
    const moved = current.status !== claimed.status || current.railReference !== claimed.railReference;
    if (moved) {
      if (reported !== undefined && current.railReference === null) {
        await saveTransfer(tx, { ...current, railReference: reported, updatedAt: now });
      }
      return;
    }
    const { next } = answer;
    if ('to' in next) {
      await applyStatusChange(tx, deps, current, { ...next, railReference: reported });
      return;
    }
    // A payout the partner still reports processing long after it was handed over is left to
    // reconciliation (its statement decides it): the poller stops asking, the hold stays.
    const handedOverAt = current.processingAt ?? current.createdAt;
    const pollWindowOver = now.getTime() - handedOverAt.getTime() >= RAIL_STATUS_POLL_WINDOW_MS;
    await saveTransfer(tx, {
      ...current,
      nextRailCheckAt: pollWindowOver ? null : next.recheckAt,
      statusReason: pollWindowOver ? RAIL_POLL_WINDOW_OVER_REASON : (next.reason ?? current.statusReason),
      railReference: reported ?? current.railReference,
      updatedAt: now,
    });
  });
}

async function workOn(
  deps: Deps,
  resolve: RailResolver,
  transfer: Transfer,
  options: { callTimeoutMs: number; log: RailWorkerLog; handBack: AbortSignal | undefined },
): Promise<void> {
  const { callTimeoutMs, log } = options;
  let answer: RailAnswer;
  try {
    const asked = await unlessHandedBack(
      withTimeout(askRail(resolve, transfer, deps.now()), callTimeoutMs),
      options.handBack,
    );
    if (asked === 'handed_back') {
      // The process is stopping: another worker asks again at once, under the same idempotency reference.
      await handBackRailCheck(deps.store, transfer.id, transfer.nextRailCheckAt, deps.now());
      return;
    }
    answer = asked;
  } catch (error) {
    if (error instanceof RailPartnerUnavailableError) {
      // Paused or rate limited: not asked at all, so asked again once the partner may take it.
      answer = {
        next: { recheckAt: new Date(deps.now().getTime() + error.retryAfterMs), reason: error.reason },
      };
    } else {
      log('error', 'rail call failed', transferFields(transfer, { error: errorMessage(error) }));
      answer = {
        next: { recheckAt: new Date(deps.now().getTime() + RAIL_ERROR_RETRY_MS), reason: 'rail_unavailable' },
      };
    }
  }
  try {
    await record(deps, transfer, answer, log);
  } catch (error) {
    // The lease runs out and a later pass asks the rail again, under the same idempotency reference.
    log(
      'error',
      'could not record the rail answer',
      transferFields(transfer, { error: errorMessage(error) }),
    );
  }
}

/** One pass over the due queue; returns how many transfers it looked at. */
export async function runRailWorkerOnce(
  deps: Deps,
  rails: RailRegistry | RailResolver,
  options: RailWorkerOptions = {},
): Promise<number> {
  const resolve = typeof rails === 'function' ? rails : registryResolver(rails);
  const leaseMs = options.leaseMs ?? RAIL_CLAIM_LEASE_MS;
  const callTimeoutMs = options.callTimeoutMs ?? RAIL_CALL_TIMEOUT_MS;
  const batchRows = options.batchRows ?? RAIL_WORKER_BATCH_ROWS;
  const concurrency = Math.max(1, options.concurrency ?? RAIL_WORKER_CONCURRENCY);
  const log = options.log ?? stderrRailWorkerLog;
  // Each transfer gets one step per pass (a submit now, its check in a later pass), as a batch claim did.
  // Lanes claim one transfer at a time (SKIP LOCKED keeps them apart) and share what they have seen.
  const stepped = new Set<string>();
  let done = false;
  // A pass starts with one lane and adds one each time a claim finds work, up to `concurrency`: an idle
  // queue costs one claim a pass, not one per lane (each a transaction and a pooled connection).
  const lanes: Promise<void>[] = [];
  const widen = () => {
    if (lanes.length < concurrency) lanes.push(lane());
  };
  const lane = async () => {
    while (!done && stepped.size < batchRows && !options.stopping?.aborted) {
      const claimed = await claimNext(deps, stepped, leaseMs, log);
      if (!claimed) {
        done = true;
        return;
      }
      widen();
      if (claimed.again) continue;
      if (claimed.transfer) {
        await workOn(deps, resolve, claimed.transfer, { callTimeoutMs, log, handBack: options.handBack });
      }
    }
  };
  widen();
  for (let awaited = 0; awaited < lanes.length; ) {
    const upTo = lanes.length;
    await Promise.all(lanes.slice(awaited, upTo));
    awaited = upTo;
  }
  return stepped.size;
}
