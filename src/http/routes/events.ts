/** Events' routes: the organization's events listed and read, as webhooks deliver them. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { getEvent, listEvents } from '../../app/events.ts';
import { EVENT_TYPES, type EventRecord, type EventType, renderEvent } from '../../domain/events.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import {
  PAYLOAD_VERSION_LATEST,
  PAYLOAD_VERSIONS,
  type PayloadVersion,
} from '../../domain/payloadVersions.ts';
import { PAYLOAD_FORMATS, type PayloadFormat } from '../../domain/webhooks.ts';
import { eventCamelSchema } from '../eventEnvelopeSchemas.ts';
import { type ListQuery, pageRequestOf, presentList } from '../presenters.ts';
import { enumFilter } from '../readRoutes.ts';
import { closedObjectSchema, found, LIST_PROBLEMS, organizationOf, readOperation } from '../routeKit.ts';
import { idParamsSchema, idSchema, listEnvelopeSchema, listQuerySchema } from '../schemas.ts';

const TAGS = ['Events'];

/** How an event is read: in a spelling and a payload version, as a subscription would receive it. */
interface RenderQuery {
  payload_format?: PayloadFormat;
  api_version?: PayloadVersion;
}

const renderQuerySchema = {
  payload_format: {
    type: 'string',
    enum: PAYLOAD_FORMATS,
    description:
      '`snake_case` (default) or `camel_case`: the spelling a subscription with that `payload_format` receives.',
  },
  api_version: {
    type: 'string',
    enum: PAYLOAD_VERSIONS,
    description: `The payload version to render in (default ${PAYLOAD_VERSION_LATEST}): what a subscription pinned to it receives.`,
  },
} as const;

/** One event or a list's items: the snake_case envelope, or the camelCase one. */
const renderedEventSchema = { anyOf: [{ $ref: 'Event#' }, { $ref: 'EventCamel#' }] };

/** How `query` asks events to be rendered, as a subscription with those settings would receive them. */
function rendererOf(deps: Deps, query: RenderQuery) {
  return (event: EventRecord) =>
    renderEvent(
      event,
      deps.environment,
      query.api_version ?? PAYLOAD_VERSION_LATEST,
      query.payload_format ?? 'snake_case',
    );
}

const eventListSchema = listEnvelopeSchema('Event', 'A page of events.');

function listEventsRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{
    Querystring: ListQuery &
      RenderQuery & { type?: EventType; resource?: string; delivery_success?: boolean };
  }>(
    '/v1/events',
    readOperation({
      scope: 'read',
      operationId: 'listEvents',
      summary: 'List events',
      description:
        'Newest first, with cursor pagination; filter by type, resource and creation time. Events are kept for the retention period (30 days by default; an event with an unfinished delivery stays until it finishes), so a receiver that missed deliveries can recover them from here within it.',
      tags: TAGS,
      querystring: listQuerySchema(ID_PREFIXES.event, {
        type: enumFilter(EVENT_TYPES, 'Only events of this type.'),
        resource: idSchema(ID_PREFIXES.transfer, 'Only events about this transfer.'),
        delivery_success: {
          type: 'boolean',
          description:
            '`false`: only events with a webhook delivery that has not succeeded (yet); `true`: only events all of whose deliveries succeeded.',
        },
        ...renderQuerySchema,
      }),
      responses: {
        200: {
          ...eventListSchema,
          properties: { ...eventListSchema.properties, data: { type: 'array', items: renderedEventSchema } },
        },
      },
      problems: LIST_PROBLEMS,
    }),
    async (request) => {
      const page = await listEvents(deps, organizationOf(request), {
        ...pageRequestOf(request.query),
        type: request.query.type,
        resourceId: request.query.resource,
        deliverySuccess: request.query.delivery_success,
      });
      return presentList(page, rendererOf(deps, request.query));
    },
  );
}

function getEventRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string }; Querystring: RenderQuery }>(
    '/v1/events/:id',
    readOperation({
      scope: 'read',
      operationId: 'getEvent',
      summary: 'Retrieve an event',
      tags: TAGS,
      params: idParamsSchema(ID_PREFIXES.event, 'Event id.'),
      querystring: closedObjectSchema(renderQuerySchema),
      responses: { 200: found(renderedEventSchema, 'The event.') },
    }),
    async (request) =>
      rendererOf(deps, request.query)(await getEvent(deps, organizationOf(request), request.params.id)),
  );
}

export function eventRoutes(app: FastifyInstance, deps: Deps): void {
  app.addSchema(eventCamelSchema);
  listEventsRoute(app, deps);
  getEventRoute(app, deps);
}
