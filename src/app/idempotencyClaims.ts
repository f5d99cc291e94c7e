/**
 * An idempotent write whose first step sends something out that cannot be taken back (the sandbox's
 * partner feeds: money into a simulator, whose webhook then comes back to this service). The key's lock
 * lasts only a transaction, and the send must hold none (on the embedded database the webhook's own
 * transaction would wait behind it), so the key is claimed first in a committed row: while the claim
 * stands, the same key is answered 409 `idempotency_key_in_flight`. Then the send, then the effect in the
 * key's transaction, which turns the claim into the record. A send or check that fails gives the claim
 * up, recording nothing; a claim whose process died frees the key after IDEMPOTENCY_CLAIM_LEASE_MS.
 */
import { problemDocument } from '../domain/errors.ts';
import {
  completeIdempotencyClaim,
  findIdempotencyRecord,
  insertIdempotencyClaim,
  lockOwnIdempotencyClaim,
  releaseIdempotencyClaim,
} from '../store/repositories/idempotency.ts';
import type { Queryable } from '../store/store.ts';
import type { Deps } from './deps.ts';
import {
  claimIdempotencyKey,
  decideAndRecord,
  findStoredOutcome,
  type IdempotencyContext,
  type IdempotentOutcome,
  inFlightError,
  judgeRecord,
  openedOutcome,
  runIdempotent,
  settleOutcome,
  type WriteResult,
} from './idempotency.ts';

/**
 * How long a claim stands: four times the longest a request may run (REQUEST_TIMEOUT_MS, 30 s), so only
 * a claim whose process died runs out.
 */
export const IDEMPOTENCY_CLAIM_LEASE_MS = 120_000;

/**
 * Runs `send` once per Idempotency-Key, then `effect` in the key's transaction with what it sent. Without a
 * key nothing is deduplicated, as for every write.
 */
export async function runClaimedIdempotent(
  deps: Deps,
  context: IdempotencyContext,
  effect: (tx: Queryable) => Promise<WriteResult>,
  send: () => Promise<void>,
): Promise<IdempotentOutcome> {
  const { key, organizationId } = context;
  if (key === undefined) return runIdempotent(deps, context, effect, send);
  const keyed = { ...context, key };
  const stored = await findStoredOutcome(deps.store, keyed, deps.now());
  if (stored) return openedOutcome(deps, keyed, stored);
  // The claim answers the in-flight conflict, under this request's id: what an older release replays
  // while it stands, and what makes the claim this request's own.
  const claimText = JSON.stringify(problemDocument(inFlightError(), context.requestId));
  const replay = await deps.store.transaction(async (tx) => {
    const now = deps.now();
    const earlier = await claimIdempotencyKey(tx, keyed, now);
    if (earlier) return earlier;
    await insertIdempotencyClaim(tx, {
      organizationId,
      key,
      fingerprint: context.fingerprint,
      method: context.method,
      path: context.path,
      responseStatus: inFlightError().status,
      responseText: claimText,
      createdAt: now,
      claimedUntil: new Date(now.getTime() + IDEMPOTENCY_CLAIM_LEASE_MS),
    });
    return undefined;
  });
  if (replay) return openedOutcome(deps, keyed, replay);
  let outcome: IdempotentOutcome;
  try {
    await send();
    outcome = await deps.store.transaction(async (tx) => {
      if (!(await lockOwnIdempotencyClaim(tx, organizationId, key, claimText))) {
        // The claim ran out and another request took the key: answered as the key stands now.
        const now = deps.now();
        const verdict = judgeRecord(await findIdempotencyRecord(tx, organizationId, key), keyed, now);
        if (verdict.outcome) return openedOutcome(deps, keyed, verdict.outcome);
        throw inFlightError();
      }
      return decideAndRecord(tx, deps, keyed, effect, (record) =>
        completeIdempotencyClaim(tx, organizationId, key, claimText, {
          responseStatus: record.status,
          responseText: record.text,
        }),
      );
    });
  } catch (error) {
    // Nothing recorded: the key is free for the client's corrected or later retry.
    await releaseIdempotencyClaim(deps.store, organizationId, key, claimText);
    throw error;
  }
  return settleOutcome(outcome);
}
