/** An organization's profile (its legal entity, the products it launches) and its named contacts. */
import type { MobileMarket } from '../../domain/mobileMarkets.ts';
import type { Contact, LaunchProduct } from '../../domain/organizationProfile.ts';
import type { Queryable } from '../store.ts';
import { allOrganizationRecordsLister, recordFinderBy, rowTable } from './records.ts';
import { stored } from './rowMappers.ts';
import { fieldArrays, nullableText, toDate } from './rows.ts';

export interface OrganizationProfile {
  organizationId: string;
  legalEntityId: string | null;
  products: LaunchProduct[];
  /** The mobile-money markets it pays in (`mpesa:KE`); null: not named. */
  mobileNetworks: MobileMarket[] | null;
  updatedAt: Date;
}

export interface StoredContact extends Contact {
  updatedAt: Date;
}

const PROFILES = rowTable<OrganizationProfile>('organization_profiles', {
  organizationId: String,
  legalEntityId: nullableText,
  products: stored,
  mobileNetworks: (value) => (value as MobileMarket[] | null) ?? null,
  updatedAt: toDate,
});

export const findProfile = recordFinderBy(PROFILES, 'organization_id');

/** Writes the profile, locking its row until commit. */
export async function saveProfile(db: Queryable, profile: OrganizationProfile): Promise<void> {
  await db.query(
    `INSERT INTO organization_profiles (${PROFILES.columns})
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (organization_id) DO UPDATE
       SET legal_entity_id = EXCLUDED.legal_entity_id, products = EXCLUDED.products,
           mobile_networks = EXCLUDED.mobile_networks, updated_at = EXCLUDED.updated_at`,
    [
      profile.organizationId,
      profile.legalEntityId,
      profile.products,
      profile.mobileNetworks,
      profile.updatedAt,
    ],
  );
}

const CONTACTS = rowTable<StoredContact>('organization_contacts', {
  role: stored,
  name: String,
  email: String,
  phone: nullableText,
  updatedAt: toDate,
});

/** The organization's contacts: technical, then compliance, then finance. */
export const listContacts = allOrganizationRecordsLister(
  CONTACTS,
  "array_position(ARRAY['technical', 'compliance', 'finance']::text[], role)",
);

/**
 * Replaces the organization's contacts with these. A contact named again unchanged keeps its time, so the
 * gate's "when" is when a contact last really changed.
 */
export async function replaceContacts(
  db: Queryable,
  organizationId: string,
  contacts: readonly Contact[],
  now: Date,
): Promise<void> {
  await db.query(
    `DELETE FROM organization_contacts WHERE organization_id = $1 AND NOT (role = ANY($2::text[]))`,
    [organizationId, contacts.map((c) => c.role)],
  );
  if (contacts.length === 0) return;
  await db.query(
    `INSERT INTO organization_contacts (organization_id, role, name, email, phone, updated_at)
     SELECT $1, c.role, c.name, c.email, c.phone, $6
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS c(role, name, email, phone)
     ON CONFLICT (organization_id, role) DO UPDATE
       SET name = EXCLUDED.name, email = EXCLUDED.email, phone = EXCLUDED.phone, updated_at = EXCLUDED.updated_at
       WHERE (organization_contacts.name, organization_contacts.email, organization_contacts.phone)
             IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.email, EXCLUDED.phone)`,
    [organizationId, ...fieldArrays(contacts, 'role', 'name', 'email', 'phone'), now],
  );
}
