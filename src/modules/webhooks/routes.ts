/** Webhook subscriptions (at the spec's unversioned path and under /v1), delivery logs and recovery. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { EVENT_TYPES, type EventType } from '../../domain/events.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { PAYLOAD_VERSION_LATEST, PAYLOAD_VERSIONS } from '../../domain/payloadVersions.ts';
import { WEBHOOK_SIGNING_SECRETS_MAX } from '../../domain/signing.ts';
import {
  PAYLOAD_FORMATS,
  SUBSCRIPTION_STATUSES,
  WEBHOOK_DESCRIPTION_LENGTH_MAX,
  WEBHOOK_EVENT_TYPES_MAX,
  WEBHOOK_SECRET_ROTATION_GRACE_HOURS_DEFAULT,
  WEBHOOK_URL_LENGTH_MAX,
} from '../../domain/webhooks.ts';
import { BEARER_SECURITY, principalOf } from '../../http/auth.ts';
import { type ListQuery, pageRequestOf, presentEvent, presentList } from '../../http/presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../../http/problems.ts';
import {
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  idSchema,
  listEnvelopeSchema,
  listQuerySchema,
  timestampSchema,
} from '../../http/schemas.ts';
import { sendWrite } from '../../http/writes.ts';
import { type CheckedWebhookUrl, prepareSubscriptionUrl } from './useCases/checks.ts';
import {
  type DeliveryView,
  eventDeliveries,
  recoverSubscription,
  redeliverEvent,
} from './useCases/deliveries.ts';
import type { Subscription } from './useCases/subscriptions.ts';
import {
  createSubscription,
  getSubscription,
  listSubscriptions,
  type RetiredSecret,
  removeSubscription,
  rotateSubscriptionSecret,
  type SubscriptionInput,
  type SubscriptionUpdate,
  updateSubscription,
  WEBHOOK_SECRET_ROTATION_GRACE_HOURS_MAX,
} from './useCases/subscriptions.ts';
import { emitTestEvent } from './useCases/testEvents.ts';

const TAGS = ['Webhooks'];

/** An `api_version` as given: a date is 10 characters; longer text is refused before it is looked up. */
const API_VERSION_LENGTH_MAX = 32;

const eventsSchema = {
  type: 'array',
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES_MAX,
  items: { type: 'string', minLength: 1, maxLength: 100 },
  description: `Event types to receive (${EVENT_TYPES.join(', ')}), or \`*\` for all.`,
} as const;

export const subscriptionSchema = {
  $id: 'WebhookSubscription',
  type: 'object',
  description: 'An HTTPS endpoint that receives signed events.',
  required: [
    'id',
    'object',
    'url',
    'events',
    'description',
    'payload_format',
    'api_version',
    'status',
    'disabled_reason',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: idSchema(ID_PREFIXES.webhookSubscription, 'Subscription id.'),
    object: { type: 'string', enum: ['webhook_subscription'] },
    url: { type: 'string' },
    events: { type: 'array', items: { type: 'string' } },
    description: { type: ['string', 'null'] },
    payload_format: { type: 'string', enum: PAYLOAD_FORMATS },
    api_version: {
      type: 'string',
      enum: PAYLOAD_VERSIONS,
      description:
        'The payload version every event delivered to it is rendered in (docs/WEBHOOKS.md, Payload versions); it moves forward only, by PATCH.',
    },
    status: { type: 'string', enum: SUBSCRIPTION_STATUSES },
    disabled_reason: {
      type: ['string', 'null'],
      description: '`endpoint_gone` (it answered 410), `failing_too_long`, or `disabled_by_request`.',
    },
    secret: {
      type: 'string',
      description: 'The signing secret (`whsec_…`): only in the responses of create and rotate-secret.',
    },
    previous_secret_expires_at: {
      ...timestampSchema,
      description: 'After a rotation: until when the old secret still signs.',
    },
    secrets_retired_early: {
      type: 'array',
      description: `Only in the response of rotate-secret: older secrets that stopped signing now, before their grace period ended, because at most ${WEBHOOK_SIGNING_SECRETS_MAX} secrets sign at once (the oldest go first). Empty when none did.`,
      items: {
        type: 'object',
        required: ['last4', 'created_at'],
        properties: {
          last4: { type: 'string', description: 'The last four characters of the retired secret.' },
          created_at: { ...timestampSchema, description: 'When the retired secret was issued.' },
        },
      },
    },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const;

const deliverySchema = {
  $id: 'WebhookDelivery',
  type: 'object',
  description: 'One event on its way to one subscription, with every attempt.',
  required: ['id', 'object', 'event', 'subscription', 'status', 'attempts', 'next_attempt_at', 'attempt_log'],
  properties: {
    id: { type: 'string' },
    object: { type: 'string', enum: ['webhook_delivery'] },
    event: { type: 'string' },
    subscription: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'delivering', 'succeeded', 'exhausted'] },
    attempts: { type: 'integer' },
    next_attempt_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When it is due (pending) or was due (delivering); null once succeeded or exhausted.',
    },
    last_attempt_at: { type: ['string', 'null'], format: 'date-time' },
    last_status_code: { type: ['integer', 'null'] },
    last_error: { type: ['string', 'null'] },
    succeeded_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: timestampSchema,
    attempt_log: {
      type: 'array',
      items: {
        type: 'object',
        required: ['attempt', 'started_at', 'duration_ms', 'status_code', 'error_class', 'response_body'],
        properties: {
          attempt: { type: 'integer' },
          started_at: timestampSchema,
          duration_ms: { type: 'integer' },
          status_code: { type: ['integer', 'null'] },
          error_class: {
            type: ['string', 'null'],
            description:
              'Why the attempt failed: timeout, dns, connection, blocked_address, tls or other (the request); ' +
              'internal (Mkoba could not prepare or send it), outcome_unrecordable (its outcome could not be ' +
              'recorded, so it counts as failed) or schedule_spent (not sent: attempts whose outcome was never ' +
              'recorded spent the retry schedule). Null when the endpoint answered.',
          },
          response_body: {
            type: ['string', 'null'],
            description: 'The start of the answer (or the error), cut to a bound.',
          },
        },
      },
    },
  },
} as const;

export function presentSubscription(
  s: Subscription,
  extra: { secret?: string; previousSecretExpiresAt?: Date; retiredEarly?: RetiredSecret[] } = {},
) {
  return {
    id: s.id,
    object: 'webhook_subscription',
    url: s.url,
    events: s.events,
    description: s.description,
    payload_format: s.payloadFormat,
    api_version: s.apiVersion,
    status: s.status,
    disabled_reason: s.disabledReason,
    ...(extra.secret ? { secret: extra.secret } : {}),
    ...(extra.previousSecretExpiresAt
      ? { previous_secret_expires_at: extra.previousSecretExpiresAt.toISOString() }
      : {}),
    ...(extra.retiredEarly
      ? {
          secrets_retired_early: extra.retiredEarly.map((r) => ({
            last4: r.last4,
            created_at: r.createdAt.toISOString(),
          })),
        }
      : {}),
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}

export function presentDelivery(d: DeliveryView) {
  const iso = (x: Date | null) => (x ? x.toISOString() : null);
  return {
    id: d.id,
    object: 'webhook_delivery',
    event: d.eventId,
    subscription: d.subscriptionId,
    status: d.status,
    attempts: d.attempts,
    // A finished delivery is due for nothing: its stored time is only when it finished.
    next_attempt_at:
      d.status === 'pending' || d.status === 'delivering' ? d.nextAttemptAt.toISOString() : null,
    last_attempt_at: iso(d.lastAttemptAt),
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    succeeded_at: iso(d.succeededAt),
    created_at: d.createdAt.toISOString(),
    attempt_log: d.log.map((a) => ({
      attempt: a.attempt,
      started_at: a.startedAt.toISOString(),
      duration_ms: a.durationMs,
      status_code: a.statusCode,
      error_class: a.errorClass,
      response_body: a.responseBody,
    })),
  };
}

const subscriptionParams = idParamsSchema(ID_PREFIXES.webhookSubscription, 'Subscription id.');
const eventParams = idParamsSchema(ID_PREFIXES.event, 'Event id.');
const subscriptionResponse = { description: 'The subscription.', $ref: 'WebhookSubscription#' };

export function webhookRoutes(app: FastifyInstance, deps: Deps): void {
  app.addSchema(subscriptionSchema);
  app.addSchema(deliverySchema);

  const createBody = {
    type: 'object',
    additionalProperties: false,
    required: ['url', 'events'],
    properties: {
      url: {
        type: 'string',
        minLength: 1,
        maxLength: WEBHOOK_URL_LENGTH_MAX,
        pattern: '^\\S+$',
        description:
          'An HTTPS endpoint you own, publicly reachable: loopback, private, link-local and reserved addresses are refused, and a host name must resolve to public addresses only. A sandbox started with MKOBA_WEBHOOK_ALLOW_PRIVATE=1 (local development) also takes those, and plain HTTP to them.',
      },
      events: eventsSchema,
      description: { type: 'string', maxLength: WEBHOOK_DESCRIPTION_LENGTH_MAX },
      payload_format: {
        type: 'string',
        enum: PAYLOAD_FORMATS,
        description:
          '`snake_case` (default: `created_at`, `data.transfer_id`) or `camel_case` (`createdAt`, `data.transferId`).',
      },
      api_version: {
        type: 'string',
        pattern: '^\\S+$',
        maxLength: API_VERSION_LENGTH_MAX,
        description: `The payload version to pin (${PAYLOAD_VERSIONS.join(', ')}); the newest, ${PAYLOAD_VERSION_LATEST}, when absent. An unknown one is a 400 \`unknown_api_version\`.`,
      },
    },
  } as const;

  for (const [path, operationId] of [
    ['/webhook-subscriptions', 'createWebhookSubscriptionUnversioned'],
    ['/v1/webhook-subscriptions', 'createWebhookSubscription'],
  ] as const) {
    app.post<{ Body: SubscriptionInput }>(
      path,
      {
        config: { scope: 'write' },
        schema: {
          operationId,
          summary: path.startsWith('/v1')
            ? 'Create a webhook subscription'
            : 'Create a webhook subscription (spec path)',
          description:
            'Returns the signing secret (`whsec_…`) in this response only. The spec gives this path without `/v1`; both paths behave the same.',
          tags: TAGS,
          security: BEARER_SECURITY,
          headers: idempotencyHeadersSchema,
          body: createBody,
          response: {
            201: {
              description: 'The subscription, with its secret.',
              headers: idempotentWriteHeaders,
              $ref: 'WebhookSubscription#',
            },
            ...problemResponses(...WRITE_PROBLEMS),
            403: {
              ...problemResponses(403)[403],
              description:
                'The API key lacks the `write` scope (`insufficient_permissions`), or webhook subscriptions are not enabled for the organization (`subscriptions_not_enabled`: the operator enables them per organization).',
            },
          },
        },
      },
      (request, reply) =>
        sendWrite(
          deps,
          request,
          reply,
          async (tx, organizationId, url: CheckedWebhookUrl) => {
            const created = await createSubscription(tx, deps, organizationId, { ...request.body, url });
            return {
              status: 201,
              body: presentSubscription(created.subscription, { secret: created.secret }),
              sensitive: true,
            };
          },
          (organizationId) => prepareSubscriptionUrl(deps, organizationId, request.body.url),
        ),
    );
  }

  app.get<{ Querystring: ListQuery }>(
    '/v1/webhook-subscriptions',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listWebhookSubscriptions',
        summary: 'List webhook subscriptions',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.webhookSubscription),
        response: {
          200: listEnvelopeSchema('WebhookSubscription', 'A page of subscriptions.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) =>
      presentList(
        await listSubscriptions(deps, principalOf(request).organizationId, pageRequestOf(request.query)),
        (s) => presentSubscription(s),
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/webhook-subscriptions/:id',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getWebhookSubscription',
        summary: 'Retrieve a webhook subscription',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: subscriptionParams,
        response: { 200: subscriptionResponse, ...problemResponses(...READ_PROBLEMS) },
      },
    },
    async (request) =>
      presentSubscription(
        await getSubscription(deps.store, principalOf(request).organizationId, request.params.id),
      ),
  );

  app.patch<{ Params: { id: string }; Body: SubscriptionUpdate }>(
    '/v1/webhook-subscriptions/:id',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'updateWebhookSubscription',
        summary: 'Update a webhook subscription',
        description:
          'Change the URL, event types, description, payload format, payload version (forward only), or enable/disable it. Re-enabling starts a fresh failure window. A new `url` is a new endpoint: while the operator has not enabled the organization’s own subscriptions (`webhook_subscriptions_enabled` false) it is a 403 `subscriptions_not_enabled`, as creating one is.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: subscriptionParams,
        body: {
          type: 'object',
          additionalProperties: false,
          minProperties: 1,
          properties: {
            url: createBody.properties.url,
            events: eventsSchema,
            description: { type: ['string', 'null'], maxLength: WEBHOOK_DESCRIPTION_LENGTH_MAX },
            payload_format: createBody.properties.payload_format,
            api_version: {
              ...createBody.properties.api_version,
              description:
                'Moves the subscription to a newer payload version: every delivery from now on (retries included) is rendered in it. Forward only: an older version is a 409 `api_version_downgrade`, an unknown one a 400 `unknown_api_version`.',
            },
            status: { type: 'string', enum: SUBSCRIPTION_STATUSES },
          },
        },
        response: {
          200: { ...subscriptionResponse, headers: idempotentWriteHeaders },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(
        deps,
        request,
        reply,
        async (tx, organizationId, url: CheckedWebhookUrl | undefined) => ({
          status: 200,
          body: presentSubscription(
            await updateSubscription(tx, deps, organizationId, request.params.id, { ...request.body, url }),
          ),
        }),
        async (organizationId) =>
          request.body.url === undefined
            ? undefined
            : prepareSubscriptionUrl(deps, organizationId, request.body.url),
      ),
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/webhook-subscriptions/:id',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'deleteWebhookSubscription',
        summary: 'Delete a webhook subscription',
        description: 'Stops deliveries to it. Its delivery log stays readable through the events.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: subscriptionParams,
        response: {
          200: {
            description: 'Deleted.',
            headers: idempotentWriteHeaders,
            type: 'object',
            required: ['id', 'object', 'deleted'],
            properties: { id: { type: 'string' }, object: { type: 'string' }, deleted: { type: 'boolean' } },
          },
          // An Idempotency-Key in flight (409) or reused for another request (422).
          ...problemResponses(...READ_PROBLEMS, 409, 422),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => {
        const removed = await removeSubscription(tx, deps, organizationId, request.params.id);
        return { status: 200, body: { id: removed.id, object: 'webhook_subscription', deleted: true } };
      }),
  );

  app.post<{ Params: { id: string }; Body: { grace_period_hours?: number } | undefined }>(
    '/v1/webhook-subscriptions/:id/rotate-secret',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'rotateWebhookSubscriptionSecret',
        summary: 'Rotate the signing secret',
        description: `Returns a new secret once. The old one keeps signing alongside it (one \`v1=\` each) for the grace period, ${WEBHOOK_SECRET_ROTATION_GRACE_HOURS_DEFAULT} h by default. At most ${WEBHOOK_SIGNING_SECRETS_MAX} secrets sign at once: a rotation past that retires the oldest at once and lists them in \`secrets_retired_early\`. The body is optional.`,
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: subscriptionParams,
        body: {
          type: ['object', 'null'],
          additionalProperties: false,
          properties: {
            grace_period_hours: {
              type: 'integer',
              minimum: 0,
              maximum: WEBHOOK_SECRET_ROTATION_GRACE_HOURS_MAX,
            },
          },
        },
        response: {
          200: {
            description: 'The subscription with its new secret.',
            headers: idempotentWriteHeaders,
            $ref: 'WebhookSubscription#',
          },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => {
        const rotated = await rotateSubscriptionSecret(
          tx,
          deps,
          organizationId,
          request.params.id,
          request.body?.grace_period_hours,
        );
        return {
          status: 200,
          body: presentSubscription(rotated.subscription, {
            secret: rotated.secret,
            previousSecretExpiresAt: rotated.previousSecretExpiresAt,
            retiredEarly: rotated.retiredEarly,
          }),
          sensitive: true,
        };
      }),
  );

  app.post<{ Params: { id: string }; Body: { since: string } }>(
    '/v1/webhook-subscriptions/:id/recover',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'recoverWebhookSubscription',
        summary: 'Re-send everything since a time',
        description:
          'Queues, due now, every event since `since` that the subscription wants (including ones delivered before).',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: subscriptionParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['since'],
          properties: {
            since: { ...timestampSchema, description: 'Re-send events created at or after this time.' },
          },
        },
        response: {
          202: {
            description: 'How many events were queued.',
            headers: idempotentWriteHeaders,
            type: 'object',
            required: ['object', 'subscription', 'requeued'],
            properties: {
              object: { type: 'string' },
              subscription: { type: 'string' },
              requeued: { type: 'integer' },
            },
          },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => {
        const { requeued } = await recoverSubscription(
          tx,
          deps,
          organizationId,
          request.params.id,
          new Date(request.body.since),
        );
        return {
          status: 202,
          body: { object: 'webhook_recovery', subscription: request.params.id, requeued },
        };
      }),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/events/:id/deliveries',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listEventDeliveries',
        summary: "List an event's deliveries and attempts",
        tags: TAGS,
        security: BEARER_SECURITY,
        params: eventParams,
        response: {
          200: {
            description: 'Every delivery of the event, each with its attempt log.',
            type: 'object',
            required: ['object', 'data'],
            properties: {
              object: { type: 'string', enum: ['list'] },
              data: { type: 'array', items: { $ref: 'WebhookDelivery#' } },
            },
          },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) => ({
      object: 'list',
      data: (await eventDeliveries(deps, principalOf(request).organizationId, request.params.id)).map(
        presentDelivery,
      ),
    }),
  );

  app.post<{ Params: { id: string } }>(
    '/v1/events/:id/redeliver',
    {
      config: { scope: 'write' },
      schema: {
        operationId: 'redeliverEvent',
        summary: 'Re-send an event now',
        description: 'Queues the event, due now, for every enabled subscription that wants its type.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: eventParams,
        response: {
          202: {
            description: 'How many subscriptions it was queued for.',
            headers: idempotentWriteHeaders,
            type: 'object',
            required: ['object', 'event', 'subscriptions'],
            properties: {
              object: { type: 'string' },
              event: { type: 'string' },
              subscriptions: { type: 'integer' },
            },
          },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 202,
        body: {
          object: 'webhook_redelivery',
          event: request.params.id,
          subscriptions: await redeliverEvent(tx, deps, organizationId, request.params.id),
        },
      })),
  );

  if (deps.environment === 'sandbox') {
    app.post<{ Body: { type: EventType } }>(
      '/v1/sandbox/events',
      {
        config: { scope: 'write' },
        schema: {
          operationId: 'sandboxEmitEvent',
          summary: 'Emit a test event (sandbox)',
          description: 'Writes an event of any known type with a sample payload, delivered like any other.',
          tags: ['Sandbox'],
          security: BEARER_SECURITY,
          headers: idempotencyHeadersSchema,
          body: {
            type: 'object',
            additionalProperties: false,
            required: ['type'],
            properties: { type: { type: 'string', enum: EVENT_TYPES } },
          },
          response: {
            201: { description: 'The event.', headers: idempotentWriteHeaders, $ref: 'Event#' },
            ...problemResponses(...WRITE_PROBLEMS),
          },
        },
      },
      (request, reply) =>
        sendWrite(deps, request, reply, async (tx, organizationId) => ({
          status: 201,
          body: presentEvent(
            await emitTestEvent(tx, deps, organizationId, request.body.type),
            deps.environment,
          ),
        })),
    );
  }
}
