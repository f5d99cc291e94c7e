/**
 * Response serializers built on first use rather than at start-up. Fastify builds one fast-json-stringify
 * serializer per route and status code when the app starts, each resolving every shared schema: with some
 * three hundred routes and a dozen documented statuses each, that was most of a start-up (about ten seconds
 * on this project's 2-vCPU machines). Built lazily, a serializer costs its first response a few
 * milliseconds instead, and one that is never used (most problem statuses of most routes) is never built.
 * The serializer itself is the same one Fastify would build; `test/openapi.test.ts` builds every one of them
 * so that a schema it cannot compile still fails the tests rather than a first request.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Serialize = (data: unknown) => string;
type RouteSchema = { schema: unknown; method: string; url: string; httpStatus: string };
type SerializerFactory = (
  externalSchemas: unknown,
  serializerOpts: unknown,
) => (routeSchema: RouteSchema) => Serialize;

/** Fastify's own serializer factory (fast-json-stringify), each serializer built when first called. */
export function lazySerializerFactory(): SerializerFactory {
  const eager = SerializerSelector() as unknown as SerializerFactory;
  return (externalSchemas, serializerOpts) => {
    const compile = eager(externalSchemas, serializerOpts);
    return (routeSchema) => {
      let serialize: Serialize | undefined;
      return (data) => {
        serialize ??= compile(routeSchema);
        return serialize(data);
      };
    };
  };
}

/** Fastify's own serializer factory, building at once: what the test of every route's schemas uses. */
export function eagerSerializerFactory(): SerializerFactory {
  return SerializerSelector() as unknown as SerializerFactory;
}
