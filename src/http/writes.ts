/** The HTTP side of an idempotent write: fingerprint the request, run the use case once, replay on retry. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps, Queryable } from '../app/deps.ts';
import {
  type IdempotencyContext,
  type IdempotentOutcome,
  runIdempotent,
  type WriteResult,
} from '../app/idempotency.ts';
import { runClaimedIdempotent } from '../app/idempotencyClaims.ts';
import type { ProblemDocument } from '../domain/errors.ts';
import { requestFingerprint } from '../domain/idempotency.ts';
import { principalOf } from './auth.ts';
import { PROBLEM_CONTENT_TYPE, rememberProblemCode } from './problems.ts';

/**
 * `replayOnlyTo` (a member's or key's id) binds the request's fingerprint to who sent it: an answer that
 * carries a secret is replayed to its requester only, and the same key and body from anyone else in the
 * organization is a 422 `idempotency_key_reused`, never the secret.
 */
export function idempotencyContextOf(request: FastifyRequest, replayOnlyTo?: string): IdempotencyContext {
  // The route's path: routes ignore a trailing slash, so the fingerprint does too.
  const path = (request.url.split('?')[0] ?? request.url).replace(/(.)\/$/, '$1');
  const header = request.headers['idempotency-key'];
  const fingerprinted =
    replayOnlyTo === undefined ? request.body : { body: request.body ?? null, requester: replayOnlyTo };
  return {
    organizationId: principalOf(request).organizationId,
    key: typeof header === 'string' ? header : undefined,
    method: request.method,
    path,
    fingerprint: requestFingerprint(request.method, path, fingerprinted),
    requestId: request.id,
  };
}

/** Sends an outcome as its exact recorded text, so the first answer and every replay are the same bytes. */
export function sendOutcome(reply: FastifyReply, outcome: IdempotentOutcome): FastifyReply {
  if (outcome.replayed) reply.header('Idempotent-Replayed', 'true');
  if (outcome.status >= 400) rememberProblemCode(reply, (JSON.parse(outcome.text) as ProblemDocument).code);
  return reply
    .code(outcome.status)
    .type(outcome.status >= 400 ? PROBLEM_CONTENT_TYPE : 'application/json; charset=utf-8')
    .send(outcome.text);
}

/**
 * Runs the write once per Idempotency-Key. `prepare` (optional) runs first with no transaction open, and only
 * when there is no stored outcome to replay; what it returns reaches the effect, and its errors are never
 * recorded: for checks that wait on the network, such as DNS. With `claimBeforePrepare`, for a prepare that
 * sends something out, the key is claimed before it runs (src/app/idempotencyClaims.ts), so two requests
 * with one key never both send.
 */
export async function sendWrite<Prepared = undefined>(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  effect: (tx: Queryable, organizationId: string, prepared: Prepared) => Promise<WriteResult>,
  prepare?: (organizationId: string) => Promise<Prepared>,
  options: { replayOnlyTo?: string; claimBeforePrepare?: boolean } = {},
): Promise<FastifyReply> {
  const context = idempotencyContextOf(request, options.replayOnlyTo);
  let prepared = undefined as Prepared;
  const run = (tx: Queryable) => effect(tx, context.organizationId, prepared);
  const prepareOnce = prepare
    ? async () => {
        prepared = await prepare(context.organizationId);
      }
    : undefined;
  const outcome =
    prepareOnce && options.claimBeforePrepare
      ? await runClaimedIdempotent(deps, context, run, prepareOnce)
      : await runIdempotent(deps, context, run, prepareOnce);
  return sendOutcome(reply, outcome);
}
