/**
 * Runs a write once per (organization, Idempotency-Key), Stripe-style. The record is written in the same
 * transaction as the effect, so a crash leaves either both or neither. What the operation decides is
 * recorded and replayed, success or refusal (a 404 reference, insufficient funds, a state that does not
 * allow the change); a request that is invalid (any 400) is never recorded, wherever it is found, and
 * neither is an in-flight conflict, so the client may correct and retry with the same key. The response is
 * kept as the exact bytes sent, so a replay is byte-identical. The batch ledger writer follows the same rules.
 */
import { AppError, problemDocument } from '../domain/errors.ts';
import { IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS, isExpired } from '../domain/idempotency.ts';
import {
  deleteIdempotencyRecord,
  findIdempotencyRecord,
  type IdempotencyRecord,
  insertIdempotencyRecords,
  tryLockIdempotencyKey,
} from '../store/repositories/idempotency.ts';
import type { Queryable } from '../store/store.ts';
import { rollbackToSavepoint, setSavepoint } from '../store/transactions.ts';
import type { Deps } from './deps.ts';
import { openResponseText, sealResponseText } from './encryption.ts';

/** What an effect returns: the status and the body to send. */
export interface WriteResult {
  status: number;
  body: unknown;
  /** The body carries a secret: its idempotency record holds it sealed, and a replay opens it. */
  sensitive?: boolean;
}

/** An answer as sent: the exact JSON text, and whether it replays an earlier request's. */
export interface IdempotentOutcome {
  status: number;
  text: string;
  replayed: boolean;
}

export interface IdempotencyContext {
  organizationId: string;
  key: string | undefined;
  method: string;
  path: string;
  fingerprint: string;
  /** The request's id: a recorded failure carries it, as the first answer did. */
  requestId: string;
}

/**
 * Invalid requests are the client's to correct: never recorded under the key. Missing Travel Rule data is
 * such a correction too (the same transfer, completed), though it is a 422.
 */
export function isRecordedFailure(error: AppError): boolean {
  return (
    error.status !== 400 &&
    error.code !== 'idempotency_key_in_flight' &&
    error.code !== 'travel_rule_required'
  );
}

/** The result recorded for a failure the operation decided: the problem document as first sent. */
export function failureResult(error: AppError, requestId: string): WriteResult {
  return { status: error.status, body: problemDocument(error, requestId) };
}

export function outcomeOf(result: WriteResult): IdempotentOutcome {
  return { status: result.status, text: JSON.stringify(result.body), replayed: false };
}

/**
 * Turns a committed outcome into the caller's answer: a failure decided just now is thrown, so the HTTP
 * edge renders it (byte for byte what was recorded); a replayed one is sent as stored.
 */
export function settleOutcome(outcome: IdempotentOutcome): IdempotentOutcome {
  if (outcome.replayed || outcome.status < 400) return outcome;
  const problem = JSON.parse(outcome.text) as ReturnType<typeof problemDocument>;
  throw new AppError({
    status: problem.status,
    code: problem.code,
    title: problem.title,
    detail: problem.detail,
    param: problem.param,
    errors: problem.errors,
    extensions:
      problem.limit === undefined ? undefined : { limit: problem.limit, remaining: problem.remaining ?? '' },
  });
}

export function inFlightError(): AppError {
  return new AppError({
    status: 409,
    code: 'idempotency_key_in_flight',
    title: 'Request in progress',
    detail: 'A request with this Idempotency-Key is still being processed; retry after it completes.',
    param: 'Idempotency-Key',
    retryAfterSeconds: IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS,
  });
}

/**
 * Takes the key for this transaction. Returns the stored outcome to replay, or undefined when the effect
 * should run; throws 409 when another transaction holds the key and 422 when it was used for another request.
 */
export async function claimIdempotencyKey(
  tx: Queryable,
  context: IdempotencyContext & { key: string },
  now: Date,
): Promise<IdempotentOutcome | undefined> {
  if (!(await tryLockIdempotencyKey(tx, context.organizationId, context.key))) throw inFlightError();
  const record = await readRecord(tx, context, now);
  if (record.outcome) return record.outcome;
  // An expired record may linger until the pruner runs: the key is free again.
  if (record.expired) await deleteIdempotencyRecord(tx, context.organizationId, context.key);
  return undefined;
}

/**
 * The recorded outcome for this key, without taking it: a replay, a 422 when the key was used for another
 * request, or undefined when nothing (unexpired) is recorded. Lets a retry be answered before any
 * validation runs against state that may have changed since the original request.
 */
export async function findStoredOutcome(
  db: Queryable,
  context: IdempotencyContext & { key: string },
  now: Date,
): Promise<IdempotentOutcome | undefined> {
  return (await readRecord(db, context, now)).outcome;
}

async function readRecord(
  db: Queryable,
  context: IdempotencyContext & { key: string },
  now: Date,
): Promise<RecordVerdict> {
  return judgeRecord(await findIdempotencyRecord(db, context.organizationId, context.key), context, now);
}

export interface RecordVerdict {
  outcome?: IdempotentOutcome;
  expired?: boolean;
}

/**
 * What a key's stored record means for this request: its outcome to replay, expired (the key is free
 * again, as it is after a claim that ran out), or nothing stored; throws 422 when the key was used for
 * another request and 409 while another request's claim on it stands.
 */
export function judgeRecord(
  existing: IdempotencyRecord | undefined,
  context: IdempotencyContext & { key: string },
  now: Date,
): RecordVerdict {
  if (!existing) return {};
  if (isExpired(existing.createdAt, now)) return { expired: true };
  if (existing.fingerprint !== context.fingerprint) {
    const sameRoute = existing.method === context.method && existing.path === context.path;
    throw new AppError({
      status: 422,
      code: 'idempotency_key_reused',
      title: 'Idempotency-Key reused',
      detail: sameRoute
        ? `This Idempotency-Key was used for ${existing.method} ${existing.path} with another body. Use a new key for a new request.`
        : `This Idempotency-Key was used for another operation (${existing.method} ${existing.path}). Use a new key for a new request.`,
      param: 'Idempotency-Key',
    });
  }
  // A claim taken before an outbound send (idempotencyClaims.ts): in flight while it stands, then free.
  if (existing.claimedUntil) {
    if (existing.claimedUntil.getTime() > now.getTime()) throw inFlightError();
    return { expired: true };
  }
  return { outcome: { status: existing.responseStatus, text: existing.responseText, replayed: true } };
}

export async function recordIdempotentResult(
  tx: Queryable,
  context: IdempotencyContext & { key: string },
  outcome: IdempotentOutcome,
  now: Date,
): Promise<void> {
  await recordIdempotentResults(tx, [{ context, outcome }], now);
}

/** Records many outcomes with one statement (the batch writer's). */
export async function recordIdempotentResults(
  tx: Queryable,
  results: readonly { context: IdempotencyContext & { key: string }; outcome: IdempotentOutcome }[],
  now: Date,
): Promise<void> {
  await insertIdempotencyRecords(
    tx,
    results.map(({ context, outcome }) => ({
      organizationId: context.organizationId,
      key: context.key,
      fingerprint: context.fingerprint,
      method: context.method,
      path: context.path,
      responseStatus: outcome.status,
      responseText: outcome.text,
      createdAt: now,
    })),
  );
}

/**
 * `prepare`, when given, runs before the transaction opens and after a stored outcome for the key (a replay
 * is answered first, without checking anything again): checks that wait on the network, such as resolving a
 * webhook URL's host, hold no transaction, and their failures are never recorded.
 */
export async function runIdempotent(
  deps: Deps,
  context: IdempotencyContext,
  effect: (tx: Queryable) => Promise<WriteResult>,
  prepare?: () => Promise<void>,
): Promise<IdempotentOutcome> {
  const { key } = context;
  if (key === undefined) {
    await prepare?.();
    return outcomeOf(await deps.store.transaction(effect));
  }
  const keyed = { ...context, key };
  const opened = (outcome: IdempotentOutcome) => openedOutcome(deps, keyed, outcome);
  // A retry is answered from the record first, before anything is validated against state that may have
  // changed since the original request.
  const stored = await findStoredOutcome(deps.store, keyed, deps.now());
  if (stored) return opened(stored);
  await prepare?.();
  const outcome = await deps.store.transaction(async (tx): Promise<IdempotentOutcome> => {
    const now = deps.now();
    const replay = await claimIdempotencyKey(tx, keyed, now);
    if (replay) return opened(replay);
    return decideAndRecord(tx, deps, keyed, effect, (record) =>
      recordIdempotentResult(tx, keyed, record, now),
    );
  });
  // Thrown only after the commit, so the recorded failure stays recorded.
  return settleOutcome(outcome);
}

/** A stored answer opened for the client: one that carries a secret is kept sealed. */
export function openedOutcome(
  deps: Deps,
  context: IdempotencyContext & { key: string },
  outcome: IdempotentOutcome,
): IdempotentOutcome {
  return { ...outcome, text: openResponseText(deps, context, outcome.text) };
}

/**
 * Runs the effect in the key's transaction, holding the key: a failure the operation decided is recorded
 * (the effect's writes undone); an invalid request is thrown, recording nothing. `record` stores the
 * answer (sealed when it carries a secret); the answer as sent is returned.
 */
export async function decideAndRecord(
  tx: Queryable,
  deps: Deps,
  context: IdempotencyContext & { key: string },
  effect: (tx: Queryable) => Promise<WriteResult>,
  record: (stored: IdempotentOutcome) => Promise<void>,
): Promise<IdempotentOutcome> {
  let result: WriteResult;
  await setSavepoint(tx, 'idempotent_effect');
  try {
    result = await effect(tx);
  } catch (error) {
    // An invalid request rolls back whole and is not recorded; a decided failure is.
    if (!(error instanceof AppError) || !isRecordedFailure(error)) throw error;
    // Undo the effect's writes but keep the transaction, so the failure itself is recorded.
    await rollbackToSavepoint(tx, 'idempotent_effect');
    result = failureResult(error, context.requestId);
  }
  const outcome = outcomeOf(result);
  await record(
    result.sensitive ? { ...outcome, text: sealResponseText(deps, context, outcome.text) } : outcome,
  );
  return outcome;
}
