/**
 * Smile ID's vocabulary in Mkoba's, pure: what a verification submission is sent as (the country, Smile ID's
 * ID type and number, and Nigeria's business type), and what a result code decides (a status and reason,
 * or no decision, left to an operator). Submissions Smile ID cannot look up are not sent.
 */
import {
  ADULT_AGE_YEARS,
  ageInYears,
  type ProviderOutcome,
  type VerificationSubmission,
} from '../../../../domain/verifications.ts';

/** Smile ID's job types: 5 Enhanced/Basic KYC, 7 Business Verification. */
export const SMILE_ID_JOB_TYPES = { kyc: 5, kyb: 7 } as const;

/** Smile ID's ID type for each of Mkoba's, by the country of the individual's address. */
const KYC_ID_TYPES: Record<string, Partial<Record<string, string>>> = {
  KE: { national_id: 'NATIONAL_ID', passport: 'PASSPORT', alien_id: 'ALIEN_CARD' },
  UG: { national_id: 'NATIONAL_ID_NO_PHOTO' },
  GH: { national_id: 'GHANA_CARD', passport: 'PASSPORT' },
  NG: { national_id: 'NIN_V2' },
};

/** The countries whose business registry Smile ID searches. */
const KYB_COUNTRIES = new Set(['KE', 'NG']);

export interface SmileIdLookup {
  product: 'kyc' | 'kyb';
  idInfo: Record<string, string>;
}

/** Nigeria's registry numbers carry their kind as a prefix (BN business name, IT trustees, RC company). */
function nigerianBusiness(registrationNumber: string): { number: string; businessType: string } {
  const match = /^(BN|IT|RC)-?(.*)$/i.exec(registrationNumber);
  const prefix = match?.[1]?.toUpperCase();
  const number = match?.[2] ?? registrationNumber;
  return { number, businessType: prefix === 'BN' ? 'bn' : prefix === 'IT' ? 'it' : 'co' };
}

/** What Smile ID is asked to look up, or undefined when it cannot look this submission up. */
export function smileIdLookupOf(submission: VerificationSubmission): SmileIdLookup | undefined {
  if (submission.type === 'individual') {
    const country = submission.address.country;
    const idType = KYC_ID_TYPES[country]?.[submission.national_id.type];
    if (idType === undefined) return undefined;
    const [firstName = '', ...rest] = submission.legal_name.trim().split(/\s+/);
    return {
      product: 'kyc',
      idInfo: {
        country,
        id_type: idType,
        id_number: submission.national_id.number,
        first_name: firstName,
        last_name: rest.length > 0 ? (rest.at(-1) as string) : firstName,
        ...(rest.length > 1 ? { middle_name: rest.slice(0, -1).join(' ') } : {}),
        dob: submission.date_of_birth,
        phone_number: submission.phone,
      },
    };
  }
  if (!KYB_COUNTRIES.has(submission.country)) return undefined;
  const idInfo: Record<string, string> = {
    country: submission.country,
    id_type: 'BUSINESS_REGISTRATION',
    id_number: submission.registration_number,
  };
  if (submission.country === 'NG') {
    const { number, businessType } = nigerianBusiness(submission.registration_number);
    idInfo.id_number = number;
    idInfo.business_type = businessType;
  }
  return { product: 'kyb', idInfo };
}

/**
 * What a result code decides. Approved codes verify; "not found" and "no match" reject (a business not
 * found as `registration_not_found`); an ID number Smile ID cannot read asks for documents; the ID
 * authority unavailable (1015), a product not activated (1016) or a code not known here decide nothing:
 * the verification waits for an operator, with the code recorded.
 */
export function outcomeOfResultCode(resultCode: string, product: 'kyc' | 'kyb'): ProviderOutcome | undefined {
  switch (resultCode) {
    case '1012':
    case '1020':
    case '1021':
      return { status: 'verified' };
    case '1013':
    case '1023':
      return {
        status: 'rejected',
        reason: product === 'kyb' ? 'registration_not_found' : 'identity_mismatch',
      };
    case '1022':
      return { status: 'rejected', reason: 'identity_mismatch' };
    case '1014':
      return { status: 'documents_required', reason: 'documents_unreadable' };
    default:
      return undefined;
  }
}

/** Who is recorded as having rejected an individual under age before Smile ID was asked. */
export const AGE_RULE_DECIDER = 'age_rule';

/**
 * Mkoba's own rule, which Smile ID does not apply: an individual under ADULT_AGE_YEARS is rejected as
 * `underage` at once, and not sent.
 */
export function underageOutcome(
  submission: VerificationSubmission,
  today: Date,
): ProviderOutcome | undefined {
  if (submission.type !== 'individual') return undefined;
  return ageInYears(submission.date_of_birth, today) < ADULT_AGE_YEARS
    ? { status: 'rejected', reason: 'underage' }
    : undefined;
}
