/**
 * The organization itself: its profile (the legal entity whose KYB stands for it, the products it launches)
 * and the contacts it names. Reading needs `read`; changing needs `admin`. The launch gates read them.
 */

import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { ENVIRONMENTS } from '../../domain/access.ts';
import { PHONE_PATTERN } from '../../domain/contactDetails.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { MOBILE_MARKETS, MOBILE_MARKETS_MAX } from '../../domain/mobileMarkets.ts';
import { CONTACT_NAME_CHARS_MAX, CONTACT_ROLES, LAUNCH_PRODUCTS } from '../../domain/organizationProfile.ts';
import { retrieveOwn } from '../../http/readRoutes.ts';
import { makeFromBody } from '../../http/routeEffects.ts';
import {
  accessByScope,
  closedObjectSchema,
  found,
  idempotentWrite,
  LIST_PROBLEMS,
  readOperation,
  writeOperation,
  written,
} from '../../http/routeKit.ts';
import { routesInOrder } from '../../http/routeOrder.ts';
import { apiObjectSchema, changeBodySchema, someOfSchema } from '../../http/schemaBuilders.ts';
import { emailSchema, idSchema, nullableIdSchema, timestampSchema } from '../../http/schemas.ts';
import { writeRoute } from '../../http/writeRoutes.ts';
import {
  getOrganization,
  nameContacts,
  type OrganizationView,
  type ProfileChange,
  updateOrganizationProfile,
} from './useCases.ts';

const ACCESS = accessByScope(['Organization']);

const productsSchema = someOfSchema(
  LAUNCH_PRODUCTS,
  'The products the organization launches; each has its own launch gates. `mobile_money` until named otherwise.',
);

const mobileNetworksSchema = {
  type: ['array', 'null'],
  maxItems: MOBILE_MARKETS_MAX,
  items: { type: 'string', enum: MOBILE_MARKETS },
  description:
    'The mobile-money markets you pay in, `network:COUNTRY` (e.g. `mpesa:KE`, `mtn:UG`): a pilot or production key that moves money waits until an active rail partner carries each (`rail_providers_configured`, docs/GOING-LIVE.md). `null`: not named, and any mobile-money partner passes that gate.',
} as const;

export const organizationSchema = apiObjectSchema(
  'Organization',
  'organization',
  'Your organization: the business customer whose KYB stands for it, the products it launches and the people it names for its launch. The launch gates read these.',
  {
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
    mobile_networks: mobileNetworksSchema,
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
);

function presentOrganization(view: OrganizationView, environment: string) {
  return {
    object: 'organization',
    id: view.organization.id,
    name: view.organization.name,
    environment,
    legal_entity: view.legalEntityId,
    products: view.products,
    mobile_networks: view.mobileNetworks,
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

/** Reading the key's own organization takes no id, query or body: no 400, and no 404 to document. */
const ORGANIZATION_READ_PROBLEMS = LIST_PROBLEMS.filter((s) => s !== 400);

function getOrganizationRoute(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/v1/organization',
    readOperation({
      ...ACCESS.read,
      operationId: 'getOrganization',
      summary: 'Retrieve your organization',
      responses: { 200: found('Organization', 'The organization.') },
      problems: ORGANIZATION_READ_PROBLEMS,
    }),
    retrieveOwn(deps, getOrganization, (view) => presentOrganization(view, deps.environment)),
  );
}

function updateOrganizationRoute(app: FastifyInstance, deps: Deps): void {
  writeRoute<{ Body: ProfileChange }>(
    app,
    deps,
    'PATCH',
    '/v1/organization',
    200,
    makeFromBody(deps, updateOrganizationProfile, (view) => presentOrganization(view, deps.environment)),
    {
      ...ACCESS.admin,
      operationId: 'updateOrganization',
      summary: 'Name your legal entity, products and mobile-money markets',
      description:
        '`legal_entity`: a business customer of yours whose verified KYB stands for the organization (400 `not_business` for an individual, 404 for an unknown one; `null` clears it). `products`: what you launch. `mobile_networks`: the mobile-money markets you pay in (400 `duplicate` for one named twice; `null` clears them). The launch gates follow at their next evaluation.',
      body: changeBodySchema({
        legal_entity: nullableIdSchema(ID_PREFIXES.customer, 'A business customer id, or null.'),
        products: productsSchema,
        mobile_networks: mobileNetworksSchema,
      }),
      responses: { 200: written('Organization', 'The organization.') },
    },
  );
}

const contactsBodySchema = closedObjectSchema(
  {
    contacts: {
      type: 'array',
      maxItems: CONTACT_ROLES.length,
      items: closedObjectSchema(
        {
          role: { type: 'string', enum: CONTACT_ROLES },
          name: { type: 'string', minLength: 1, maxLength: CONTACT_NAME_CHARS_MAX },
          email: emailSchema('ops@example.com'),
          phone: { type: 'string', pattern: PHONE_PATTERN, examples: ['+254711000000'] },
        },
        ['role', 'name', 'email'],
      ),
    },
  },
  ['contacts'],
);

function nameContactsRoute(app: FastifyInstance, deps: Deps): void {
  app.put<{ Body: { contacts: { role: string; name: string; email: string; phone?: string }[] } }>(
    '/v1/organization/contacts',
    writeOperation({
      ...ACCESS.admin,
      operationId: 'nameOrganizationContacts',
      summary: 'Name your contacts',
      description:
        'Replaces the people you name for your launch, one per role: `technical` (integration and incidents), `compliance` (KYB, screening, reviews) and `finance` (reconciliation and settlement). The `contacts_named` gate passes once all three are named.',
      body: contactsBodySchema,
      responses: { 200: written('Organization', 'The organization.') },
    }),
    idempotentWrite(deps, 200, async (tx, organizationId, request) =>
      presentOrganization(
        await nameContacts(tx, deps, organizationId, request.body.contacts),
        deps.environment,
      ),
    ),
  );
}

export const organizationRoutes = routesInOrder(
  getOrganizationRoute,
  updateOrganizationRoute,
  nameContactsRoute,
);
