import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { getEvent, listEvents } from '../../app/events.ts';
import { EVENT_TYPES, type EventType } from '../../domain/events.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { BEARER_SECURITY, principalOf } from '../auth.ts';
import { type ListQuery, pageRequestOf, presentEvent, presentList } from '../presenters.ts';
import { problemResponses, READ_PROBLEMS } from '../problems.ts';
import { idParamsSchema, idSchema, listEnvelopeSchema, listQuerySchema } from '../schemas.ts';

const TAGS = ['Events'];

export function eventRoutes(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: ListQuery & { type?: EventType; resource?: string; delivery_success?: boolean } }>(
    '/v1/events',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listEvents',
        summary: 'List events',
        description:
          'Newest first, with cursor pagination; filter by type, resource and creation time. Events are kept for the retention period (30 days by default; an event with an unfinished delivery stays until it finishes), so a receiver that missed deliveries can recover them from here within it.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.event, {
          type: { type: 'string', enum: EVENT_TYPES, description: 'Only events of this type.' },
          resource: idSchema(ID_PREFIXES.transfer, 'Only events about this transfer.'),
          delivery_success: {
            type: 'boolean',
            description:
              '`false`: only events with a webhook delivery that has not succeeded (yet); `true`: only events all of whose deliveries succeeded.',
          },
        }),
        response: {
          200: listEnvelopeSchema('Event', 'A page of events.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const page = await listEvents(deps, principalOf(request).organizationId, {
        ...pageRequestOf(request.query),
        type: request.query.type,
        resourceId: request.query.resource,
        deliverySuccess: request.query.delivery_success,
      });
      return presentList(page, (event) => presentEvent(event, deps.environment));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/events/:id',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getEvent',
        summary: 'Retrieve an event',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: idParamsSchema(ID_PREFIXES.event, 'Event id.'),
        response: {
          200: { description: 'The event.', $ref: 'Event#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentEvent(
        await getEvent(deps, principalOf(request).organizationId, request.params.id),
        deps.environment,
      ),
  );
}
