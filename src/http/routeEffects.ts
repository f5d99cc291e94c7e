/**
 * The effects of idempotent writes that call one app function with what the request names (the path's
 * `:id`, the body, the calling key as the actor) and answer what it returns, presented: what
 * `idempotentWrite`, `governedIdempotentWrite` and `createOrFindWrite` run, built from the function and its
 * presenter.
 *
 * ```ts
 * idempotentWrite(deps, 200, actOnId(deps, cancelTransfer, presentTransfer))
 * ```
 */
import type { FastifyRequest, RouteGenericInterface } from 'fastify';
import type { Deps, Queryable } from '../app/deps.ts';
import type { EvidenceActor } from '../domain/evidence.ts';
import { requestActor, requestActorId } from './auth.ts';

/** An effect as an idempotent write runs it: in the key's transaction, for the key's organization. */
type Effect<Route extends RouteGenericInterface, Wire> = (
  tx: Queryable,
  organizationId: string,
  request: FastifyRequest<Route>,
) => Promise<Wire>;

/**
 * The request's body as its route declares it: Fastify's type for it stays unresolved while `Body` is a
 * type parameter, and resolves to `Body` itself for every body a route declares.
 */
function bodyOf<Body>(request: FastifyRequest<{ Body: Body }>): Body {
  return request.body as Body;
}

/** An app function run in the key's transaction for its organization: `(tx, deps, organizationId, ...args)`. */
type InOrganization<Args extends unknown[], Result> = (
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  ...args: Args
) => Promise<Result>;

/**
 * An app function on the resource a path's `:id` names: `(tx, deps, organizationId, id, ...args, actor)`,
 * `args` being what the request asks of it.
 */
export type OnId<Args extends unknown[], Result> = InOrganization<
  [id: string, ...args: Args, actor: EvidenceActor],
  Result
>;

/** The calling key acts on the resource the path's `:id` names: `act(tx, deps, organizationId, id, actor)`. */
export function actOnId<Result, Wire>(
  deps: Deps,
  act: OnId<[], Result>,
  present: (result: Result) => Wire,
): Effect<{ Params: { id: string } }, Wire> {
  return async (tx, organizationId, request) =>
    present(await act(tx, deps, organizationId, request.params.id, requestActor(request)));
}

/**
 * The calling key changes the resource the path's `:id` names as the body says:
 * `change(tx, deps, organizationId, id, body, actor)`.
 */
export function changeById<Body, Result, Wire>(
  deps: Deps,
  change: OnId<[body: Body], Result>,
  present: (result: Result) => Wire,
): Effect<{ Params: { id: string }; Body: Body }, Wire> {
  return async (tx, organizationId, request) =>
    present(
      await change(tx, deps, organizationId, request.params.id, bodyOf(request), requestActor(request)),
    );
}

/**
 * The body makes (or sets) something for the key's organization: `make(tx, deps, organizationId, body,
 * actor)`; a function that records no actor takes the first four only.
 */
export function makeFromBody<Body, Result, Wire>(
  deps: Deps,
  make: InOrganization<[body: Body, actor: EvidenceActor], Result>,
  present: (result: Result) => Wire,
): Effect<{ Body: Body }, Wire> {
  return async (tx, organizationId, request) =>
    present(await make(tx, deps, organizationId, bodyOf(request), requestActor(request)));
}

/**
 * The body reports something the organization records once (a figure, a movement at the bank):
 * `record(tx, deps, organizationId, body, actor, createdBy)` records it, or finds the same one recorded
 * (`created` false), and what it holds is answered presented. What `createOrFindWrite` runs.
 */
export function recordFromBody<Body, Result extends { created: boolean }, Wire>(
  deps: Deps,
  record: InOrganization<[body: Body, actor: EvidenceActor, createdBy: string], Result>,
  present: (result: Result) => Wire,
): Effect<{ Body: Body }, { created: boolean; body: Wire }> {
  return async (tx, organizationId, request) => {
    const actorId = requestActorId(request);
    const result = await record(tx, deps, organizationId, bodyOf(request), requestActor(request), actorId);
    return { created: result.created, body: present(result) };
  };
}

/** What a write reads its input from: the request's body, and (for an upload) its query string. */
export interface BodyAndQuery<Body, Query> {
  body: Body;
  query: Query;
}

/**
 * What the request asks (`inputOf` reads it from the body, or from an upload and its query string) creates a
 * record for the key's organization, `created_by` the calling key's member, else the key:
 * `create(tx, deps, organizationId, inputOf(request), createdBy)`. The query string is optional: a route that
 * takes only a JSON body declares none.
 */
export function createFromRequest<Body, Query, Input, Result, Wire>(
  deps: Deps,
  inputOf: (request: BodyAndQuery<Body, Query>) => Input,
  create: InOrganization<[input: Input, createdBy: string], Result>,
  present: (result: Result) => Wire,
): Effect<{ Body: Body; Querystring?: Query }, Wire> {
  return async (tx, organizationId, request) => {
    const input = inputOf({ body: bodyOf(request), query: request.query as Query });
    return present(await create(tx, deps, organizationId, input, requestActorId(request)));
  };
}

/**
 * As `changeById`, with what the app function takes read from the body by `inputOf` (the wire's names to
 * the app's): `change(tx, deps, organizationId, id, inputOf(body), actor)`.
 */
export function changeByIdFrom<Body, Input, Result, Wire>(
  deps: Deps,
  inputOf: (body: Body) => Input,
  change: OnId<[input: Input], Result>,
  present: (result: Result) => Wire,
): Effect<{ Params: { id: string }; Body: Body }, Wire> {
  return async (tx, organizationId, request) =>
    present(
      await change(
        tx,
        deps,
        organizationId,
        request.params.id,
        inputOf(bodyOf(request)),
        requestActor(request),
      ),
    );
}

/**
 * The calling key takes the route's `action` (one of those a resource's paths name, `/v1/wallets/:id/freeze`)
 * on the resource the path's `:id` names, with what `inputOf` reads from the body:
 * `take(tx, deps, organizationId, id, action, input, actor)`.
 */
export function actionOnId<Action, Body, Input, Result, Wire>(
  deps: Deps,
  action: Action,
  inputOf: (body: Body) => Input,
  take: OnId<[action: Action, input: Input], Result>,
  present: (result: Result) => Wire,
): Effect<{ Params: { id: string }; Body: Body }, Wire> {
  return changeByIdFrom(
    deps,
    inputOf,
    (tx, deps, organizationId, id, input: Input, actor) =>
      take(tx, deps, organizationId, id, action, input, actor),
    present,
  );
}
