/**
 * Runs a write once per (organization, Idempotency-Key), Stripe-style. The record is written in the same
 * transaction as the effect, so a crash leaves either both or neither. A failure the effect raises on
 * purpose (an AppError such as insufficient funds) is recorded and replayed too; validation failures
 * before the effect starts and in-flight conflicts are not, so the client may correct and retry.
 */
import { AppError, type AppErrorInit } from '../domain/errors.ts';
import { IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS, isExpired } from '../domain/idempotency.ts';
import {
  deleteIdempotencyRecord,
  findIdempotencyRecord,
  insertIdempotencyRecord,
  tryLockIdempotencyKey,
} from '../store/repositories/idempotency.ts';
import type { Queryable } from '../store/store.ts';
import type { Deps } from './deps.ts';
import { openResponseBody, sealResponseBody } from './encryption.ts';

export interface WriteResult {
  status: number;
  body: unknown;
  /** The body carries a secret: its idempotency record holds it sealed, and a replay opens it. */
  sensitive?: boolean;
}

export interface IdempotentOutcome extends WriteResult {
  replayed: boolean;
}

export interface IdempotencyContext {
  organizationId: string;
  key: string | undefined;
  method: string;
  path: string;
  fingerprint: string;
}

interface StoredError {
  error: Omit<AppErrorInit, 'retryAfterSeconds' | 'replayed'>;
}

function isStoredError(body: unknown): body is StoredError {
  return typeof body === 'object' && body !== null && 'error' in body && Object.keys(body).length === 1;
}

/** The result recorded for a failure the operation raised on purpose. */
export function failureResult(error: AppError): WriteResult {
  const { status, code, title, detail, param, errors } = error;
  return { status, body: { error: { status, code, title, detail, param, errors } } satisfies StoredError };
}

/** Turns a committed outcome into the caller's answer: a recorded failure is thrown again. */
export function settleOutcome(outcome: IdempotentOutcome): IdempotentOutcome {
  if (isStoredError(outcome.body)) throw new AppError({ ...outcome.body.error, replayed: outcome.replayed });
  return outcome;
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
): Promise<{ outcome?: IdempotentOutcome; expired?: boolean }> {
  const existing = await findIdempotencyRecord(db, context.organizationId, context.key);
  if (!existing) return {};
  if (isExpired(existing.createdAt, now)) return { expired: true };
  if (existing.fingerprint !== context.fingerprint) {
    throw new AppError({
      status: 422,
      code: 'idempotency_key_reused',
      title: 'Idempotency-Key reused',
      detail: `This Idempotency-Key was used for a different request (${existing.method} ${existing.path} with another body). Use a new key for a new request.`,
      param: 'Idempotency-Key',
    });
  }
  return { outcome: { status: existing.responseStatus, body: existing.responseBody, replayed: true } };
}

export async function recordIdempotentResult(
  tx: Queryable,
  context: IdempotencyContext & { key: string },
  result: WriteResult,
  now: Date,
): Promise<void> {
  await insertIdempotencyRecord(tx, {
    organizationId: context.organizationId,
    key: context.key,
    fingerprint: context.fingerprint,
    method: context.method,
    path: context.path,
    responseStatus: result.status,
    responseBody: result.body,
    createdAt: now,
  });
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
    const { sensitive: _, ...result } = await deps.store.transaction(effect);
    return { ...result, replayed: false };
  }
  const keyed = { ...context, key };
  const opened = (outcome: IdempotentOutcome) => ({
    ...outcome,
    body: openResponseBody(deps, keyed, outcome.body),
  });
  if (prepare) {
    const stored = await findStoredOutcome(deps.store, keyed, deps.now());
    if (stored) return settleOutcome(opened(stored));
    await prepare();
  }
  const outcome = await deps.store.transaction(async (tx): Promise<IdempotentOutcome> => {
    const now = deps.now();
    const replay = await claimIdempotencyKey(tx, keyed, now);
    if (replay) return opened(replay);
    let result: WriteResult;
    await tx.query('SAVEPOINT idempotent_effect');
    try {
      result = await effect(tx);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // Undo the effect's writes but keep the transaction, so the failure itself is recorded.
      await tx.query('ROLLBACK TO SAVEPOINT idempotent_effect');
      result = failureResult(error);
    }
    const { sensitive, ...answer } = result;
    const stored = sensitive ? { ...answer, body: sealResponseBody(deps, keyed, answer.body) } : answer;
    await recordIdempotentResult(tx, keyed, stored, now);
    return { ...answer, replayed: false };
  });
  // Thrown only after the commit, so the recorded failure stays recorded.
  return settleOutcome(outcome);
}
