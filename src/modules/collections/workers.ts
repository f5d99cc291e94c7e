/**
 * Moves collections to their outcome, outside the request: claims a due one (SKIP LOCKED) and leases it in
 * a short transaction, asks the payer through the partner with no transaction open, then records the answer
 * in its own transaction after checking the collection has not moved meanwhile (a callback may have
 * settled it).
 *
 * A request-to-pay is not always safe to repeat: M-Pesa's STK push has no idempotency key, so asking again
 * after a call whose outcome is unknown (it threw, or timed out) could prompt the payer twice and collect
 * twice. So an unknown outcome is never retried: the collection waits for the partner's callback until it
 * expires. A call refused before it was made (the partner paused or rate limited) is retried.
 */

import type { Deps } from '../../app/deps.ts';
import { RailPartnerUnavailableError, type ResolvedPartnerRail } from '../../rails/partner.ts';
import type { RailOutcome } from '../../rails/rail.ts';
import { SANDBOX_PHONE_BEHAVIOURS, type SandboxBehaviour, sandboxRailOutcome } from '../../rails/sandbox.ts';
import {
  RAIL_CALL_TIMEOUT_MS,
  RAIL_CLAIM_LEASE_MS,
  type RailWorkerLog,
  stderrRailWorkerLog,
  withTimeout,
} from '../transfers/index.ts';
import { COLLECTION_EXPIRED_FAILURE, COLLECTION_RAIL_NOT_CONFIGURED, type Collection } from './domain.ts';
import { claimDueCollections, findCollection, saveCollection } from './repository.ts';
import { moveCollection } from './useCases.ts';

export const COLLECTION_WORKER_INTERVAL_MS = 500;
/** Collections one pass looks at most. */
export const COLLECTION_WORKER_BATCH_ROWS = 100;
/** How often a collection the simulation keeps waiting (or the partner did not settle) is asked again. */
export const COLLECTION_RECHECK_MS = 10_000;

/** How the worker asks about one collection: a partner, or the sandbox's simulation. */
export interface CollectionRail {
  collect(
    collection: Collection,
    now: Date,
  ): Promise<{ accepted: true; reference: string; checkAt: Date } | { accepted: false; failureCode: string }>;
  check(collection: Collection, now: Date): Promise<RailOutcome>;
  call<T>(work: () => Promise<T>): Promise<T>;
}

export type CollectionRailResolver = (collection: Collection) => Promise<CollectionRail | undefined>;

/** A partner's collection calls, through its guard (circuit breaker, rate limit). */
export function partnerCollectionRail(rail: ResolvedPartnerRail): CollectionRail {
  return {
    collect: (c, now) =>
      rail.adapter.collect(
        {
          idempotencyReference: c.id,
          amountMinor: c.amountMinor,
          currency: c.currency,
          payerPhone: c.payerPhone ?? '',
          reference: c.reference,
          description: c.description,
        },
        now,
      ),
    check: (c, now) => rail.adapter.checkCollection(c.partnerReference ?? '', c.id, now),
    call: rail.call,
  };
}

/** The sandbox's simulated payer, by the sandbox's magic phone numbers (any other number pays). */
export function simulatedCollectionRail(): CollectionRail {
  const behaviour = (c: Collection): SandboxBehaviour =>
    (c.payerPhone ? SANDBOX_PHONE_BEHAVIOURS[c.payerPhone] : undefined) ?? { kind: 'settle' };
  return {
    async collect(c, now) {
      return { accepted: true, reference: `simcol_${c.id}`, checkAt: now };
    },
    check: async (c, now) =>
      sandboxRailOutcome(behaviour(c), c.createdAt, now, {
        kind: 'processing',
        checkAt: new Date(now.getTime() + COLLECTION_RECHECK_MS),
      }),
    call: (work) => work(),
  };
}

type Answer =
  | { to: 'succeeded' | 'failed'; failureCode?: string; partnerReference?: string }
  | { to: 'processing'; partnerReference?: string; nextCheckAt: Date }
  | { to: 'pending'; nextCheckAt: Date };

async function ask(
  rail: CollectionRail | undefined,
  c: Collection,
  deps: Deps,
  log: RailWorkerLog,
): Promise<Answer> {
  const now = deps.now();
  if (!rail) return { to: 'failed', failureCode: COLLECTION_RAIL_NOT_CONFIGURED };
  const until = (at: Date) => new Date(Math.min(at.getTime(), c.expiresAt.getTime()));
  if (c.status === 'pending') {
    try {
      const asked = await withTimeout(
        rail.call(() => rail.collect(c, now)),
        RAIL_CALL_TIMEOUT_MS,
      );
      if (!asked.accepted) return { to: 'failed', failureCode: asked.failureCode };
      return { to: 'processing', partnerReference: asked.reference, nextCheckAt: until(asked.checkAt) };
    } catch (error) {
      if (error instanceof RailPartnerUnavailableError) {
        return { to: 'pending', nextCheckAt: new Date(now.getTime() + error.retryAfterMs) };
      }
      // The payer may have been asked: never ask again; the callback or the expiry decides.
      log('error', 'collection request failed; waiting for the partner callback', {
        collection_id: c.id,
        error: error instanceof Error ? error.message : String(error),
      });
      return { to: 'processing', nextCheckAt: c.expiresAt };
    }
  }
  if (c.partnerReference === null) return { to: 'processing', nextCheckAt: c.expiresAt };
  try {
    const outcome = await withTimeout(
      rail.call(() => rail.check(c, now)),
      RAIL_CALL_TIMEOUT_MS,
    );
    if (outcome.kind === 'settled') return { to: 'succeeded' };
    if (outcome.kind === 'failed') return { to: 'failed', failureCode: outcome.failureCode };
    return { to: 'processing', nextCheckAt: until(outcome.checkAt) };
  } catch (error) {
    const retryMs = error instanceof RailPartnerUnavailableError ? error.retryAfterMs : COLLECTION_RECHECK_MS;
    return { to: 'processing', nextCheckAt: until(new Date(now.getTime() + retryMs)) };
  }
}

/** One pass over the due collections; returns how many it looked at. */
export async function runCollectionWorkerOnce(
  deps: Deps,
  resolve: CollectionRailResolver,
  options: { log?: RailWorkerLog } = {},
): Promise<number> {
  const log = options.log ?? stderrRailWorkerLog;
  const seen: string[] = [];
  while (seen.length < COLLECTION_WORKER_BATCH_ROWS) {
    const claimed = await deps.store.transaction(async (tx) => {
      const now = deps.now();
      const [due] = await claimDueCollections(tx, now, 1, seen);
      if (!due) return undefined;
      if (now >= due.expiresAt) {
        // Nobody answered in time (or the callback never came): the payer paid nothing.
        await moveCollection(tx, deps, due, { to: 'failed', failureCode: COLLECTION_EXPIRED_FAILURE });
        return { id: due.id };
      }
      const leased = { ...due, nextCheckAt: new Date(now.getTime() + RAIL_CLAIM_LEASE_MS) };
      await saveCollection(tx, leased);
      return { id: due.id, collection: leased };
    });
    if (!claimed) break;
    seen.push(claimed.id);
    if (!claimed.collection) continue;
    const c = claimed.collection;
    const answer = await ask(await resolve(c), c, deps, log);
    await deps.store.transaction(async (tx) => {
      const current = await findCollection(tx, c.organizationId, c.id, { forUpdate: true });
      // Moved meanwhile (a callback settled it): theirs stands.
      if (!current || current.status !== c.status) return;
      if (answer.to === 'pending') {
        await saveCollection(tx, { ...current, nextCheckAt: answer.nextCheckAt, updatedAt: deps.now() });
      } else if (answer.to === 'processing') {
        if (current.status === 'pending') {
          await moveCollection(tx, deps, current, answer);
        } else {
          await saveCollection(tx, { ...current, nextCheckAt: answer.nextCheckAt, updatedAt: deps.now() });
        }
      } else if (answer.to === 'succeeded' && current.status === 'pending') {
        // Settled at once (the simulation): processing first, so the status machine is walked in order.
        const processing = await moveCollection(tx, deps, current, {
          to: 'processing',
          partnerReference: answer.partnerReference,
        });
        await moveCollection(tx, deps, processing, answer);
      } else {
        await moveCollection(tx, deps, current, answer);
      }
    });
  }
  return seen.length;
}
