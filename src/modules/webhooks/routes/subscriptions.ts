/**
 * Webhook subscriptions: created (at the spec's unversioned path and under /v1), listed and read, updated,
 * deleted, their signing secret rotated, and everything since a time re-sent.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { WEBHOOK_SIGNING_SECRETS_MAX } from '../../../domain/signing.ts';
import {
  SUBSCRIPTION_STATUSES,
  WEBHOOK_DESCRIPTION_LENGTH_MAX,
  WEBHOOK_SECRET_ROTATION_GRACE_HOURS_DEFAULT,
} from '../../../domain/webhooks.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../../../http/problems.ts';
import { foundById, listAndRetrieveRoutes, pagedList } from '../../../http/readRoutes.ts';
import { idempotentWrite, writeOperation, written } from '../../../http/routeKit.ts';
import { timestampSchema } from '../../../http/schemas.ts';
import { sendWrite } from '../../../http/writes.ts';
import { type CheckedWebhookUrl, prepareSubscriptionUrl } from '../useCases/checks.ts';
import { recoverSubscription } from '../useCases/deliveries.ts';
import {
  createSubscription,
  getSubscription,
  listSubscriptions,
  removeSubscription,
  rotateSubscriptionSecret,
  type Subscription,
  type SubscriptionInput,
  type SubscriptionUpdate,
  updateSubscription,
  WEBHOOK_SECRET_ROTATION_GRACE_HOURS_MAX,
} from '../useCases/subscriptions.ts';
import { presentSubscription } from './presenters.ts';
import { ACCESS, eventsSchema, requeuedSchema, subscriptionFields, subscriptionParams } from './schemas.ts';

const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'events'],
  properties: {
    url: subscriptionFields.url,
    events: eventsSchema,
    description: { type: 'string', maxLength: WEBHOOK_DESCRIPTION_LENGTH_MAX },
    payload_format: subscriptionFields.payload_format,
    api_version: subscriptionFields.api_version,
  },
} as const;

/** The 403 of a create: besides the scope, the operator may not have enabled the organization's own subscriptions. */
const createForbidden = {
  ...problemResponses(403)[403],
  description:
    'The API key lacks the `write` scope (`insufficient_permissions`), or webhook subscriptions are not enabled for the organization (`subscriptions_not_enabled`: the operator enables them per organization).',
};

function createSubscriptionRoute(app: FastifyInstance, deps: Deps, path: string, operationId: string): void {
  app.post<{ Body: SubscriptionInput }>(
    path,
    writeOperation({
      ...ACCESS.write,
      operationId,
      summary: path.startsWith('/v1')
        ? 'Create a webhook subscription'
        : 'Create a webhook subscription (spec path)',
      description:
        'Returns the signing secret (`whsec_…`) in this response only. The spec gives this path without `/v1`; both paths behave the same.',
      body: createBody,
      responses: {
        201: written('WebhookSubscription', 'The subscription, with its secret.'),
        403: createForbidden,
      },
      problems: WRITE_PROBLEMS.filter((s) => s !== 403),
    }),
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

function subscriptionsReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/webhook-subscriptions',
    access: ACCESS.read,
    present: (s: Subscription) => presentSubscription(s),
    list: {
      operationId: 'listWebhookSubscriptions',
      summary: 'List webhook subscriptions',
      ...pagedList('WebhookSubscription', 'A page of subscriptions.', ID_PREFIXES.webhookSubscription),
    },
    page: listSubscriptions,
    retrieve: {
      operationId: 'getWebhookSubscription',
      summary: 'Retrieve a webhook subscription',
      ...foundById(subscriptionParams, 'WebhookSubscription', 'The subscription.'),
    },
    get: (d, organizationId, id) => getSubscription(d.store, organizationId, id),
  });
}

function updateSubscriptionRoute(app: FastifyInstance, deps: Deps): void {
  app.patch<{ Params: { id: string }; Body: SubscriptionUpdate }>(
    '/v1/webhook-subscriptions/:id',
    writeOperation({
      ...ACCESS.write,
      operationId: 'updateWebhookSubscription',
      summary: 'Update a webhook subscription',
      description:
        'Change the URL, event types, description, payload format, payload version (forward only), or enable/disable it. Re-enabling starts a fresh failure window. A new `url` is a new endpoint: while the operator has not enabled the organization’s own subscriptions (`webhook_subscriptions_enabled` false) it is a 403 `subscriptions_not_enabled`, as creating one is.',
      params: subscriptionParams,
      body: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        properties: {
          url: subscriptionFields.url,
          events: eventsSchema,
          description: { type: ['string', 'null'], maxLength: WEBHOOK_DESCRIPTION_LENGTH_MAX },
          payload_format: subscriptionFields.payload_format,
          api_version: {
            ...subscriptionFields.api_version,
            description:
              'Moves the subscription to a newer payload version: every delivery from now on (retries included) is rendered in it. Forward only: an older version is a 409 `api_version_downgrade`, an unknown one a 400 `unknown_api_version`.',
          },
          status: { type: 'string', enum: SUBSCRIPTION_STATUSES },
        },
      },
      responses: { 200: written('WebhookSubscription', 'The subscription.') },
    }),
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
}

function deleteSubscriptionRoute(app: FastifyInstance, deps: Deps): void {
  app.delete<{ Params: { id: string } }>(
    '/v1/webhook-subscriptions/:id',
    writeOperation({
      ...ACCESS.write,
      operationId: 'deleteWebhookSubscription',
      summary: 'Delete a webhook subscription',
      description: 'Stops deliveries to it. Its delivery log stays readable through the events.',
      params: subscriptionParams,
      responses: {
        200: written(
          {
            type: 'object',
            required: ['id', 'object', 'deleted'],
            properties: { id: { type: 'string' }, object: { type: 'string' }, deleted: { type: 'boolean' } },
          },
          'Deleted.',
        ),
      },
      // An Idempotency-Key in flight (409) or reused for another request (422).
      problems: [...READ_PROBLEMS, 409, 422],
    }),
    idempotentWrite(deps, 200, async (tx, organizationId, request) => {
      const removed = await removeSubscription(tx, deps, organizationId, request.params.id);
      return { id: removed.id, object: 'webhook_subscription', deleted: true };
    }),
  );
}

function rotateSecretRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: { grace_period_hours?: number } | undefined }>(
    '/v1/webhook-subscriptions/:id/rotate-secret',
    writeOperation({
      ...ACCESS.write,
      operationId: 'rotateWebhookSubscriptionSecret',
      summary: 'Rotate the signing secret',
      description: `Returns a new secret once. The old one keeps signing alongside it (one \`v1=\` each) for the grace period, ${WEBHOOK_SECRET_ROTATION_GRACE_HOURS_DEFAULT} h by default. At most ${WEBHOOK_SIGNING_SECRETS_MAX} secrets sign at once: a rotation past that retires the oldest at once and lists them in \`secrets_retired_early\`. The body is optional.`,
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
      responses: { 200: written('WebhookSubscription', 'The subscription with its new secret.') },
    }),
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
}

function recoverSubscriptionRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string }; Body: { since: string } }>(
    '/v1/webhook-subscriptions/:id/recover',
    writeOperation({
      ...ACCESS.write,
      operationId: 'recoverWebhookSubscription',
      summary: 'Re-send everything since a time',
      description:
        'Queues, due now, every event since `since` that the subscription wants (including ones delivered before).',
      params: subscriptionParams,
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['since'],
        properties: {
          since: { ...timestampSchema, description: 'Re-send events created at or after this time.' },
        },
      },
      responses: { 202: written(requeuedSchema('subscription', 'requeued'), 'How many events were queued.') },
    }),
    idempotentWrite(deps, 202, async (tx, organizationId, request) => {
      const { requeued } = await recoverSubscription(
        tx,
        deps,
        organizationId,
        request.params.id,
        new Date(request.body.since),
      );
      return { object: 'webhook_recovery', subscription: request.params.id, requeued };
    }),
  );
}

export function subscriptionRoutes(app: FastifyInstance, deps: Deps): void {
  createSubscriptionRoute(app, deps, '/webhook-subscriptions', 'createWebhookSubscriptionUnversioned');
  createSubscriptionRoute(app, deps, '/v1/webhook-subscriptions', 'createWebhookSubscription');
  subscriptionsReadRoutes(app, deps);
  updateSubscriptionRoute(app, deps);
  deleteSubscriptionRoute(app, deps);
  rotateSecretRoute(app, deps);
  recoverSubscriptionRoute(app, deps);
}
