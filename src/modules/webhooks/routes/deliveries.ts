/** An event's deliveries: read with their attempts, re-sent now; and, in the sandbox, a test event emitted. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { EVENT_TYPES, type EventType } from '../../../domain/events.ts';
import { presentEvent } from '../../../http/presenters.ts';
import { foundById, retrieveByIdRoute } from '../../../http/readRoutes.ts';
import {
  closedObjectSchema,
  idempotentWrite,
  presentWholeList,
  SANDBOX_ACCESS,
  wholeListSchema,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { eventDeliveries, redeliverEvent } from '../useCases/deliveries.ts';
import { emitTestEvent } from '../useCases/testEvents.ts';
import { presentDelivery } from './presenters.ts';
import { ACCESS, eventParams, requeuedSchema } from './schemas.ts';

function listEventDeliveriesRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(
    app,
    deps,
    '/v1/events/:id/deliveries',
    eventDeliveries,
    (deliveries) => presentWholeList(deliveries, presentDelivery),
    {
      ...ACCESS.read,
      operationId: 'listEventDeliveries',
      summary: "List an event's deliveries and attempts",
      ...foundById(
        eventParams,
        wholeListSchema('WebhookDelivery'),
        'Every delivery of the event, each with its attempt log.',
      ),
    },
  );
}

function redeliverEventRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string } }>(
    '/v1/events/:id/redeliver',
    writeOperation({
      ...ACCESS.write,
      operationId: 'redeliverEvent',
      summary: 'Re-send an event now',
      description: 'Queues the event, due now, for every enabled subscription that wants its type.',
      params: eventParams,
      responses: {
        202: written(requeuedSchema('event', 'subscriptions'), 'How many subscriptions it was queued for.'),
      },
    }),
    idempotentWrite(deps, 202, async (tx, organizationId, request) => ({
      object: 'webhook_redelivery',
      event: request.params.id,
      subscriptions: await redeliverEvent(tx, deps, organizationId, request.params.id),
    })),
  );
}

function emitTestEventRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: { type: EventType } }>(
    '/v1/sandbox/events',
    writeOperation({
      ...SANDBOX_ACCESS.write,
      operationId: 'sandboxEmitEvent',
      summary: 'Emit a test event (sandbox)',
      description: 'Writes an event of any known type with a sample payload, delivered like any other.',
      body: closedObjectSchema({ type: { type: 'string', enum: EVENT_TYPES } }, ['type']),
      responses: { 201: written('Event', 'The event.') },
    }),
    idempotentWrite(deps, 201, async (tx, organizationId, request) =>
      presentEvent(await emitTestEvent(tx, deps, organizationId, request.body.type), deps.environment),
    ),
  );
}

export function deliveryRoutes(app: FastifyInstance, deps: Deps): void {
  listEventDeliveriesRoute(app, deps);
  redeliverEventRoute(app, deps);
  if (deps.environment === 'sandbox') emitTestEventRoute(app, deps);
}
