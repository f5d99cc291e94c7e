/**
 * Customers, pure: their types, KYC statuses and address, the fields a change may touch, and what a change
 * of a verified fact does to the customer's verification.
 */
import { invalidStateTransition } from './errors.ts';

export const CUSTOMER_TYPES = ['individual', 'business'] as const;
export type CustomerType = (typeof CUSTOMER_TYPES)[number];

/** Every customer starts unverified; a verification moves it (src/domain/verifications.ts). */
export const KYC_STATUSES = ['unverified', 'pending', 'verified', 'rejected', 'documents_required'] as const;
export type KycStatus = (typeof KYC_STATUSES)[number];

/** A customer's postal address, as given and as a verification checks it. */
export interface Address {
  line1: string;
  line2?: string | undefined;
  city: string;
  region?: string | undefined;
  postal_code?: string | undefined;
  country: string;
}

export const CUSTOMER_NAME_LENGTH_MAX = 200;

/** The fields `PATCH /v1/customers/{id}` may change; `type` and the compliance fields never change there. */
export const CUSTOMER_CHANGE_FIELDS = ['name', 'email', 'phone', 'address', 'metadata'] as const;
export type CustomerChangeField = (typeof CUSTOMER_CHANGE_FIELDS)[number];

/**
 * The facts a verification checked, per customer type (src/domain/verifications.ts: an individual submits
 * a legal name, phone and address; a business its legal name). Changing one of them on a verified customer
 * asks for a new verification; email and metadata are never verified, so they change freely.
 */
export const VERIFIED_CUSTOMER_FIELDS: Record<CustomerType, readonly CustomerChangeField[]> = {
  individual: ['name', 'phone', 'address'],
  business: ['name'],
};

export interface CustomerChangeDecision {
  /** The customer's KYC status after the change. */
  kycStatus: KycStatus;
  /** The verified facts the change touched: a new verification is needed for them. Empty when none. */
  reverify: CustomerChangeField[];
}

/**
 * What a change of the customer's details does to its verification. A change of a verified fact drops a
 * `verified` customer back to `unverified` (tier 0: the new facts were never checked) until a new
 * verification passes; while a verification is `pending`, its facts cannot change (409
 * `invalid_state_transition`, naming the field), since the provider is checking the old ones. Customers
 * not verified keep their status: they need a verification anyway.
 */
export function decideCustomerChange(
  type: CustomerType,
  kycStatus: KycStatus,
  changed: readonly CustomerChangeField[],
): CustomerChangeDecision {
  const reverify = changed.filter((field) => VERIFIED_CUSTOMER_FIELDS[type].includes(field));
  const [first] = reverify;
  if (first === undefined) return { kycStatus, reverify };
  if (kycStatus === 'pending') {
    throw invalidStateTransition(
      'Invalid state transition',
      `The customer's ${first} is being verified: it can change once the pending verification is decided.`,
      first,
    );
  }
  return { kycStatus: kycStatus === 'verified' ? 'unverified' : kycStatus, reverify };
}
