import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { AppError } from '../../domain/errors.ts';
import { ping } from '../../store/repositories/seeds.ts';
import type { HttpMetrics } from '../metrics.ts';
import { problemResponses } from '../problems.ts';

const TAGS = ['Operations'];
const statusSchema = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string' } },
} as const;

export function systemRoutes(app: FastifyInstance, deps: Deps, metrics: HttpMetrics): void {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'health',
        summary: 'Liveness: the process is up',
        tags: TAGS,
        security: [],
        response: { 200: { description: 'Alive.', ...statusSchema }, ...problemResponses(500) },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'ready',
        summary: 'Readiness: the database answers',
        tags: TAGS,
        security: [],
        response: {
          200: { description: 'Ready to serve.', ...statusSchema },
          ...problemResponses(503, 500),
        },
      },
    },
    async () => {
      try {
        await ping(deps.store);
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

  app.get(
    '/metrics',
    {
      schema: {
        operationId: 'metrics',
        summary: 'Prometheus metrics',
        description:
          'Request counts and latencies, ledger-writer batches, open transfers, webhook outcomes and backlog, ' +
          'idempotency conflicts, database pool use and Node process metrics (docs/OPERATIONS.md lists them).',
        tags: TAGS,
        security: [],
        produces: ['text/plain'],
        response: {
          200: {
            description: 'Prometheus text exposition format.',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          ...problemResponses(500),
        },
      },
    },
    async (_request, reply) => {
      reply.type(metrics.registry.contentType);
      return metrics.registry.metrics();
    },
  );
}
