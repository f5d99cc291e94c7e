/**
 * Event envelopes: `Event` as `GET /v1/events` lists it (and `EventCamel`, its camelCase spelling), each
 * event type's envelope in both spellings (`…Event`, `…EventCamel`), and the OpenAPI document's
 * `webhooks`, one delivery per event type, built from them.
 */
import { ENVIRONMENTS } from '../domain/access.ts';
import { EVENT_TYPES, type EventType } from '../domain/events.ts';
import { ID_PREFIXES } from '../domain/ids.ts';
import { LAUNCH_PRODUCTS } from '../domain/organizationProfile.ts';
import { PAYLOAD_VERSIONS, PRODUCT_NAME_BEFORE_FAMILIES } from '../domain/payloadVersions.ts';
import { API_VERSION } from '../domain/version.ts';
import { toCamelCase } from '../domain/webhooks.ts';
import type { Schema } from './eventDataSchemas.ts';
import { EVENT_DATA_SCHEMAS } from './eventSchemas.ts';
import { idFirstApiObjectSchema } from './schemaBuilders.ts';
import { DOCUMENTED_AS, idSchema, timestampSchema } from './schemas.ts';

export const eventSchema = idFirstApiObjectSchema(
  'Event',
  'event',
  'A change to a resource, recorded in the same transaction as the change. The same envelope is the body of a webhook delivery; receivers deduplicate on `id`.',
  {
    id: idSchema(ID_PREFIXES.event, 'Event id.'),
    type: {
      type: 'string',
      description: `What happened: one of ${EVENT_TYPES.map((t) => `\`${t}\``).join(', ')}. New types may be added; ignore the ones you do not know.`,
      examples: ['transfer.settled'],
    },
    created_at: { ...timestampSchema, description: 'When the change happened (UTC).' },
    environment: { type: 'string', enum: ENVIRONMENTS, description: 'The environment that wrote it.' },
    product: {
      type: 'string',
      enum: [...LAUNCH_PRODUCTS, PRODUCT_NAME_BEFORE_FAMILIES],
      description: `The product family the event's resource belongs to; \`${PRODUCT_NAME_BEFORE_FAMILIES}\` in payload versions before 2026-12-06.`,
    },
    api_version: {
      type: 'string',
      enum: PAYLOAD_VERSIONS,
      description:
        'The payload version the event is rendered in (a CHANGELOG.md date): the newest here unless `api_version` asks for another; a subscription’s deliveries use its pinned version.',
      examples: [API_VERSION],
    },
    data: {
      description:
        'The resource the event is about, per type: the `webhooks` of this document give each type’s shape. A transfer for `transfer.*` events; for `wallet.*` events `{wallet_id, owner, currency, status, status_reason, status_changed_at}`; for `aml.alert.*` events `{alert_id, status, rule_id, rule_type, action, transfer_id, wallet_id, customer_id, disposition}`; for `customer.verification.updated`, `{verification_id, customer_id, status, reason, kyc_status, tier}`; for `webhook_subscription.disabled`, `{subscription_id, url, reason, failing_since}`; for `launch_gate.updated`, `{product, gate, state, previous_state, evidence, evidence_record, updated_at}`.',
      anyOf: [{ $ref: 'TransferEventData#' }, { type: 'object', additionalProperties: true }],
    },
  },
);

function camelKey(key: string): string {
  return Object.keys(toCamelCase({ [key]: null }) as object)[0] ?? key;
}

/**
 * A snake_case schema in the camelCase spelling: property names and `required` renamed by the payloads'
 * own rule; `metadata`'s keys are the caller's and stay as they are. A node documented as a component
 * (a transfer's destination) is inlined, since the component spells its fields in snake_case.
 */
export function camelCaseSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(camelCaseSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const node = schema as Schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === DOCUMENTED_AS) continue;
    if (key === 'properties' && value !== null && typeof value === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, property]) => [
          camelKey(name),
          name === 'metadata' ? property : camelCaseSchema(property),
        ]),
      );
    } else if (key === 'required' && Array.isArray(value)) {
      out.required = value.map((name) => camelKey(String(name)));
    } else {
      out[key] = camelCaseSchema(value);
    }
  }
  return out;
}

/** Event type `a.b_c` as a component name: `ABCEvent`. */
export function eventComponentName(type: string): string {
  return `${type
    .split(/[._]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('')}Event`;
}

/** The envelope of one event type in the snake_case spelling; its `data` is that type's. */
export function eventEnvelopeSchema(type: EventType): Schema {
  return {
    type: 'object',
    description: `A \`${type}\` event (snake_case spelling).`,
    required: ['id', 'object', 'type', 'created_at', 'environment', 'product', 'api_version', 'data'],
    properties: {
      id: idSchema(ID_PREFIXES.event, 'Event id: deduplicate on it.'),
      object: { type: 'string', enum: ['event'] },
      type: { type: 'string', enum: [type] },
      created_at: { ...timestampSchema, description: 'When the change happened (UTC).' },
      environment: { type: 'string', enum: ['sandbox', 'pilot', 'production'] },
      product: {
        type: 'string',
        enum: [...LAUNCH_PRODUCTS, PRODUCT_NAME_BEFORE_FAMILIES],
        description: `The product family the resource belongs to; \`${PRODUCT_NAME_BEFORE_FAMILIES}\` in payload versions before 2026-12-06.`,
      },
      api_version: {
        type: 'string',
        enum: PAYLOAD_VERSIONS,
        description: 'The payload version the event is rendered in: the subscription’s pinned version.',
      },
      data: EVENT_DATA_SCHEMAS[type],
    },
  };
}

/** Every event type's envelope in both spellings, keyed by component name (`…Event`, `…EventCamel`). */
export function eventEnvelopeComponents(): Record<string, unknown> {
  return Object.fromEntries(
    EVENT_TYPES.flatMap((type) => {
      const snake = eventEnvelopeSchema(type);
      const camel = camelCaseSchema({ ...snake, description: `A \`${type}\` event (camelCase spelling).` });
      return [
        [eventComponentName(type), snake],
        [`${eventComponentName(type)}Camel`, camel],
      ];
    }),
  );
}

/** The request headers of every delivery, as the sender sets them (src/modules/webhooks/workers/httpSender.ts). */
const DELIVERY_HEADERS = [
  {
    name: 'Service-Signature',
    in: 'header',
    required: true,
    description:
      '`t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>`, one `v1` per live secret (Stripe-compatible). Verify it over the raw bytes before parsing.',
    schema: { type: 'string', pattern: '^t=\\d+(,v1=[0-9a-f]{64})+$' },
  },
  {
    name: 'Service-Event-Id',
    in: 'header',
    required: true,
    description: 'The event’s `id`: deduplicate on it.',
    schema: idSchema(ID_PREFIXES.event, 'Event id.'),
  },
];

/**
 * The OpenAPI 3.1 `webhooks` object: one POST per event type, its body the event in either spelling (the
 * subscription's `payload_format`) and in the subscription's payload version.
 */
export function webhooksDocument(): Record<string, unknown> {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => {
      const name = eventComponentName(type);
      return [
        type,
        {
          post: {
            operationId: `${name.charAt(0).toLowerCase()}${name.slice(1)}Webhook`,
            summary: `${type} delivered`,
            description: `Sent to each subscription that wants \`${type}\`, signed, at least once and in no guaranteed order (docs/WEBHOOKS.md). The body is \`${name}\` for a \`snake_case\` subscription and \`${name}Camel\` for a \`camel_case\` one.`,
            tags: ['Webhooks'],
            // Signed with the subscription's secret (Service-Signature), not an API key.
            security: [],
            parameters: DELIVERY_HEADERS,
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: {
                    oneOf: [
                      { $ref: `#/components/schemas/${name}` },
                      { $ref: `#/components/schemas/${name}Camel` },
                    ],
                  },
                },
              },
            },
            responses: {
              '200': { description: 'Stored (or already stored): any 2xx counts as delivered.' },
              default: {
                description:
                  'Anything else, or no answer within the time-out, is retried on the schedule; `Retry-After` is honoured between 1 s and 1 h. A 410 disables the subscription at once (`endpoint_gone`).',
              },
            },
          },
        },
      ];
    }),
  );
}

/** `GET /v1/events` with `payload_format=camel_case`: the envelope in the camelCase spelling. */
export const eventCamelSchema = {
  ...(camelCaseSchema(eventSchema) as Schema),
  $id: 'EventCamel',
  description: 'An event in the camelCase spelling (`payload_format=camel_case`).',
  properties: {
    ...(camelCaseSchema(eventSchema) as { properties: Schema }).properties,
    data: {
      type: 'object',
      additionalProperties: true,
      description: 'The resource the event is about, in camelCase: the `webhooks` give each type’s shape.',
    },
  },
};
