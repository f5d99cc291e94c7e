/**
 * The reads most resources have, whole or in part, built on routeKit: the route of a read by id and the
 * documented parts of one, a resource's list and read by id registered together, the handler of a read of
 * what the organization has one of (a setting, its profile), the handler of a list of what one resource
 * holds, and the documented parts of a list of the organization's records paged by id with its filters.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../app/deps.ts';
import type { IdPrefix } from '../domain/ids.ts';
import type { Page, PageRequest } from '../domain/pagination.ts';
import { type ListQuery, pageRequestOf, presentList } from './presenters.ts';
import {
  found,
  LIST_PROBLEMS,
  type OperationAccess,
  type OperationSpec,
  type OperationWords,
  organizationOf,
  readOperation,
  retrieveById,
  retrieveFilteredPage,
} from './routeKit.ts';
import { listEnvelopeSchema, listQuerySchema } from './schemas.ts';

/** The route of a read of one resource by its `id` (GET `path`): `retrieveById`'s handler with its options. */
export function retrieveByIdRoute<Found, Wire>(
  app: FastifyInstance,
  deps: Deps,
  path: string,
  get: (deps: Deps, organizationId: string, id: string) => Promise<Found>,
  present: (found: Found) => Wire,
  spec: OperationSpec,
): void {
  app.get<{ Params: { id: string } }>(path, readOperation(spec), retrieveById(deps, get, present));
}

/**
 * What an operation reading one resource by its `id` says besides its words: the path's `id` (`params`) and
 * its 200 (`schema`, with the description of the resource found). Spread into `readOperation`'s spec.
 */
export function foundById(params: object, schema: string | object, description?: string) {
  return { params, responses: { 200: found(schema, description) } };
}

/**
 * The handler of a read of what the key's organization has one of (a setting, its profile): `get` finds it
 * (or what an organization starts with), and it is answered presented.
 */
export function retrieveOwn<Found, Wire>(
  deps: Deps,
  get: (deps: Deps, organizationId: string) => Promise<Found>,
  present: (found: Found) => Wire,
) {
  return async (request: FastifyRequest): Promise<Wire> => present(await get(deps, organizationOf(request)));
}

/**
 * The handler of a list paged by id of what one resource holds (a customer's verifications, a wallet's
 * evidence): `list` pages the records of the resource the path's `id` names, in the key's organization,
 * and the page is answered presented.
 */
export function retrievePageOfId<Item extends { id: string }, Wire>(
  deps: Deps,
  list: (deps: Deps, organizationId: string, id: string, page: PageRequest) => Promise<Page<Item>>,
  present: (item: Item) => Wire,
) {
  return async (request: FastifyRequest<{ Params: { id: string }; Querystring: ListQuery }>) =>
    presentList(
      await list(deps, organizationOf(request), request.params.id, pageRequestOf(request.query)),
      present,
    );
}

/**
 * What an operation listing the organization's records paged by id says besides its words: its query
 * string (the page's, then the list's own `filters`), its 200 (a page of `itemRef`) and its problems (no
 * 404: it addresses no one resource). Spread into `readOperation`'s spec.
 */
export function pagedList(
  itemRef: string,
  description: string,
  idPrefix: IdPrefix | readonly IdPrefix[],
  filters?: Record<string, unknown>,
) {
  return {
    querystring: listQuerySchema(idPrefix, filters),
    responses: { 200: listEnvelopeSchema(itemRef, description) },
    problems: LIST_PROBLEMS,
  };
}

/**
 * The list request's filters of a list of money moving into or out of wallets (transfers, collections,
 * deposits) from its query's: `status` as it is, and `wallet` as the wallet's id.
 */
export function statusAndWalletOf<Status>(query: { status?: Status; wallet?: string }) {
  return { status: query.status, walletId: query.wallet };
}

/** A list's filter on a field with a fixed set of values: only the records with the value given. */
export function enumFilter<const Value extends string>(values: readonly Value[], description: string) {
  return { type: 'string', enum: values, description } as const;
}

/**
 * A list of the organization's records (GET `path`, paged by id, with the filters its query names), each
 * answered with `present`.
 */
export interface ResourceList<Item extends { id: string }, Wire, Query, Filters> {
  path: string;
  /** Who may call the list (scope, product) and where the document lists it. */
  access: OperationAccess;
  present: (item: Item) => Wire;
  /** The list's operation: its words, with `pagedList` for its documented parts. */
  list: OperationWords;
  /** The page of the key's organization's records the list answers. */
  page: (deps: Deps, organizationId: string, request: PageRequest & Filters) => Promise<Page<Item>>;
  /** The list request's filters from the query's own (none: the page's only). */
  filtersOf?: (query: Query, request: FastifyRequest) => Filters;
}

/** The list of one resource (`ResourceList`). */
export function listRoute<Item extends { id: string }, Wire, Query = object, Filters = object>(
  app: FastifyInstance,
  deps: Deps,
  resource: ResourceList<Item, Wire, Query, Filters>,
): void {
  const filtersOf = resource.filtersOf ?? (() => ({}) as Filters);
  const listPage = retrieveFilteredPage(deps, resource.page, filtersOf, resource.present);
  // Fastify cannot resolve the query's type while `Query` is a type parameter; the list's schema
  // (`resource.list`) validates it as `Query` before the handler runs.
  app.get(resource.path, readOperation({ ...resource.access, ...resource.list }), (request) =>
    listPage(request as FastifyRequest & { query: ListQuery & Query }),
  );
}

/**
 * The reads of one resource, registered together: its list (GET `path`, the key's organization's records
 * paged by id; `ResourceList`) and its read by id (GET `path/:id`), both answered with `present`.
 */
export interface ResourceReads<Item extends { id: string }, Wire, Query, Filters>
  extends ResourceList<Item, Wire, Query, Filters> {
  /** The read's operation: its words, with `foundById` for its documented parts. */
  retrieve: OperationWords;
  /** The record the read finds (a 404 when the organization has none with the id). */
  get: (deps: Deps, organizationId: string, id: string) => Promise<Item>;
}

/** The list and the read by id of one resource (`ResourceReads`), the list first. */
export function listAndRetrieveRoutes<Item extends { id: string }, Wire, Query = object, Filters = object>(
  app: FastifyInstance,
  deps: Deps,
  reads: ResourceReads<Item, Wire, Query, Filters>,
): void {
  listRoute(app, deps, reads);
  retrieveByIdRoute(app, deps, `${reads.path}/:id`, reads.get, reads.present, {
    ...reads.access,
    ...reads.retrieve,
  });
}
