/**
 * The parts every route definition repeats, built in one place: an operation's options (its scope and
 * product, its name and words, bearer security, the Idempotency-Key header of a write, its problem
 * responses), the success responses of reads and idempotent writes, list schemas and their presentation,
 * and the handlers of a read by id, of a page and of an idempotent write. Each builds exactly the schema a
 * route would otherwise spell out, so a route that takes them up documents the same operation as before.
 *
 * A route reads as:
 * ```ts
 * app.get<{ Params: { id: string } }>(
 *   '/v1/loans/:id',
 *   readOperation({ scope: 'read', operationId: 'getLoan', summary: 'Retrieve a loan', tags: TAGS,
 *     params: loanIdParams, responses: { 200: found('Loan', 'The loan.') } }),
 *   retrieveById(deps, getLoan, presentLoan),
 * );
 * ```
 * Built on these: whole reads and the parts of a list's documentation (readRoutes.ts), the effects of
 * writes that call one app function (routeEffects.ts), the reads of a versioned setting
 * (versionedSettingRoutes.ts) and the schemas of API objects (schemaBuilders.ts).
 */
import type { FastifyContextConfig, FastifyReply, FastifyRequest, RouteGenericInterface } from 'fastify';
import type { Deps, Queryable } from '../app/deps.ts';
import type { Scope } from '../domain/access.ts';
import type { LaunchProduct } from '../domain/organizationProfile.ts';
import type { Page, PageRequest } from '../domain/pagination.ts';
import { BEARER_SECURITY, principalOf } from './auth.ts';
import { type ListQuery, pageRequestOf, presentList } from './presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from './problems.ts';
import { idempotencyHeadersSchema, idempotentWriteHeaders } from './schemas.ts';
import { sendWrite } from './writes.ts';

/** What a route's schema says of its operation, and the parts of the request it validates. */
interface OperationParts {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  params?: object;
  querystring?: object;
  body?: object;
  /** The success responses by status: `found(…)`, `written(…)`, a list schema, or one of its own. */
  responses: Record<number, object>;
  /** The problem statuses it may answer; by default the read set or the write set. */
  problems?: readonly number[];
  /** Route config besides the scope and product (`acceptsCsv`, `rawBody`). */
  config?: Omit<FastifyContextConfig, 'scope' | 'product'>;
  /** Left out of the API description (a route for partners, not integrators). */
  hide?: boolean;
  /** The media types of a response that is not JSON. */
  produces?: string[];
}

/** An operation a key calls: the scope it needs and the product the organization must have enabled. */
export interface OperationSpec extends OperationParts {
  /** The route's `config.scope`. */
  scope: Scope;
  /** The route's `config.product`; absent: every organization may call it. */
  product?: LaunchProduct;
}

/**
 * Who may call an operation (its scope and product) and where the document lists it (its tags): what the
 * operations on one resource mostly share, spread into each one's spec.
 */
export type OperationAccess = Pick<OperationSpec, 'scope' | 'product' | 'tags'>;

/** An operation's spec without its access: what it says, for operations that are given their access together. */
export type OperationWords = Omit<OperationSpec, keyof OperationAccess>;

/**
 * The access of a group of operations (listed under `tags`, of `product` when it has one) by the scope each
 * needs: `...ACCESS.read` in a read's spec, `...ACCESS.admin` in a configuring write's.
 */
export function accessByScope(tags: string[], product?: LaunchProduct): Record<Scope, OperationAccess> {
  const access = (scope: Scope): OperationAccess =>
    product === undefined ? { scope, tags } : { scope, product, tags };
  return {
    read: access('read'),
    write: access('write'),
    admin: access('admin'),
    compliance: access('compliance'),
  };
}

/** The access of the sandbox's own operations (its clock, simulated payers and statements): under Sandbox. */
export const SANDBOX_ACCESS = accessByScope(['Sandbox']);

/** Who may call an operation: the route's config (scope, product) and the document's security. */
interface Access {
  config: FastifyContextConfig;
  /** OpenAPI security requirements: each scheme's name with the scopes it needs. */
  security: readonly Readonly<Record<string, readonly string[]>>[];
}

function routeOptions(
  { problems, responses, config, ...parts }: OperationParts,
  access: Access,
  headers: object | undefined,
  defaultProblems: readonly number[],
) {
  return {
    config: { ...access.config, ...config },
    schema: {
      ...parts,
      security: access.security,
      ...(headers === undefined ? {} : { headers }),
      response: { ...responses, ...problemResponses(...(problems ?? defaultProblems)) },
    },
  };
}

function keyAccess({ scope, product, ...parts }: OperationSpec): [Access, OperationParts] {
  const config = product === undefined ? { scope } : { scope, product };
  return [{ config, security: BEARER_SECURITY }, parts];
}

/** The options of a read (a GET): bearer security and, by default, `READ_PROBLEMS`. */
export function readOperation(spec: OperationSpec) {
  const [access, parts] = keyAccess(spec);
  return routeOptions(parts, access, undefined, READ_PROBLEMS);
}

/**
 * The options of an idempotent write (a POST, PATCH or DELETE that honours `Idempotency-Key`): bearer
 * security, the header, and by default `WRITE_PROBLEMS`. A POST that only reads (a quote) is one too.
 */
export function writeOperation(spec: OperationSpec) {
  const [access, parts] = keyAccess(spec);
  return routeOptions(parts, access, idempotencyHeadersSchema, WRITE_PROBLEMS);
}

/** The options of a public operation (no key: `security: []`), with the problems it names. */
export function publicOperation(parts: OperationParts & { problems: readonly number[] }) {
  return routeOptions(parts, { config: {}, security: [] }, undefined, parts.problems);
}

/** The problems of an operation that addresses no one resource (a list, most creates): 404 left out. */
export function withoutNotFound(statuses: readonly number[]): number[] {
  return statuses.filter((s) => s !== 404);
}

/** The problems of a list of the organization's resources. */
export const LIST_PROBLEMS = withoutNotFound(READ_PROBLEMS);

/** A response's schema: a shared schema by its `$id`, or a schema of its own. */
function bodyOf(schema: string | object): object {
  return typeof schema === 'string' ? { $ref: `${schema}#` } : schema;
}

/** A read's success response; one without a description is documented with the default one. */
export function found(schema: string | object, description?: string) {
  return description === undefined ? bodyOf(schema) : { description, ...bodyOf(schema) };
}

/** An idempotent write's success response, with the header a replay carries. */
export function written(schema: string | object, description: string) {
  return { description, headers: idempotentWriteHeaders, ...bodyOf(schema) };
}

const LIST_OBJECT = { type: 'string', enum: ['list'] } as const;

/** A list answered whole, without pages: `{object: 'list', data}`. */
export function wholeListSchema(itemRef: string) {
  return {
    type: 'object',
    required: ['object', 'data'],
    properties: { object: LIST_OBJECT, data: { type: 'array', items: { $ref: `${itemRef}#` } } },
  };
}

/** How a page's cursor is given back: its JSON type, and the query parameter that takes it. */
export interface PageCursor {
  type: 'string' | 'integer';
  param: string;
}

/**
 * A page of a list whose cursor is not the last item's id (a day, a row number, a version); lists paged
 * by id use `listEnvelopeSchema`.
 */
export function cursorPageSchema(itemRef: string, cursor: PageCursor) {
  return {
    type: 'object',
    required: ['object', 'data', 'has_more', 'next_cursor'],
    properties: {
      object: LIST_OBJECT,
      data: { type: 'array', items: { $ref: `${itemRef}#` } },
      has_more: { type: 'boolean' },
      next_cursor: {
        type: [cursor.type, 'null'],
        description: `Pass as \`${cursor.param}\` for the next page.`,
      },
    },
  };
}

/** The success response of a read answered with a page of `itemRef` paged by `cursor` (`cursorPageSchema`). */
export function cursorPageResponses(itemRef: string, cursor: PageCursor, description: string) {
  return { 200: found(cursorPageSchema(itemRef, cursor), description) };
}

/** A closed object (a body or query string): no properties but these, the `required` ones always. */
export function closedObjectSchema<Properties extends Record<string, unknown>>(
  properties: Properties,
  required?: readonly (keyof Properties & string)[],
) {
  return {
    type: 'object',
    additionalProperties: false,
    ...(required === undefined ? {} : { required: [...required] }),
    properties,
  };
}

/** The organization of the request's API key. */
export function organizationOf(request: FastifyRequest): string {
  return principalOf(request).organizationId;
}

/**
 * The handler of a read of one resource by its `id`: `get` finds it in the key's organization (a 404 when
 * it is not there), and it is answered presented.
 */
export function retrieveById<Found, Wire>(
  deps: Deps,
  get: (deps: Deps, organizationId: string, id: string) => Promise<Found>,
  present: (found: Found) => Wire,
) {
  return async (request: FastifyRequest<{ Params: { id: string } }>): Promise<Wire> =>
    present(await get(deps, organizationOf(request), request.params.id));
}

/** A list answered whole, presented. */
export function presentWholeList<T, W>(items: readonly T[], present: (item: T) => W) {
  return { object: 'list', data: items.map((item) => present(item)) };
}

/** A page presented, its `next_cursor` the last item's `cursorOf` while more follow (see `cursorPageSchema`). */
export function presentPage<T, W, C>(page: Page<T>, present: (item: T) => W, cursorOf: (item: T) => C) {
  const last = page.data.at(-1);
  return {
    object: 'list',
    data: page.data.map((item) => present(item)),
    has_more: page.hasMore,
    next_cursor: page.hasMore && last ? cursorOf(last) : null,
  };
}

/**
 * The handler of an idempotent write that answers `status` with what `effect` returns: the effect runs
 * once per Idempotency-Key, in one transaction, and a retry gets the recorded answer again (`sendWrite`).
 */
export function idempotentWrite<Route extends RouteGenericInterface>(
  deps: Deps,
  status: number,
  effect: (tx: Queryable, organizationId: string, request: FastifyRequest<Route>) => Promise<unknown>,
) {
  return (request: FastifyRequest<Route>, reply: FastifyReply): Promise<FastifyReply> =>
    sendWrite(deps, request, reply, async (tx, organizationId) => ({
      status,
      body: await effect(tx, organizationId, request),
    }));
}

/**
 * The handler of an idempotent write decided in part before the key's transaction opens: `prepare` runs
 * first, with no transaction, and only when there is no recorded answer to replay (reads through a process
 * cache, checks that wait on the network); `effect` then runs once per Idempotency-Key with what it returned,
 * and answers `{status, body}` itself (a status that depends on what it found, a refusal answered as the
 * failure it is). See `sendWrite`.
 */
export function preparedWrite<Route extends RouteGenericInterface, Prepared>(
  deps: Deps,
  prepare: (organizationId: string, request: FastifyRequest<Route>) => Promise<Prepared>,
  effect: (
    tx: Queryable,
    organizationId: string,
    request: FastifyRequest<Route>,
    prepared: Prepared,
  ) => Promise<{ status: number; body: unknown }>,
  options: { claimBeforePrepare?: boolean } = {},
) {
  return (request: FastifyRequest<Route>, reply: FastifyReply): Promise<FastifyReply> =>
    sendWrite<Prepared>(
      deps,
      request,
      reply,
      (tx, organizationId, prepared) => effect(tx, organizationId, request, prepared),
      (organizationId) => prepare(organizationId, request),
      options,
    );
}

/**
 * A prepared write whose `send` goes out before the key's transaction and cannot be taken back (a partner
 * simulator paid, whose webhook comes back here): the key is claimed before it (src/app/idempotencyClaims.ts),
 * so a concurrent request with the same key gets the 409 `idempotency_key_in_flight`, never a second send.
 */
export function sendingWrite<Route extends RouteGenericInterface, Sent>(
  deps: Deps,
  send: (organizationId: string, request: FastifyRequest<Route>) => Promise<Sent>,
  effect: (
    tx: Queryable,
    organizationId: string,
    request: FastifyRequest<Route>,
    sent: Sent,
  ) => Promise<{ status: number; body: unknown }>,
) {
  return preparedWrite(deps, send, effect, { claimBeforePrepare: true });
}

/** A write's answer as `sendWrite` records it: status, body, and whether the body carries a secret. */
type WriteAnswer = Awaited<ReturnType<Parameters<typeof sendWrite>[3]>>;

/**
 * The handler of an idempotent write whose `effect` returns the whole answer (`WriteAnswer`): for a write
 * that answers one of several statuses (applied now, or a 202 waiting for approval) or whose body carries a
 * secret (`sensitive`). `replayOnlyTo` names who alone gets a replay (`sendWrite`'s option), read from the
 * request before the write runs.
 */
export function idempotentOutcome<Route extends RouteGenericInterface>(
  deps: Deps,
  effect: (tx: Queryable, organizationId: string, request: FastifyRequest<Route>) => Promise<WriteAnswer>,
  replayOnlyTo?: (request: FastifyRequest<Route>) => string,
) {
  return (request: FastifyRequest<Route>, reply: FastifyReply): Promise<FastifyReply> =>
    sendWrite(deps, request, reply, (tx, organizationId) => effect(tx, organizationId, request), undefined, {
      replayOnlyTo: replayOnlyTo?.(request),
    });
}

/**
 * The handler of an idempotent write that records something unless the same is already recorded (a
 * figure reported twice, an address asked for again): `effect` says which, and the answer is 201 with the
 * new record or 200 with the one found. Once per Idempotency-Key, in one transaction, as `idempotentWrite`.
 */
export function createOrFindWrite<Route extends RouteGenericInterface>(
  deps: Deps,
  effect: (
    tx: Queryable,
    organizationId: string,
    request: FastifyRequest<Route>,
  ) => Promise<{ created: boolean; body: unknown }>,
) {
  return (request: FastifyRequest<Route>, reply: FastifyReply): Promise<FastifyReply> =>
    sendWrite(deps, request, reply, async (tx, organizationId) => {
      const { created, body } = await effect(tx, organizationId, request);
      return { status: created ? 201 : 200, body };
    });
}

/**
 * The handler of a list paged by id with filters of its own (`listQuerySchema`'s extra properties):
 * `filtersOf` turns the query's filters (and, for a filter on who calls, the request) into the list
 * request's, `list` pages the key's organization's records, and the page is answered presented.
 */
export function retrieveFilteredPage<Query, Filters, Item extends { id: string }, Wire>(
  deps: Deps,
  list: (deps: Deps, organizationId: string, request: PageRequest & Filters) => Promise<Page<Item>>,
  filtersOf: (query: Query, request: FastifyRequest) => Filters,
  present: (item: Item) => Wire,
) {
  return async (request: FastifyRequest & { query: ListQuery & Query }) =>
    presentList(
      await list(deps, organizationOf(request), {
        ...pageRequestOf(request.query),
        ...filtersOf(request.query, request),
      }),
      present,
    );
}

/**
 * The handler of a list answered whole (`wholeListSchema`): `list` gives the key's organization's records,
 * and they are answered presented.
 */
export function retrieveWholeList<Item, Wire>(
  deps: Deps,
  list: (deps: Deps, organizationId: string) => Promise<readonly Item[]>,
  present: (item: Item) => Wire,
) {
  return async (request: FastifyRequest) =>
    presentWholeList(await list(deps, organizationOf(request)), present);
}
