/**
 * The webhooks module's wire format: subscriptions and deliveries, and the request schemas their routes
 * share.
 */
import { EVENT_TYPES } from '../../../domain/events.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { PAYLOAD_VERSION_LATEST, PAYLOAD_VERSIONS } from '../../../domain/payloadVersions.ts';
import { WEBHOOK_SIGNING_SECRETS_MAX } from '../../../domain/signing.ts';
import {
  PAYLOAD_FORMATS,
  SUBSCRIPTION_STATUSES,
  WEBHOOK_EVENT_TYPES_MAX,
  WEBHOOK_URL_LENGTH_MAX,
} from '../../../domain/webhooks.ts';
import { accessByScope } from '../../../http/routeKit.ts';
import { idParamsSchema, idSchema, nullableStringSchema, timestampSchema } from '../../../http/schemas.ts';

const TAGS = ['Webhooks'];
export const ACCESS = accessByScope(TAGS);

/** An `api_version` as given: a date is 10 characters; longer text is refused before it is looked up. */
const API_VERSION_LENGTH_MAX = 32;

export const eventsSchema = {
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
    disabled_reason: nullableStringSchema(
      '`endpoint_gone` (it answered 410), `failing_too_long`, or `disabled_by_request`.',
    ),
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

export const deliverySchema = {
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
          response_body: nullableStringSchema('The start of the answer (or the error), cut to a bound.'),
        },
      },
    },
  },
} as const;

export const subscriptionParams = idParamsSchema(ID_PREFIXES.webhookSubscription, 'Subscription id.');
export const eventParams = idParamsSchema(ID_PREFIXES.event, 'Event id.');

/** The fields of a subscription that creating and updating it take alike (besides `events`). */
export const subscriptionFields = {
  url: {
    type: 'string',
    minLength: 1,
    maxLength: WEBHOOK_URL_LENGTH_MAX,
    pattern: '^\\S+$',
    description:
      'An HTTPS endpoint you own, publicly reachable: loopback, private, link-local and reserved addresses are refused, and a host name must resolve to public addresses only. A sandbox started with MKOBA_WEBHOOK_ALLOW_PRIVATE=1 (local development) also takes those, and plain HTTP to them.',
  },
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
} as const;

/** The answer of a re-send: what was re-sent (`subject`, an id) and how many deliveries it queued (`count`). */
export function requeuedSchema(subject: string, count: string) {
  return {
    type: 'object',
    required: ['object', subject, count],
    properties: {
      object: { type: 'string' },
      [subject]: { type: 'string' },
      [count]: { type: 'integer' },
    },
  };
}
