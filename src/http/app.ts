/**
 * The HTTP edge as a function from dependencies to a Fastify instance. Tests `inject` into it;
 * src/main.ts listens. Nothing here touches the database at construction.
 */
import type { Duplex } from 'node:stream';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import type { Deps } from '../app/deps.ts';
import {
  defaultRateLimitSettings,
  LEDGER_WRITER_LANES_DEFAULT,
  type RateLimitSettings,
  REQUEST_BODY_BYTES_MAX,
  REQUEST_TIMEOUT_MS,
} from '../config.ts';
import { CONSOLE_PREFIX } from '../console/layout.ts';
import { consolePlugin } from '../console/plugin.ts';
import { AppError, validationError } from '../domain/errors.ts';
import { createServiceMetrics } from '../metrics.ts';
import { HTTP_MODULES } from '../modules/registry.ts';
import { activeTracing } from '../telemetry/tracing.ts';
import { registerAuth } from './auth.ts';
import { registerBodyParsing } from './bodyParser.ts';
import { eagerSerializerFactory, lazySerializerFactory } from './lazySerializers.ts';
import { createHttpMetrics, type HttpMetrics } from './metrics.ts';
import {
  DOCS_CONTENT_SECURITY_POLICY,
  DOCS_FAVICON_SVG,
  DOCS_LOGO_SVG,
  DOCS_ROUTE_PREFIX,
  DOCS_TITLE,
  documentForRequest,
  documentObject,
  documentOptionalBodies,
  documentRouteSchema,
  OPENAPI_DOCUMENT_BASE,
  OPENAPI_DOCUMENT_PATH,
} from './openapi.ts';
import { PROBLEM_CONTENT_TYPE, problemCodeOf, problemType, sendProblem, toAppError } from './problems.ts';
import { registerProductCheck } from './products.ts';
import { registerRateLimits } from './rateLimit.ts';
import { registerReplicaReads } from './replicaReads.ts';
import { eventRoutes } from './routes/events.ts';
import { evidenceRoutes } from './routes/evidence.ts';
import { systemRoutes } from './routes/system.ts';
import { SHARED_SCHEMAS } from './sharedSchemas.ts';
import { registerRequestTracing } from './tracing.ts';
import { validatorCompiler } from './validation.ts';

export interface BuildAppOptions {
  deps: Deps;
  logger?: FastifyServerOptions['logger'];
  /** Default: the built-in limits, in process. */
  rateLimits?: RateLimitSettings;
  /** Ledger writer lanes; default LEDGER_WRITER_LANES_DEFAULT on PostgreSQL, 1 on the embedded database. */
  ledgerWriterLanes?: number | undefined;
  /**
   * Build every response serializer at start-up, as Fastify does by default, instead of on first use
   * (lazySerializers.ts): for the test that every route's response schemas compile.
   */
  eagerSerializers?: boolean;
  /**
   * MKOBA_METRICS_TOKEN: GET /metrics answers only a scrape bearing it. Without one, /metrics is served
   * openly in the sandbox and not at all in pilot and production.
   */
  metricsToken?: string | undefined;
  /** Whether the process is stopping: /readyz fails and every answer closes its connection. */
  draining?: () => boolean;
}

/** Turns a route pattern such as /v1/wallets/:id into a matcher for concrete paths. */
function patternMatcher(url: string): RegExp {
  const escaped = url
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

/** The request log line: the route pattern, never the URL, so no query string, header or body is logged. */
function logRequest(request: FastifyRequest, reply: FastifyReply, durationMs: number): void {
  request.log.info(
    {
      method: request.method,
      route: request.routeOptions.url ?? null,
      status: reply.statusCode,
      duration_ms: Math.round(durationMs * 100) / 100,
      error_code: problemCodeOf(reply) ?? null,
    },
    'request',
  );
}

export async function buildApp({
  deps,
  logger = false,
  rateLimits = defaultRateLimitSettings(deps.environment),
  ledgerWriterLanes = deps.store.driver === 'postgres' ? LEDGER_WRITER_LANES_DEFAULT : 1,
  eagerSerializers = false,
  metricsToken,
  draining,
}: BuildAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger,
    schemaController: {
      compilersFactory: {
        buildSerializer: (eagerSerializers ? eagerSerializerFactory : lazySerializerFactory)() as never,
      },
    },
    bodyLimit: REQUEST_BODY_BYTES_MAX,
    requestTimeout: REQUEST_TIMEOUT_MS,
    genReqId: () => deps.newId('request'),
    requestIdHeader: false,
    // One line per request, written below; Fastify's own two lines would carry the URL and its query.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    frameworkErrors: answerUndecodablePath,
    clientErrorHandler: (error, socket) => answerUnparsableRequest(deps, error, socket),
  });
  // First, so that every later hook (authentication's reads among them) runs inside the request's span.
  const tracing = activeTracing();
  if (tracing) registerRequestTracing(app, tracing);
  app.setValidatorCompiler(validatorCompiler);
  registerBodyParsing(app);
  addSchemas(app);
  // Before the document's and every route: each list is seen, and given its header, as it is added.
  registerReplicaReads(app, deps);
  const routesByMethod = trackRoutes(app);
  const metrics = registerRequestMetrics(app, deps);
  refuseBodyFieldsWhereNoneTaken(app);
  const authFailures = await registerRateLimits(app, rateLimits, () => deps.now().getTime());
  app.addHook('onResponse', async (request, reply) => logRequest(request, reply, reply.elapsedTime));
  registerAuth(app, deps);
  registerProductCheck(app, deps);
  registerProblemHandlers(app, routesByMethod);
  await registerDocs(app);
  addRoutes(app, deps, { metrics, metricsToken, ledgerWriterLanes, draining });

  // The operator console: its own context (forms, cookies, HTML errors) under /console.
  await app.register(consolePlugin, { prefix: CONSOLE_PREFIX, deps, limiter: authFailures });

  app.get(OPENAPI_DOCUMENT_PATH, { schema: { hide: true } }, async (request) =>
    documentForRequest(app.swagger(), request),
  );
  await app.ready();
  return app;
}

/** A path the router cannot decode (bad percent-encoding) is a problem like any other bad input. */
function answerUndecodablePath(error: Error, request: FastifyRequest, reply: FastifyReply) {
  // No hook runs for this request, so it is logged here once its answer is sent.
  const startedAt = performance.now();
  reply.raw.once('finish', () => logRequest(request, reply, performance.now() - startedAt));
  return sendProblem(
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
  );
}

/**
 * Requests Node cannot even parse (an unknown method, a broken header) never reach a route: answer them in
 * the same problem format, then close the connection.
 */
function answerUnparsableRequest(deps: Deps, error: Error, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
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
}

/** Every component that exists only in the document (transfer destinations, verification submissions). */
const DOCUMENT_COMPONENTS = Object.assign(
  {},
  ...HTTP_MODULES.map((module) => module.documentComponents ?? {}),
);

/** Every named schema, the core's and each module's, before any route refers to one by `$id`. */
function addSchemas(app: FastifyInstance): void {
  for (const schema of [...SHARED_SCHEMAS, ...HTTP_MODULES.flatMap((module) => module.schemas)]) {
    app.addSchema(schema);
  }
}

/** Each route's method and path matcher as routes are added: what a 405 names in its Allow header. */
function trackRoutes(app: FastifyInstance): { method: string; matcher: RegExp }[] {
  const routesByMethod: { method: string; matcher: RegExp }[] = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) routesByMethod.push({ method, matcher: patternMatcher(route.url) });
  });
  return routesByMethod;
}

/** The Request-Id header on every answer, and each answer counted in the HTTP and idempotency metrics. */
function registerRequestMetrics(app: FastifyInstance, deps: Deps): HttpMetrics {
  const service = deps.metrics ?? createServiceMetrics(deps.store, deps.now);
  const metrics = createHttpMetrics(service.registry);
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
    const code = problemCodeOf(reply);
    if (code === 'idempotency_key_in_flight' || code === 'idempotency_key_reused') {
      service.observeIdempotencyConflict(code);
    }
  });
  return metrics;
}

/** A write route without a body schema takes no fields: a JSON body there is `{}` (or none), and any field
 * is unknown (400 `validation_error` naming it), as Ajv answers on the routes whose schemas list theirs. */
function refuseBodyFieldsWhereNoneTaken(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const options = request.routeOptions;
    if (options.schema?.body !== undefined || options.config.rawBody === true) return;
    if (!options.url?.startsWith('/v1/') || request.body === undefined || request.body === null) return;
    if (!/^application\/json\b/i.test(request.headers['content-type'] ?? '')) return;
    const body = request.body;
    if (typeof body !== 'object' || Array.isArray(body)) {
      throw validationError(
        'body',
        'This operation takes no body fields: send {} or no body.',
        'invalid_type',
      );
    }
    const field = Object.keys(body)[0];
    if (field !== undefined) {
      throw validationError(
        field,
        `${field} is not a known field: this operation takes no body fields.`,
        'unknown_field',
      );
    }
  });
}

/** Errors thrown by routes and hooks, unknown paths and unsupported methods: each answered as a problem. */
function registerProblemHandlers(
  app: FastifyInstance,
  routesByMethod: { method: string; matcher: RegExp }[],
): void {
  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error, request.routeOptions.bodyLimit ?? REQUEST_BODY_BYTES_MAX);
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
}

/** The OpenAPI document and its reference page. */
async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: OPENAPI_DOCUMENT_BASE,
    transform: documentRouteSchema,
    transformObject: (input) => documentOptionalBodies(documentObject(DOCUMENT_COMPONENTS)(input)),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `Schema${i}`) },
  });
  // The reference page and its assets (swagger-ui-dist) are served by this process, so it works with
  // no internet access. Its explorer reads the document from OPENAPI_DOCUMENT_PATH: `urls` is the only
  // setting the plugin lets override its own `${DOCS_ROUTE_PREFIX}/json` (which serves the same document).
  // Title, logo and favicon are Mkoba's, not the UI's defaults.
  await app.register(swaggerUi, {
    routePrefix: DOCS_ROUTE_PREFIX,
    uiConfig: {
      validatorUrl: null,
      deepLinking: true,
      urls: [{ url: OPENAPI_DOCUMENT_PATH, name: DOCS_TITLE }],
    },
    logo: { type: 'image/svg+xml', content: Buffer.from(DOCS_LOGO_SVG) },
    theme: {
      title: DOCS_TITLE,
      favicon: [
        {
          filename: 'favicon.svg',
          rel: 'icon',
          sizes: 'any',
          type: 'image/svg+xml',
          content: Buffer.from(DOCS_FAVICON_SVG),
        },
      ],
    },
    staticCSP: DOCS_CONTENT_SECURITY_POLICY,
    transformSpecification: (document, request) => documentForRequest(document, request),
  });
}

/** The core's routes, then each module's (sandbox-only ones in the sandbox alone). */
function addRoutes(
  app: FastifyInstance,
  deps: Deps,
  options: {
    metrics: HttpMetrics;
    metricsToken: string | undefined;
    ledgerWriterLanes: number;
    draining: (() => boolean) | undefined;
  },
): void {
  const { metrics, metricsToken, ledgerWriterLanes } = options;
  systemRoutes(app, deps, metrics, metricsToken, options.draining);
  eventRoutes(app, deps);
  evidenceRoutes(app, deps);
  for (const module of HTTP_MODULES) {
    if (!module.sandboxOnly || deps.environment === 'sandbox')
      module.routes(app, deps, { ledgerWriterLanes });
  }
}
