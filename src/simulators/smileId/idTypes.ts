/**
 * The ID types the simulator looks up, per country, with the ID number formats Smile ID publishes
 * ("ID Number Regex" and "Using ID Number" in docs.usesmileid.com), and the business registries KYB
 * searches. Kenya, Uganda, Ghana and Nigeria only: the countries Mkoba serves.
 */

/** Individuals' ID types by country, each with its published number format. */
export const SMILE_ID_KYC_ID_TYPES: Record<string, Record<string, RegExp>> = {
  KE: {
    ALIEN_CARD: /^[0-9]{6,9}$/,
    KRA_PIN: /^[0-9]{1,9}$/,
    NATIONAL_ID: /^[0-9]{1,9}$/,
    NATIONAL_ID_NO_PHOTO: /^[0-9]{1,9}$/,
    PASSPORT: /^[A-Z0-9]{7,9}$/,
    TAX_INFORMATION: /^[Aa]\d{9}[a-zA-Z]$/,
  },
  UG: {
    NATIONAL_ID_NO_PHOTO: /^[A-Z0-9]{14}$/i,
  },
  GH: {
    GHANA_CARD: /^GHA-[A-Z0-9]{9}-[A-Z0-9]$/i,
    GHANA_CARD_NO_PHOTO: /^GHA-[A-Z0-9]{9}-[A-Z0-9]$/i,
    PASSPORT: /^[A-Z]{1,2}[0-9]{6,7}$/i,
    VOTER_ID: /^[0-9]{10,12}$/,
  },
  NG: {
    BANK_ACCOUNT: /^[0-9]{10}$/,
    BVN: /^[0-9]{11}$/,
    NIN_V2: /^[0-9]{11}$/,
    NIN_SLIP: /^[0-9]{11}$/,
    V_NIN: /^[A-Z0-9]{16}$/i,
    PHONE_NUMBER: /^[0-9]{11}$/,
    VOTER_ID: /^[a-zA-Z0-9 ]{9,29}$/i,
  },
};

/** Business registries KYB searches, by country (Smile ID lists no KYB for Uganda or Ghana). */
export const SMILE_ID_KYB_ID_TYPES: Record<string, Record<string, RegExp>> = {
  KE: { BUSINESS_REGISTRATION: /^[A-Z0-9/-]{4,20}$/i },
  NG: {
    BUSINESS_REGISTRATION: /^[0-9]{4,8}$/,
    TAX_INFORMATION: /^[0-9]{8,}-[0-9]{4,}$/,
  },
};

/** Nigeria's registry asks what kind of business a registration number is (business name, company, trustees). */
export const SMILE_ID_NIGERIA_BUSINESS_TYPES = ['bn', 'co', 'it'] as const;

/** The format an ID type's numbers take, or undefined for a type the country does not have. */
export function idNumberFormat(
  table: Record<string, Record<string, RegExp>>,
  country: string,
  idType: string,
): RegExp | undefined {
  const types = table[country];
  return types && Object.hasOwn(types, idType) ? types[idType] : undefined;
}
