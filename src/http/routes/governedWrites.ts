/** The handler of a route that writes a governed setting: the route kit's idempotent write, through approval. */
import type { FastifyReply, FastifyRequest, RouteGenericInterface } from 'fastify';
import type { Deps, Queryable } from '../../app/deps.ts';
import type { ChangeRequest } from '../../app/governedChanges.ts';
import { sendWrite } from '../writes.ts';
import { governedWrite } from './changes.ts';

/**
 * The handler of an idempotent write of a governed setting: the change `changeOf` names is proposed for
 * approval when the policy asks (a 202 with the change, see `pendingChangeResponse`); otherwise `effect`
 * writes it now and is answered `status`. Once per Idempotency-Key, in one transaction, as `idempotentWrite`.
 */
export function governedIdempotentWrite<Route extends RouteGenericInterface>(
  deps: Deps,
  status: number,
  changeOf: (request: FastifyRequest<Route>) => ChangeRequest,
  effect: (tx: Queryable, organizationId: string, request: FastifyRequest<Route>) => Promise<unknown>,
) {
  return (request: FastifyRequest<Route>, reply: FastifyReply): Promise<FastifyReply> =>
    sendWrite(deps, request, reply, (tx, organizationId) =>
      governedWrite(tx, deps, organizationId, request, changeOf(request), async () => ({
        status,
        body: await effect(tx, organizationId, request),
      })),
    );
}
