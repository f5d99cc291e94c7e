/**
 * The organization's own profile: the business customer whose KYB stands for it (its legal entity), the
 * products it launches, and the contacts it names. The launch gates read them (docs/GOING-LIVE.md).
 */

import type { Deps } from '../../app/deps.ts';
import { forgetOrganizationProducts } from '../../app/products.ts';
import { resourceMissing, validationError } from '../../domain/errors.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { type MobileMarket, parseMobileMarkets } from '../../domain/mobileMarkets.ts';
import {
  type Contact,
  DEFAULT_LAUNCH_PRODUCTS,
  LAUNCH_PRODUCTS,
  type LaunchProduct,
  parseContacts,
} from '../../domain/organizationProfile.ts';
import {
  findProfile,
  listContacts,
  replaceContacts,
  type StoredContact,
  saveProfile,
} from '../../store/repositories/organizationProfiles.ts';
import {
  ensureOrganization,
  findOrganization,
  lockOrganization,
  type OrganizationRow,
} from '../../store/repositories/organizations.ts';
import type { Queryable } from '../../store/store.ts';
import { requireCustomer } from '../customers/index.ts';

export interface OrganizationView {
  organization: OrganizationRow;
  legalEntityId: string | null;
  products: readonly LaunchProduct[];
  /** The mobile-money markets it pays in; null: not named. */
  mobileNetworks: readonly MobileMarket[] | null;
  contacts: StoredContact[];
  /** When the profile or a contact last changed; the organization's creation before either. */
  updatedAt: Date;
}

async function viewOf(db: Queryable, organization: OrganizationRow): Promise<OrganizationView> {
  const profile = await findProfile(db, organization.id);
  const contacts = await listContacts(db, organization.id);
  const times = [organization.createdAt, profile?.updatedAt, ...contacts.map((c) => c.updatedAt)].filter(
    (d): d is Date => d !== undefined,
  );
  return {
    organization,
    legalEntityId: profile?.legalEntityId ?? null,
    products: profile?.products ?? DEFAULT_LAUNCH_PRODUCTS,
    mobileNetworks: profile?.mobileNetworks ?? null,
    contacts,
    updatedAt: new Date(Math.max(...times.map((d) => d.getTime()))),
  };
}

async function lockedOrganization(tx: Queryable, organizationId: string): Promise<OrganizationRow> {
  const organization = await lockOrganization(tx, organizationId);
  if (!organization) throw resourceMissing('organization', organizationId);
  return organization;
}

export async function getOrganization(deps: Deps, organizationId: string): Promise<OrganizationView> {
  const organization = await findOrganization(deps.store, organizationId);
  if (!organization) throw resourceMissing('organization', organizationId);
  return viewOf(deps.store, organization);
}

export interface ProfileChange {
  legal_entity?: string | null | undefined;
  products?: readonly string[] | undefined;
  mobile_networks?: readonly string[] | null | undefined;
}

/** Products as given: at least one, each known, without repeats (order kept). */
function parseProducts(raw: readonly string[]): LaunchProduct[] {
  if (raw.length === 0) throw validationError('products', 'products needs at least one product', 'missing');
  const seen = new Set<string>();
  return raw.map((p, i) => {
    if (!(LAUNCH_PRODUCTS as readonly string[]).includes(p)) {
      throw validationError(
        `products[${i}]`,
        `products[${i}] must be one of ${LAUNCH_PRODUCTS.join(', ')}`,
        'invalid_value',
      );
    }
    if (seen.has(p)) throw validationError(`products[${i}]`, `${p} is named twice`, 'duplicate');
    seen.add(p);
    return p as LaunchProduct;
  });
}

/**
 * Names the legal entity (a business customer of the organization), the products it launches and the
 * mobile-money markets it pays in (null: not named).
 */
export async function updateOrganizationProfile(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  change: ProfileChange,
): Promise<OrganizationView> {
  const organization = await lockedOrganization(tx, organizationId);
  const current = await findProfile(tx, organizationId);
  let legalEntityId = current?.legalEntityId ?? null;
  if (change.legal_entity !== undefined) {
    legalEntityId = change.legal_entity;
    if (legalEntityId !== null) {
      if (!legalEntityId.startsWith(`${ID_PREFIXES.customer}_`)) {
        throw validationError('legal_entity', 'legal_entity must be a customer id (cus_…)', 'invalid_format');
      }
      const customer = await requireCustomer(tx, organizationId, legalEntityId, 'legal_entity');
      if (customer.type !== 'business') {
        throw validationError(
          'legal_entity',
          `legal_entity must be a business customer; ${legalEntityId} is an individual`,
          'not_business',
        );
      }
    }
  }
  const products =
    change.products !== undefined
      ? parseProducts(change.products)
      : (current?.products ?? [...DEFAULT_LAUNCH_PRODUCTS]);
  const mobileNetworks =
    change.mobile_networks === undefined
      ? (current?.mobileNetworks ?? null)
      : change.mobile_networks === null
        ? null
        : parseMobileMarkets(change.mobile_networks, 'mobile_networks');
  await saveProfile(tx, { organizationId, legalEntityId, products, mobileNetworks, updatedAt: deps.now() });
  forgetOrganizationProducts(deps, organizationId);
  return viewOf(tx, organization);
}

/** Replaces the organization's named contacts (technical, compliance, finance). */
export async function nameContacts(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  raw: readonly { role: string; name: string; email: string; phone?: string | undefined }[],
): Promise<OrganizationView> {
  const contacts: Contact[] = parseContacts(raw);
  const organization = await lockedOrganization(tx, organizationId);
  await replaceContacts(tx, organizationId, contacts, deps.now());
  return viewOf(tx, organization);
}

/** The organization of that name, created if new (the CLI's way in). */
export function ensureOrganizationNamed(tx: Queryable, deps: Deps, name: string) {
  return ensureOrganization(tx, {
    id: deps.newId('organization'),
    name,
    // Production organizations subscribe to webhooks once the operator enables it; the sandbox's can at once.
    webhookSubscriptionsEnabled: deps.environment === 'sandbox',
    createdAt: deps.now(),
  });
}
