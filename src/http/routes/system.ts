/** The service's own routes: health, readiness and the Prometheus metrics (behind their bearer token). */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { pingDatabase } from '../../app/health.ts';
import { AppError } from '../../domain/errors.ts';
import type { HttpMetrics } from '../metrics.ts';
import { found, publicOperation } from '../routeKit.ts';

const TAGS = ['Operations'];
const statusSchema = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string' } },
} as const;

/**
 * Whether a scrape's Authorization header carries the metrics token, compared in constant time (over
 * SHA-256 digests, so the token's length is not given away either).
 */
export function bearsMetricsToken(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(match?.[1] ?? ''), digest(token)) && match !== null;
}

function healthRoute(app: FastifyInstance): void {
  app.get(
    '/healthz',
    publicOperation({
      operationId: 'health',
      summary: 'Liveness: the process is up',
      tags: TAGS,
      responses: { 200: found(statusSchema, 'Alive.') },
      problems: [500],
    }),
    async () => ({ status: 'ok' }),
  );
}

/**
 * While the process drains (it is stopping): every answer closes its connection, so a load balancer's
 * kept-alive connections move to other processes before this one stops listening, and none is left idle
 * for the listener's close to wait on. On send, so answers to requests already in flight close too.
 */
function closeConnectionsWhileDraining(app: FastifyInstance, draining: () => boolean): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    if (draining()) reply.header('Connection', 'close');
    return payload;
  });
}

function readyRoute(app: FastifyInstance, deps: Deps, draining: () => boolean): void {
  app.get(
    '/readyz',
    publicOperation({
      operationId: 'ready',
      summary: 'Readiness: the database answers and the process is not stopping',
      description:
        'A 503 while the database does not answer, and from the moment the process is told to stop (SIGTERM): a load balancer health-checking this route takes the process out before it stops listening (MKOBA_SHUTDOWN_DRAIN_MS).',
      tags: TAGS,
      responses: { 200: found(statusSchema, 'Ready to serve.') },
      problems: [503, 500],
    }),
    async () => {
      if (draining()) {
        throw new AppError({
          status: 503,
          code: 'service_unavailable',
          title: 'Not ready',
          detail: 'This process is stopping; other processes serve.',
          retryAfterSeconds: 1,
        });
      }
      try {
        await pingDatabase(deps);
      } catch {
        throw new AppError({
          status: 503,
          code: 'service_unavailable',
          title: 'Not ready',
          detail: 'The database does not answer.',
          retryAfterSeconds: 1,
        });
      }
      return { status: 'ready' };
    },
  );
}

function metricsRoute(app: FastifyInstance, metrics: HttpMetrics, metricsToken: string | undefined): void {
  app.get(
    '/metrics',
    publicOperation({
      operationId: 'metrics',
      summary: 'Prometheus metrics',
      description:
        'Request counts and latencies, ledger-writer batches, open transfers, webhook outcomes and backlog, ' +
        'idempotency conflicts, database pool use and Node process metrics (docs/OPERATIONS.md lists them). ' +
        'With MKOBA_METRICS_TOKEN set, a scrape sends `Authorization: Bearer <token>` (anything else is a 401); ' +
        'without it, served openly in the sandbox only (pilot and production do not serve it).',
      tags: TAGS,
      produces: ['text/plain'],
      responses: {
        200: found(
          { content: { 'text/plain': { schema: { type: 'string' } } } },
          'Prometheus text exposition format.',
        ),
      },
      problems: [401, 500],
    }),
    async (request, reply) => {
      if (metricsToken !== undefined && !bearsMetricsToken(request.headers.authorization, metricsToken)) {
        reply.header('WWW-Authenticate', 'Bearer realm="metrics"');
        throw new AppError({
          status: 401,
          code: 'metrics_token_invalid',
          title: 'Metrics token required',
          detail:
            'This deployment serves /metrics only to a scrape with its token: send Authorization: Bearer <MKOBA_METRICS_TOKEN>.',
          param: 'Authorization',
        });
      }
      reply.type(metrics.registry.contentType);
      return metrics.registry.metrics();
    },
  );
}

export function systemRoutes(
  app: FastifyInstance,
  deps: Deps,
  metrics: HttpMetrics,
  metricsToken?: string | undefined,
  draining: () => boolean = () => false,
): void {
  closeConnectionsWhileDraining(app, draining);
  healthRoute(app);
  readyRoute(app, deps, draining);
  // Pilot and production without a token: not served on this listener (a 404 like any unknown route).
  if (metricsToken === undefined && deps.environment !== 'sandbox') return;
  metricsRoute(app, metrics, metricsToken);
}
