/** The HTTP side of an idempotent write: fingerprint the request, run the use case once, replay on retry. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../app/deps.ts';
import {
  type IdempotencyContext,
  type IdempotentOutcome,
  runIdempotent,
  type WriteResult,
} from '../app/idempotency.ts';
import type { ProblemDocument } from '../domain/errors.ts';
import { requestFingerprint } from '../domain/idempotency.ts';
import type { Queryable } from '../store/store.ts';
import { principalOf } from './auth.ts';
import { PROBLEM_CONTENT_TYPE, rememberProblemCode } from './problems.ts';

export function idempotencyContextOf(request: FastifyRequest): IdempotencyContext {
  // The route's path: routes ignore a trailing slash, so the fingerprint does too.
  const path = (request.url.split('?')[0] ?? request.url).replace(/(.)\/$/, '$1');
  const header = request.headers['idempotency-key'];
  return {
    organizationId: principalOf(request).organizationId,
    key: typeof header === 'string' ? header : undefined,
    method: request.method,
    path,
    fingerprint: requestFingerprint(request.method, path, request.body),
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

export async function sendWrite(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  effect: (tx: Queryable, organizationId: string) => Promise<WriteResult>,
): Promise<FastifyReply> {
  const context = idempotencyContextOf(request);
  const outcome = await runIdempotent(deps, context, (tx) => effect(tx, context.organizationId));
  return sendOutcome(reply, outcome);
}
