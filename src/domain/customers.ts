export const CUSTOMER_TYPES = ['individual', 'business'] as const;
export type CustomerType = (typeof CUSTOMER_TYPES)[number];

/** Every customer starts unverified; a verification moves it (src/domain/verifications.ts). */
export const KYC_STATUSES = ['unverified', 'pending', 'verified', 'rejected', 'documents_required'] as const;
export type KycStatus = (typeof KYC_STATUSES)[number];

export const CUSTOMER_NAME_LENGTH_MAX = 200;
export const EMAIL_LENGTH_MAX = 254;
/** E.164: a plus, a country code that does not start with 0, at most 15 digits in all. */
export const PHONE_PATTERN = '^\\+[1-9][0-9]{6,14}$';
