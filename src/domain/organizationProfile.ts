/**
 * An organization's profile, pure: the product families it launches and the rails each runs on, which
 * product a movement belongs to, and the named contacts (each role once). The launch gates, the product
 * check every movement passes and the organization's profile all read these.
 */
import { normaliseEmail } from './contactDetails.ts';
import { validationError } from './errors.ts';
import type { Rail } from './transfers.ts';

/** The product families an organization launches (spec section 1); each has its own gates. */
export const LAUNCH_PRODUCTS = ['mobile_money', 'digital_banking', 'stablecoins'] as const;

export type LaunchProduct = (typeof LAUNCH_PRODUCTS)[number];

/** What an organization that named no products launches. */
export const DEFAULT_LAUNCH_PRODUCTS: readonly LaunchProduct[] = ['mobile_money'];

/** The rails a product's scenario and reconciliation are run on. */
export const PRODUCT_RAILS: Record<LaunchProduct, readonly Rail[]> = {
  mobile_money: ['mobile_money', 'paybill', 'till'],
  digital_banking: ['bank', 'card'],
  stablecoins: ['digital_asset'],
};

/**
 * The products an organization may use: those it named; when it named none, every product in the sandbox
 * (so it can explore before it chooses) and DEFAULT_LAUNCH_PRODUCTS in pilot and production (the products
 * its launch gates were passed for).
 */
export function enabledProducts(
  named: readonly LaunchProduct[] | undefined,
  sandbox: boolean,
): readonly LaunchProduct[] {
  if (named !== undefined) return named;
  return sandbox ? LAUNCH_PRODUCTS : DEFAULT_LAUNCH_PRODUCTS;
}

/** Stablecoin currencies: money in them is the `stablecoins` product, whatever the rail. */
export const STABLECOIN_CURRENCIES: readonly string[] = ['USDC', 'USDT'];

/**
 * The product a movement belongs to: a stablecoin currency is `stablecoins` on any rail; otherwise its
 * rail's product (PRODUCT_RAILS); undefined for the `internal` rail in a fiat currency (a book transfer
 * between the organization's own wallets, part of every product).
 */
export function productOfMovement(movement: { rail: Rail; currency: string }): LaunchProduct | undefined {
  if (STABLECOIN_CURRENCIES.includes(movement.currency)) return 'stablecoins';
  return LAUNCH_PRODUCTS.find((p) => PRODUCT_RAILS[p].includes(movement.rail));
}

/** The people an organization names for its launch; every role must be named. */
export const CONTACT_ROLES = ['technical', 'compliance', 'finance'] as const;

export type ContactRole = (typeof CONTACT_ROLES)[number];

export const CONTACT_NAME_CHARS_MAX = 200;

export interface Contact {
  role: ContactRole;
  name: string;
  email: string;
  phone: string | null;
}

const PHONE = /^\+[1-9][0-9]{6,14}$/;

/** Contacts as given: each role once, a name, an email, an optional phone in international form. */
export function parseContacts(
  raw: readonly { role: string; name: string; email: string; phone?: string | undefined }[],
): Contact[] {
  const seen = new Set<string>();
  return raw.map((c, i) => {
    const at = `contacts[${i}]`;
    if (!(CONTACT_ROLES as readonly string[]).includes(c.role)) {
      throw validationError(
        `${at}.role`,
        `${at}.role must be one of ${CONTACT_ROLES.join(', ')}`,
        'invalid_value',
      );
    }
    if (seen.has(c.role)) {
      throw validationError(`${at}.role`, `the ${c.role} contact is named twice`, 'duplicate');
    }
    seen.add(c.role);
    const name = c.name.trim();
    if (name.length === 0 || name.length > CONTACT_NAME_CHARS_MAX) {
      throw validationError(
        `${at}.name`,
        `${at}.name must be 1 to ${CONTACT_NAME_CHARS_MAX} characters`,
        'out_of_range',
      );
    }
    if (c.phone !== undefined && !PHONE.test(c.phone)) {
      throw validationError(
        `${at}.phone`,
        `${at}.phone must be in international form, e.g. +254711000000`,
        'invalid_format',
      );
    }
    return {
      role: c.role as ContactRole,
      name,
      email: normaliseEmail(c.email, `${at}.email`),
      phone: c.phone ?? null,
    };
  });
}
