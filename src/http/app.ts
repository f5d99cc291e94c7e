/**
 * The HTTP edge as a function from dependencies to a Fastify instance. Tests `inject` into it;
 * src/main.ts listens. Nothing here touches the database at construction.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Deps } from '../app/deps.ts';
import { LedgerWriter } from '../app/ledgerWriter.ts';
import { REQUEST_BODY_BYTES_MAX, REQUEST_TIMEOUT_MS } from '../config.ts';
import { AppError, validationError } from '../domain/errors.ts';
import { registerAuth } from './auth.ts';
import { createHttpMetrics } from './metrics.ts';
import {
  DOCS_CONTENT_SECURITY_POLICY,
  DOCS_ROUTE_PREFIX,
  documentForReferencePage,
  documentOptionalBodies,
  documentRouteSchema,
  OPENAPI_DOCUMENT_BASE,
} from './openapi.ts';
import { PROBLEM_CONTENT_TYPE, problemType, sendProblem, toAppError } from './problems.ts';
import { customerRoutes } from './routes/customers.ts';
import { eventRoutes } from './routes/events.ts';
import { ledgerRoutes } from './routes/ledger.ts';
import { sandboxRoutes } from './routes/sandbox.ts';
import { systemRoutes } from './routes/system.ts';
import { transferRoutes } from './routes/transfers.ts';
import { walletRoutes } from './routes/wallets.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { SHARED_SCHEMAS } from './schemas.ts';
import { validatorCompiler } from './validation.ts';

export interface BuildAppOptions {
  deps: Deps;
  logger?: FastifyServerOptions['logger'];
}

/** Turns a route pattern such as /v1/wallets/:id into a matcher for concrete paths. */
function patternMatcher(url: string): RegExp {
  const escaped = url
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

/** The dotted path of the first string or key holding U+0000, '' for the body itself, undefined if none. */
export function findNulCharacter(value: unknown): string | undefined {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop() as { value: unknown; path: string };
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return path;
    } else if (Array.isArray(current)) {
      for (const [i, item] of current.entries())
        stack.push({ value: item, path: path ? `${path}.${i}` : String(i) });
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        const child = path ? `${path}.${key}` : key;
        if (key.includes('\u0000')) return path || 'body';
        stack.push({ value: item, path: child });
      }
    }
  }
  return undefined;
}

export async function buildApp({ deps, logger = false }: BuildAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger,
    bodyLimit: REQUEST_BODY_BYTES_MAX,
    requestTimeout: REQUEST_TIMEOUT_MS,
    genReqId: () => deps.newId('request'),
    requestIdHeader: false,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // A path the router cannot decode (bad percent-encoding) is a problem like any other bad input.
    frameworkErrors: (error, request, reply) =>
      sendProblem(
        request,
        // The route's hooks never ran, so the Request-Id header is set here.
        reply.header('Request-Id', request.id),
        new AppError({
          status: 400,
          code: 'validation_error',
          title: 'Invalid request',
          detail: `The request path cannot be decoded: ${error.message}`,
          param: 'path',
        }),
      ),
    // Requests Node cannot even parse (an unknown method, a broken header) never reach a route: answer
    // them in the same problem format, then close the connection.
    clientErrorHandler: (error, socket) => {
      if (!socket.writable) return socket.destroy();
      const body = JSON.stringify({
        type: problemType('validation_error'),
        title: 'Bad request',
        status: 400,
        detail: `The HTTP request could not be parsed (${(error as NodeJS.ErrnoException).code ?? 'parse error'}).`,
        code: 'validation_error',
        errors: [],
        request_id: deps.newId('request'),
      });
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    },
  });
  app.setValidatorCompiler(validatorCompiler);
  // JSON only: a text/plain body must be a 415, not a string that fails validation as a 400.
  app.removeContentTypeParser('text/plain');
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);

  const routesByMethod: { method: string; matcher: RegExp }[] = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) routesByMethod.push({ method, matcher: patternMatcher(route.url) });
  });

  const metrics = createHttpMetrics();
  app.addHook('onRequest', async (request, reply) => {
    reply.header('Request-Id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    metrics.observe(
      request.method,
      request.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime,
    );
  });
  registerAuth(app, deps);
  // PostgreSQL text cannot hold NUL: refuse it in any string or key before a handler sees it.
  app.addHook('preValidation', async (request) => {
    const param = findNulCharacter(request.body);
    if (param !== undefined) {
      throw validationError(
        param || 'body',
        `${param || 'the body'} contains a NUL character (\\u0000)`,
        'invalid_character',
      );
    }
  });

  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error);
    if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(request, reply, appError);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = [...new Set(routesByMethod.filter((r) => r.matcher.test(path)).map((r) => r.method))];
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '));
      return sendProblem(
        request,
        reply,
        new AppError({
          status: 405,
          code: 'method_not_allowed',
          title: 'Method not allowed',
          detail: `${request.method} is not supported on ${path}; use ${allowed.join(', ')}.`,
        }),
      );
    }
    return sendProblem(
      request,
      reply,
      new AppError({
        status: 404,
        code: 'route_not_found',
        title: 'Not found',
        detail: `There is no route ${request.method} ${path}. See /docs for the API reference.`,
      }),
    );
  });

  await app.register(swagger, {
    openapi: OPENAPI_DOCUMENT_BASE,
    transform: documentRouteSchema,
    transformObject: (document) =>
      documentOptionalBodies('openapiObject' in document ? document.openapiObject : document.swaggerObject),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `Schema${i}`) },
  });
  // The reference page and its assets (swagger-ui-dist) are served by this process, so it works with
  // no internet access; it reads the same document as /v1/openapi.json from ${DOCS_ROUTE_PREFIX}/json.
  await app.register(swaggerUi, {
    routePrefix: DOCS_ROUTE_PREFIX,
    uiConfig: { validatorUrl: null, deepLinking: true },
    theme: { title: `${OPENAPI_DOCUMENT_BASE.info.title} reference` },
    staticCSP: DOCS_CONTENT_SECURITY_POLICY,
    transformSpecification: (document) => documentForReferencePage(document),
  });

  systemRoutes(app, deps, metrics);
  customerRoutes(app, deps);
  walletRoutes(app, deps);
  transferRoutes(app, deps, new LedgerWriter(deps));
  eventRoutes(app, deps);
  ledgerRoutes(app, deps);
  webhookRoutes(app, deps);
  if (deps.environment === 'sandbox') sandboxRoutes(app, deps);

  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.ready();
  return app;
}
