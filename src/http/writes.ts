/** The HTTP side of an idempotent write: fingerprint the request, run the use case once, replay on retry. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../app/deps.ts';
import {
  type IdempotencyContext,
  type IdempotentOutcome,
  runIdempotent,
  type WriteResult,
} from '../app/idempotency.ts';
import { requestFingerprint } from '../domain/idempotency.ts';
import type { Queryable } from '../store/store.ts';
import { principalOf } from './auth.ts';

export function idempotencyContextOf(request: FastifyRequest): IdempotencyContext {
  const path = request.url.split('?')[0] ?? request.url;
  const header = request.headers['idempotency-key'];
  return {
    organizationId: principalOf(request).organizationId,
    key: typeof header === 'string' ? header : undefined,
    method: request.method,
    path,
    fingerprint: requestFingerprint(request.method, path, request.body),
  };
}

export function sendOutcome(reply: FastifyReply, outcome: IdempotentOutcome): FastifyReply {
  if (outcome.replayed) reply.header('Idempotent-Replayed', 'true');
  return reply.code(outcome.status).send(outcome.body);
}

/**
 * Runs the write once per Idempotency-Key. `prepare` (optional) runs first with no transaction open, and only
 * when there is no stored outcome to replay; what it returns reaches the effect, and its errors are never
 * recorded: for checks that wait on the network, such as DNS.
 */
export async function sendWrite<Prepared = undefined>(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  effect: (tx: Queryable, organizationId: string, prepared: Prepared) => Promise<WriteResult>,
  prepare?: (organizationId: string) => Promise<Prepared>,
): Promise<FastifyReply> {
  const context = idempotencyContextOf(request);
  let prepared = undefined as Prepared;
  const outcome = await runIdempotent(
    deps,
    context,
    (tx) => effect(tx, context.organizationId, prepared),
    prepare &&
      (async () => {
        prepared = await prepare(context.organizationId);
      }),
  );
  return sendOutcome(reply, outcome);
}
