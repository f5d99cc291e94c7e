/**
 * The route of an idempotent write built whole, as `retrieveByIdRoute` builds a read: its method and path,
 * its options (`writeOperation`) and its handler (`idempotentWrite`, most often over an effect of
 * routeEffects.ts, or any of routeKit's write handlers), with the request's type taken from the handler.
 * And the documented parts of a write on one resource by its `id`.
 *
 * ```ts
 * writeRoute(app, deps, 'PATCH', '/v1/wallets/:id', 200, changeById(deps, updateWallet, presentWallet), {
 *   ...ACCESS.write, operationId: 'updateWallet', summary: 'Update a wallet', body: walletChangeSchema,
 *   ...writtenById(walletParams, 'Wallet', 'The wallet.'),
 * });
 * ```
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteGenericInterface } from 'fastify';
import type { Deps, Queryable } from '../app/deps.ts';
import { idempotentWrite, type OperationSpec, writeOperation, written } from './routeKit.ts';

/** The methods of an idempotent write. */
export type WriteMethod = 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * The route of a write (`method` `path`) documented as `spec` says, answered by `handle` (one of routeKit's
 * idempotent write handlers), with the request's type taken from the handler.
 */
export function registerWrite<Route extends RouteGenericInterface>(
  app: FastifyInstance,
  method: WriteMethod,
  path: string,
  spec: OperationSpec,
  handle: (request: FastifyRequest<Route>, reply: FastifyReply) => Promise<FastifyReply>,
): void {
  // Registered untyped: Fastify cannot resolve a handler's reply type while `Route` is a type parameter. The
  // request is the one `Route` describes: the route's schema (`spec`) validates it so before the handler runs.
  app.route({
    method,
    url: path,
    ...writeOperation(spec),
    handler: (request, reply) => handle(request as unknown as FastifyRequest<Route>, reply),
  });
}

/**
 * The route of an idempotent write (`method` `path`) that answers `status` with what `effect` returns, once
 * per Idempotency-Key (`idempotentWrite`), documented as `spec` says.
 */
export function writeRoute<Route extends RouteGenericInterface>(
  app: FastifyInstance,
  deps: Deps,
  method: WriteMethod,
  path: string,
  status: number,
  effect: (tx: Queryable, organizationId: string, request: FastifyRequest<Route>) => Promise<unknown>,
  spec: OperationSpec,
): void {
  registerWrite(app, method, path, spec, idempotentWrite(deps, status, effect));
}

/**
 * What an operation writing one resource by its `id` says besides its words and body: the path's `id`
 * (`params`) and its 200 (`schema`, with the description of the resource written). Spread into
 * `writeOperation`'s spec.
 */
export function writtenById(params: object, schema: string | object, description: string) {
  return { params, responses: { 200: written(schema, description) } };
}

/**
 * The responses of a write that makes something once and answers the same thing after (`createOrFindWrite`,
 * or a prepared write that says whether it made it): 201 with what it made now, 200 with what was made
 * before, both `schema`.
 */
export function createdOrFound(
  schema: string | object,
  createdDescription: string,
  foundDescription: string,
) {
  return { 200: written(schema, foundDescription), 201: written(schema, createdDescription) };
}
