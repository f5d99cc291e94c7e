/**
 * KYC and KYB verification, pure: what a customer submits, the status machine of a verification and of the
 * customer's `kyc_status`, the reasons a verification is not passed, and what an integrator may see of the
 * personal data (national id numbers masked to their last 4 characters).
 */
import type { Address } from './customers.ts';
import {
  AppError,
  type FieldError,
  invalidStateTransition,
  validationError,
  validationErrors,
} from './errors.ts';

export const VERIFICATION_STATUSES = ['pending', 'verified', 'rejected', 'documents_required'] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];

/** A verification is decided once: pending to one of the outcomes. */
export const VERIFICATION_TRANSITIONS: Record<VerificationStatus, readonly VerificationStatus[]> = {
  pending: ['verified', 'rejected', 'documents_required'],
  verified: [],
  rejected: [],
  documents_required: [],
};

export function decideVerification(from: VerificationStatus, to: VerificationStatus): VerificationStatus {
  if (!VERIFICATION_TRANSITIONS[from].includes(to)) {
    throw invalidStateTransition(
      'Invalid state transition',
      `A ${from} verification cannot become ${to}: it was decided already.`,
    );
  }
  return to;
}

/**
 * A customer may submit when nothing is pending: first (`unverified`), again after `rejected` or
 * `documents_required`, and again when verified (new details, for instance a new address).
 */
export function maySubmitVerification(kycStatus: string): boolean {
  return kycStatus !== 'pending';
}

/** Why a verification did not pass; a closed vocabulary. */
export const VERIFICATION_REASONS = [
  'identity_mismatch',
  'document_expired',
  'documents_unreadable',
  'address_unverified',
  'underage',
  'sanctions_match',
  'registration_not_found',
  'beneficial_owner_unverified',
  'other',
] as const;
export type VerificationReason = (typeof VERIFICATION_REASONS)[number];

export const NATIONAL_ID_TYPES = ['national_id', 'passport', 'alien_id', 'driving_licence'] as const;
export type NationalIdType = (typeof NATIONAL_ID_TYPES)[number];

/** Who decided a verification. */
export const VERIFICATION_DECIDERS = ['sandbox_provider', 'operator'] as const;
export type VerificationDecider = (typeof VERIFICATION_DECIDERS)[number];

export const LEGAL_NAME_LENGTH_MAX = 200;
export const ID_NUMBER_PATTERN = '^[A-Za-z0-9-]{4,32}$';
export const ADDRESS_LINE_LENGTH_MAX = 200;
export const POSTAL_CODE_LENGTH_MAX = 20;
/** ISO 3166-1 alpha-2. */
export const COUNTRY_PATTERN = '^[A-Z]{2}$';
export const BENEFICIAL_OWNERS_MAX = 20;
/** The age below which an individual is not verified. */
export const ADULT_AGE_YEARS = 18;
/** Ownership in basis points: 10,000 is all of it. */
export const OWNERSHIP_BP_TOTAL = 10_000;
/** An owner at or above this share must be declared, and a business must declare at least one. */
export const SIGNIFICANT_OWNERSHIP_BP = 2_500;
/** Characters of an id number left visible. */
export const ID_NUMBER_VISIBLE_CHARS = 4;

export interface NationalId {
  type: NationalIdType;
  number: string;
}

export interface BeneficialOwner {
  name: string;
  date_of_birth: string;
  national_id: NationalId;
  ownership_bp: number;
}

export type VerificationSubmission =
  | {
      type: 'individual';
      legal_name: string;
      date_of_birth: string;
      national_id: NationalId;
      phone: string;
      address: Address;
    }
  | {
      type: 'business';
      legal_name: string;
      registration_number: string;
      country: string;
      beneficial_owners: BeneficialOwner[];
    };

export function maskIdNumber(number: string): string {
  const visible = number.slice(-ID_NUMBER_VISIBLE_CHARS);
  return `${'*'.repeat(Math.max(0, number.length - visible.length))}${visible}`;
}

/** The submission as responses and evidence show it: id numbers masked. */
export function maskedSubmission(s: VerificationSubmission): Record<string, unknown> {
  if (s.type === 'individual') {
    return { ...s, national_id: { type: s.national_id.type, number: maskIdNumber(s.national_id.number) } };
  }
  return {
    ...s,
    beneficial_owners: s.beneficial_owners.map((o) => ({
      ...o,
      national_id: { type: o.national_id.type, number: maskIdNumber(o.national_id.number) },
    })),
  };
}

/** Whole years between a date of birth (YYYY-MM-DD) and a day. */
export function ageInYears(dateOfBirth: string, on: Date): number {
  const [y, m, d] = dateOfBirth.split('-').map(Number) as [number, number, number];
  let age = on.getUTCFullYear() - y;
  if (on.getUTCMonth() + 1 < m || (on.getUTCMonth() + 1 === m && on.getUTCDate() < d)) age -= 1;
  return age;
}

/** A real calendar date, not in the future. */
export function checkDateOfBirth(value: string, param: string, today: Date): void {
  const date = new Date(`${value}T00:00:00Z`);
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(value) ||
    Number.isNaN(date.getTime()) ||
    date.toISOString().slice(0, 10) !== value
  ) {
    throw validationError(param, `${param} must be a date as YYYY-MM-DD`, 'invalid_format');
  }
  if (date.getTime() > today.getTime())
    throw validationError(param, `${param} is in the future`, 'out_of_range');
}

/** Each submission type's fields, all required: the schema of each form is built from these. */
export const VERIFICATION_FIELDS = {
  individual: ['legal_name', 'date_of_birth', 'national_id', 'phone', 'address'],
  business: ['legal_name', 'registration_number', 'country', 'beneficial_owners'],
} as const satisfies Record<VerificationSubmission['type'], readonly string[]>;

/** "an individual", "a business": a word with the indefinite article its sound takes. */
export function withArticle(word: string): string {
  return `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;
}

/**
 * Checks what the shapes cannot: dates, the submission's type against the customer's, and beneficial
 * ownership (shares total at most 100 %, someone holds a significant share). Throws one 400 naming every
 * field at fault, `param` the first.
 */
export function checkSubmission(s: VerificationSubmission, customerType: string, today: Date): void {
  if (s.type !== customerType) {
    throw validationError(
      'type',
      `${withArticle(customerType)} customer submits ${withArticle(customerType)} verification`,
      'type_mismatch',
    );
  }
  const faults: FieldError[] = [];
  const checkDate = (value: string, param: string) => {
    try {
      checkDateOfBirth(value, param, today);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      faults.push(...error.errors);
    }
  };
  if (s.type === 'individual') {
    checkDate(s.date_of_birth, 'date_of_birth');
  } else {
    s.beneficial_owners.forEach((o, i) => {
      checkDate(o.date_of_birth, `beneficial_owners[${i}].date_of_birth`);
    });
    const total = s.beneficial_owners.reduce((sum, o) => sum + o.ownership_bp, 0);
    if (total > OWNERSHIP_BP_TOTAL) {
      faults.push({
        param: 'beneficial_owners',
        code: 'out_of_range',
        message: `ownership shares add up to ${total} basis points, more than 10,000`,
      });
    }
    if (!s.beneficial_owners.some((o) => o.ownership_bp >= SIGNIFICANT_OWNERSHIP_BP)) {
      faults.push({
        param: 'beneficial_owners',
        code: 'missing',
        message: `declare every owner of ${SIGNIFICANT_OWNERSHIP_BP} basis points (25 %) or more; none was declared`,
      });
    }
  }
  if (faults.length > 0) throw validationErrors(faults);
}

/** The number the sandbox provider decides by: the national id's, or the registration number. */
export function decidingNumber(s: VerificationSubmission): string {
  return s.type === 'individual' ? s.national_id.number : s.registration_number;
}

export type ProviderOutcome =
  | { status: 'verified' }
  | { status: 'rejected' | 'documents_required'; reason: VerificationReason }
  | { status: 'pending'; decideAfterMs: number };

/** How long the sandbox's "verified after a delay" magic number takes. */
export const SANDBOX_VERIFICATION_DELAY_MS = 10_000;

/**
 * The sandbox provider's decision by the last four characters of the deciding number (README): `9991`
 * rejected (identity_mismatch, or registration_not_found for a business), `9992` documents_required
 * (documents_unreadable), `9993` verified after SANDBOX_VERIFICATION_DELAY_MS, `9994` rejected
 * (document_expired); an individual under 18 is rejected (underage); anything else verified.
 */
export function sandboxOutcome(s: VerificationSubmission, today: Date): ProviderOutcome {
  const suffix = decidingNumber(s).slice(-4);
  if (s.type === 'individual' && ageInYears(s.date_of_birth, today) < ADULT_AGE_YEARS) {
    return { status: 'rejected', reason: 'underage' };
  }
  switch (suffix) {
    case '9991':
      return {
        status: 'rejected',
        reason: s.type === 'business' ? 'registration_not_found' : 'identity_mismatch',
      };
    case '9992':
      return { status: 'documents_required', reason: 'documents_unreadable' };
    case '9993':
      return { status: 'pending', decideAfterMs: SANDBOX_VERIFICATION_DELAY_MS };
    case '9994':
      return { status: 'rejected', reason: 'document_expired' };
    default:
      return { status: 'verified' };
  }
}
