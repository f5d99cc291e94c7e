/**
 * The organization itself: its profile (the legal entity whose KYB stands for it, the products it launches)
 * and the contacts it names. Reading needs `read`; changing needs `admin`. The launch gates read them.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import {
  getOrganization,
  nameContacts,
  type OrganizationView,
  type ProfileChange,
  updateOrganizationProfile,
} from '../../app/organizationProfile.ts';
import { ENVIRONMENTS } from '../../domain/apiKeys.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { MEMBER_EMAIL_CHARS_MAX } from '../../domain/members.ts';
import { CONTACT_NAME_CHARS_MAX, CONTACT_ROLES, LAUNCH_PRODUCTS } from '../../domain/organizationProfile.ts';
import { BEARER_SECURITY, principalOf } from '../auth.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../problems.ts';
import {
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idSchema,
  nullableIdSchema,
  timestampSchema,
} from '../schemas.ts';
import { sendWrite } from '../writes.ts';

const TAGS = ['Organization'];
const PHONE_PATTERN = '^\\+[1-9][0-9]{6,14}$';

const productsSchema = {
  type: 'array',
  minItems: 1,
  maxItems: LAUNCH_PRODUCTS.length,
  items: { type: 'string', enum: LAUNCH_PRODUCTS },
  description:
    'The products the organization launches; each has its own launch gates. `mobile_money` until named otherwise.',
} as const;

export const organizationSchema = {
  $id: 'Organization',
  type: 'object',
  description:
    'Your organization: the business customer whose KYB stands for it, the products it launches and the people it names for its launch. The launch gates read these.',
  required: [
    'object',
    'id',
    'name',
    'environment',
    'legal_entity',
    'products',
    'contacts',
    'webhook_subscriptions_enabled',
    'created_at',
    'updated_at',
  ],
  properties: {
    object: { type: 'string', enum: ['organization'] },
    id: idSchema(ID_PREFIXES.organization, 'Organization id.'),
    name: {
      type: 'string',
      description: 'As the operator named it; the same name in the sandbox and in pilot or production.',
    },
    environment: { type: 'string', enum: ENVIRONMENTS, description: 'The environment of this deployment.' },
    legal_entity: nullableIdSchema(
      ID_PREFIXES.customer,
      'The business customer whose KYB stands for the organization (the `business_verified` gate).',
    ),
    products: productsSchema,
    contacts: {
      type: 'array',
      items: {
        type: 'object',
        required: ['role', 'name', 'email', 'phone', 'updated_at'],
        properties: {
          role: { type: 'string', enum: CONTACT_ROLES },
          name: { type: 'string' },
          email: { type: 'string' },
          phone: { type: ['string', 'null'] },
          updated_at: timestampSchema,
        },
      },
    },
    webhook_subscriptions_enabled: {
      type: 'boolean',
      description:
        'Whether the organization manages its own webhook subscriptions (`POST /v1/webhook-subscriptions`). The operator’s switch: on in the sandbox; off in pilot and production, where subscriptions are set up from the ones reviewed in the sandbox (`mkoba subscriptions promote`) until the operator turns it on. While off, creating one or changing one’s `url` is a 403 `subscriptions_not_enabled`.',
    },
    created_at: timestampSchema,
    updated_at: { ...timestampSchema, description: 'When the profile or a contact last changed.' },
  },
} as const;

function presentOrganization(view: OrganizationView, environment: string) {
  return {
    object: 'organization',
    id: view.organization.id,
    name: view.organization.name,
    environment,
    legal_entity: view.legalEntityId,
    products: view.products,
    contacts: view.contacts.map((c) => ({
      role: c.role,
      name: c.name,
      email: c.email,
      phone: c.phone,
      updated_at: c.updatedAt.toISOString(),
    })),
    webhook_subscriptions_enabled: view.organization.webhookSubscriptionsEnabled,
    created_at: view.organization.createdAt.toISOString(),
    updated_at: view.updatedAt.toISOString(),
  };
}

export function organizationRoutes(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/v1/organization',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getOrganization',
        summary: 'Retrieve your organization',
        tags: TAGS,
        security: BEARER_SECURITY,
        response: {
          200: { description: 'The organization.', $ref: 'Organization#' },
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404 && s !== 400)),
        },
      },
    },
    async (request) =>
      presentOrganization(await getOrganization(deps, principalOf(request).organizationId), deps.environment),
  );

  app.patch<{ Body: ProfileChange }>(
    '/v1/organization',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'updateOrganization',
        summary: 'Name your legal entity and products',
        description:
          '`legal_entity`: a business customer of yours whose verified KYB stands for the organization (400 `not_business` for an individual, 404 for an unknown one; `null` clears it). `products`: what you launch. The launch gates follow at their next evaluation.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          additionalProperties: false,
          minProperties: 1,
          properties: {
            legal_entity: nullableIdSchema(ID_PREFIXES.customer, 'A business customer id, or null.'),
            products: productsSchema,
          },
        },
        response: {
          200: { description: 'The organization.', headers: idempotentWriteHeaders, $ref: 'Organization#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentOrganization(
          await updateOrganizationProfile(tx, deps, organizationId, request.body),
          deps.environment,
        ),
      })),
  );

  app.put<{ Body: { contacts: { role: string; name: string; email: string; phone?: string }[] } }>(
    '/v1/organization/contacts',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'nameOrganizationContacts',
        summary: 'Name your contacts',
        description:
          'Replaces the people you name for your launch, one per role: `technical` (integration and incidents), `compliance` (KYB, screening, reviews) and `finance` (reconciliation and settlement). The `contacts_named` gate passes once all three are named.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['contacts'],
          properties: {
            contacts: {
              type: 'array',
              maxItems: CONTACT_ROLES.length,
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['role', 'name', 'email'],
                properties: {
                  role: { type: 'string', enum: CONTACT_ROLES },
                  name: { type: 'string', minLength: 1, maxLength: CONTACT_NAME_CHARS_MAX },
                  email: {
                    type: 'string',
                    minLength: 3,
                    maxLength: MEMBER_EMAIL_CHARS_MAX,
                    examples: ['ops@example.com'],
                  },
                  phone: { type: 'string', pattern: PHONE_PATTERN, examples: ['+254711000000'] },
                },
              },
            },
          },
        },
        response: {
          200: { description: 'The organization.', headers: idempotentWriteHeaders, $ref: 'Organization#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentOrganization(
          await nameContacts(tx, deps, organizationId, request.body.contacts),
          deps.environment,
        ),
      })),
  );
}
