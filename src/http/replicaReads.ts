/**
 * Read replicas at the HTTP edge (DATABASE_READ_URL; src/store/readReplica.ts does the routing). Every list
 * (a GET answered with `object: "list"`) takes an optional `Consistency-Token` request header, and with a
 * replica configured its handler runs in `listRead`: its statements go to the replica, after the replica
 * has replayed the token's position. Only the handler: authentication, rate limits and the product check
 * run before it, on the primary. Every successful write answers with `Consistency-Token`, the primary's
 * position after it, for the client to send with the lists that must show that write.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Deps, ReadReplica } from '../app/deps.ts';
import { CONSISTENCY_TOKEN_HEADER, consistencyTokenRequestHeader } from './schemas.ts';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface ResponseSchema {
  properties?: { object?: { enum?: unknown[] } };
}

/** A list route: a GET of the API whose success answer is `{object: "list", …}`. */
function isListRoute(route: RouteOptions): boolean {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (!methods.includes('GET') || !route.url.startsWith('/v1/')) return false;
  const ok = (route.schema?.response as Record<string, ResponseSchema> | undefined)?.[200];
  return ok?.properties?.object?.enum?.[0] === 'list';
}

/** Each list takes the header, and runs on the replica when there is one. */
function routeLists(app: FastifyInstance, readReplica: ReadReplica | undefined): void {
  app.addHook('onRoute', (route) => {
    if (!isListRoute(route)) return;
    const headers = (route.schema?.headers ?? { type: 'object', properties: {} }) as {
      properties?: Record<string, unknown>;
    };
    route.schema = {
      ...route.schema,
      headers: { ...headers, properties: { ...headers.properties, ...consistencyTokenRequestHeader } },
    };
    if (!readReplica) return;
    const handler = route.handler;
    route.handler = function listOnReplica(
      this: FastifyInstance,
      request: FastifyRequest,
      reply: FastifyReply,
    ) {
      const token = request.headers['consistency-token'];
      return readReplica.listRead(typeof token === 'string' ? token : undefined, async () =>
        handler.call(this, request, reply),
      );
    };
  });
}

/** Successful writes answer with the primary's position after them. */
function tokenWrites(app: FastifyInstance, readReplica: ReadReplica): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (!WRITE_METHODS.has(request.method) || reply.statusCode >= 300) return payload;
    if (!request.routeOptions.url?.startsWith('/v1/')) return payload;
    try {
      reply.header(CONSISTENCY_TOKEN_HEADER, await readReplica.consistencyToken());
    } catch (error) {
      // The write is done; without a token the client's lists may only be a moment behind it.
      request.log.warn({ err: error }, 'no consistency token: the primary did not say its position');
    }
    return payload;
  });
}

/** Registered before any route, so every list is seen as it is added. */
export function registerReplicaReads(app: FastifyInstance, deps: Deps): void {
  routeLists(app, deps.readReplica);
  if (deps.readReplica) tokenWrites(app, deps.readReplica);
}
