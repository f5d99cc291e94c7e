/**
 * The Travel Rule: whether a digital-asset transfer must carry originator and beneficiary data, and whether
 * the data it carries is complete. Thresholds are USD amounts per jurisdiction; an amount is converted to
 * USD with a rate held as an exact decimal (a scaled integer), so the comparison amount × rate ≥ threshold
 * is made in integers and is exact at every boundary. Pure: settings, facts and today are arguments.
 */
import { AppError, type FieldError, validationError } from '../errors.ts';
import {
  type Currency,
  checkSingleAmount,
  exponentOf,
  formatAmount,
  isCurrency,
  parseAmount,
} from '../money.ts';
import { type ExactRate, formatDecimal, formatRate, parseRate } from '../rates.ts';
import { checkDateOfBirth, ID_NUMBER_PATTERN } from '../verifications.ts';

/** The USD value of one unit of a currency. */
export type UsdRate = ExactRate;

/** The threshold that applies where a transfer's jurisdiction has none of its own. */
export const DEFAULT_JURISDICTION = 'default';
/** USD, in cents: 1,000.00. */
export const DEFAULT_THRESHOLD_USD_MINOR = 1_000_00n;
/** Jurisdiction entries (countries, and `default`) one organization may set. */
export const TRAVEL_RULE_JURISDICTIONS_MAX = 250;

/** What one unit of a currency is worth in USD, as the rates table starts. */
export const DEFAULT_USD_RATES: Readonly<Partial<Record<Currency, string>>> = {
  USD: '1',
  USDC: '1',
  USDT: '1',
  EUR: '1.08',
  GBP: '1.27',
  KES: '0.0077',
  UGX: '0.00027',
  TZS: '0.00038',
  RWF: '0.00073',
  GHS: '0.065',
  NGN: '0.00065',
  ZAR: '0.055',
};

/** Longest free-text field of the Travel Rule data (a name, an account, an institution, an address). */
export const TRAVEL_RULE_NAME_LENGTH_MAX = 200;
export const TRAVEL_RULE_ACCOUNT_LENGTH_MAX = 200;
export const TRAVEL_RULE_ADDRESS_LENGTH_MAX = 500;

export interface TravelRuleSettings {
  /** USD cents by jurisdiction: `default` and ISO 3166-1 alpha-2 country codes. */
  thresholdsUsdMinor: Readonly<Record<string, bigint>>;
  /** The USD value of one unit of each currency. */
  rates: Readonly<Partial<Record<Currency, UsdRate>>>;
}

const COUNTRY_PATTERN = /^[A-Z]{2}$/;

export function defaultTravelRuleSettings(): TravelRuleSettings {
  return {
    thresholdsUsdMinor: { [DEFAULT_JURISDICTION]: DEFAULT_THRESHOLD_USD_MINOR },
    rates: Object.fromEntries(
      Object.entries(DEFAULT_USD_RATES).map(([currency, text]) => [
        currency,
        parseRate(text as string, `rates.${currency}`),
      ]),
    ),
  };
}

/**
 * Settings as the API takes them: `thresholds` (USD decimal strings by `default` or country) and `rates`
 * (USD decimal strings by currency). A 400 names the first entry at fault. `requiredRates` are the
 * currencies a decision may need (those the digital-asset rail carries).
 */
export function parseTravelRuleSettings(
  input: { thresholds: Record<string, string>; rates: Record<string, string> },
  requiredRates: readonly Currency[],
): TravelRuleSettings {
  const thresholds: Record<string, bigint> = {};
  for (const [jurisdiction, text] of Object.entries(input.thresholds)) {
    const param = `thresholds.${jurisdiction}`;
    if (jurisdiction !== DEFAULT_JURISDICTION && !COUNTRY_PATTERN.test(jurisdiction)) {
      throw validationError(
        param,
        `${param}: a jurisdiction is \`${DEFAULT_JURISDICTION}\` or an ISO 3166-1 alpha-2 country code such as KE`,
        'invalid_key',
      );
    }
    thresholds[jurisdiction] = checkSingleAmount(parseAmount(text, 'USD', param), 'USD', param);
  }
  if (thresholds[DEFAULT_JURISDICTION] === undefined) {
    throw validationError(
      `thresholds.${DEFAULT_JURISDICTION}`,
      `thresholds.${DEFAULT_JURISDICTION} is required: the threshold where no country's applies`,
      'missing',
    );
  }
  const rates: Partial<Record<Currency, UsdRate>> = {};
  for (const [currency, text] of Object.entries(input.rates)) {
    const param = `rates.${currency}`;
    if (!isCurrency(currency)) {
      throw validationError(param, `${param}: ${currency} is not a supported currency`, 'invalid_key');
    }
    rates[currency] = parseRate(text, param);
  }
  for (const currency of requiredRates) {
    if (rates[currency] === undefined) {
      throw validationError(
        `rates.${currency}`,
        `rates.${currency} is required: digital-asset transfers in ${currency} are converted with it`,
        'missing',
      );
    }
  }
  return { thresholdsUsdMinor: thresholds, rates };
}

/** Settings as the API shows them and evidence records them. */
export function presentTravelRuleSettings(settings: TravelRuleSettings) {
  const sortedEntries = <T>(record: Readonly<Record<string, T>>) =>
    Object.entries(record).sort(([a], [b]) =>
      a === DEFAULT_JURISDICTION ? -1 : b === DEFAULT_JURISDICTION ? 1 : a < b ? -1 : a > b ? 1 : 0,
    );
  return {
    thresholds: Object.fromEntries(
      sortedEntries(settings.thresholdsUsdMinor).map(([k, v]) => [k, formatAmount(v, 'USD')]),
    ),
    rates: Object.fromEntries(
      sortedEntries(settings.rates as Record<string, UsdRate>).map(([k, v]) => [k, formatRate(v)]),
    ),
  };
}

export interface TravelRuleFacts {
  amountMinor: bigint;
  currency: Currency;
  /** The originating customer's country (ISO 3166-1 alpha-2), when known. */
  country: string | null;
}

export interface TravelRuleDecision {
  required: boolean;
  /** The country whose threshold applied, or `default`. */
  jurisdiction: string;
  /** The threshold that applied, USD decimal string. */
  threshold: string;
  /** The amount in USD, exact (as many decimals as it takes, at least two); null without a rate. */
  amountUsd: string | null;
  /** The rate used, or null when the currency has none (then the data is required). */
  rate: string | null;
}

/**
 * Required when amount × rate ≥ threshold, compared in integers: amount_minor × numerator × 10^2 against
 * threshold_cents × 10^(exponent + scale). A currency without a rate cannot be shown to be under the
 * threshold, so the data is required.
 */
export function decideTravelRule(facts: TravelRuleFacts, settings: TravelRuleSettings): TravelRuleDecision {
  const own = facts.country === null ? undefined : settings.thresholdsUsdMinor[facts.country];
  const jurisdiction = own === undefined ? DEFAULT_JURISDICTION : (facts.country as string);
  const thresholdMinor =
    own ?? settings.thresholdsUsdMinor[DEFAULT_JURISDICTION] ?? DEFAULT_THRESHOLD_USD_MINOR;
  const threshold = formatAmount(thresholdMinor, 'USD');
  const rate = settings.rates[facts.currency];
  if (!rate) return { required: true, jurisdiction, threshold, amountUsd: null, rate: null };
  const scale = exponentOf(facts.currency) + rate.scale;
  const usdScaled = facts.amountMinor * rate.numerator;
  const usdExponent = BigInt(exponentOf('USD'));
  const required = usdScaled * 10n ** usdExponent >= thresholdMinor * 10n ** BigInt(scale);
  return {
    required,
    jurisdiction,
    threshold,
    amountUsd: formatDecimal(usdScaled, scale, Number(usdExponent)),
    rate: formatRate(rate),
  };
}

/** The Travel Rule data as a request gives it (shapes checked by the HTTP schema). */
export interface TravelRuleInput {
  originator?: {
    name?: string;
    account?: string;
    address?: string;
    national_id?: string;
    date_of_birth?: string;
  };
  beneficiary?: { name?: string; account?: string; institution?: string };
}

/** Complete Travel Rule data, as stored in evidence. */
export interface TravelRuleData {
  originator: {
    name: string;
    account: string;
    address: string | null;
    national_id: string | null;
    date_of_birth: string | null;
  };
  beneficiary: { name: string; account: string; institution: string | null };
}

const ORIGINATOR_IDENTIFIERS = ['address', 'national_id', 'date_of_birth'] as const;
const NATIONAL_ID = new RegExp(ID_NUMBER_PATTERN);

/**
 * Checks Travel Rule data and returns every field that is missing or malformed (in the order of the
 * request's fields), with the data completed when there are none: the beneficiary's account defaults to
 * the destination address. Names and accounts are trimmed; an empty one is missing.
 */
export function checkTravelRuleData(
  input: TravelRuleInput | undefined,
  context: { destinationAddress: string; today: Date },
): { errors: FieldError[]; data?: TravelRuleData } {
  const errors: FieldError[] = [];
  const originator = checkOriginator(input?.originator ?? {}, errors, context.today);
  const beneficiary = checkBeneficiary(input?.beneficiary ?? {}, errors, context.destinationAddress);
  if (errors.length > 0) return { errors };
  return {
    errors,
    data: {
      originator: { ...originator, name: originator.name as string, account: originator.account as string },
      beneficiary: {
        ...beneficiary,
        name: beneficiary.name as string,
        account: beneficiary.account as string,
      },
    },
  };
}

/**
 * The reader of one party's text fields (`prefix` names the party): a field trimmed; null when empty (an
 * error if required) or too long (an error).
 */
function partyText<F extends string>(
  errors: FieldError[],
  party: Partial<Record<F, string>>,
  prefix: string,
): (field: F, lengthMax: number, required: boolean) => string | null {
  return (field, lengthMax, required) => {
    const param = `${prefix}.${field}`;
    const trimmed = party[field]?.trim() ?? '';
    if (trimmed === '') {
      if (required) errors.push({ param, code: 'missing', message: `${param} is required` });
      return null;
    }
    if (trimmed.length > lengthMax) {
      errors.push({ param, code: 'too_long', message: `${param} must be at most ${lengthMax} characters` });
      return null;
    }
    return trimmed;
  };
}

/** The originator's fields, noting each fault, and that at least one identifier is given. */
function checkOriginator(
  o: NonNullable<TravelRuleInput['originator']>,
  errors: FieldError[],
  today: Date,
): Record<keyof TravelRuleData['originator'], string | null> {
  const text = partyText(errors, o, 'travel_rule.originator');
  const originator = {
    name: text('name', TRAVEL_RULE_NAME_LENGTH_MAX, true),
    account: text('account', TRAVEL_RULE_ACCOUNT_LENGTH_MAX, true),
    address: text('address', TRAVEL_RULE_ADDRESS_LENGTH_MAX, false),
    national_id: text('national_id', 32, false),
    date_of_birth: text('date_of_birth', 32, false),
  };
  if (originator.national_id !== null && !NATIONAL_ID.test(originator.national_id)) {
    errors.push({
      param: 'travel_rule.originator.national_id',
      code: 'invalid_format',
      message: 'travel_rule.originator.national_id must be 4-32 letters, digits or dashes',
    });
  }
  if (originator.date_of_birth !== null) {
    try {
      checkDateOfBirth(originator.date_of_birth, 'travel_rule.originator.date_of_birth', today);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      errors.push(...error.errors);
    }
  }
  const given = (field: (typeof ORIGINATOR_IDENTIFIERS)[number]) => (o[field]?.trim() ?? '') !== '';
  if (!ORIGINATOR_IDENTIFIERS.some(given)) {
    errors.push({
      param: 'travel_rule.originator',
      code: 'missing',
      message: 'travel_rule.originator needs at least one of address, national_id or date_of_birth',
    });
  }
  return originator;
}

/** The beneficiary's fields, noting each fault; an account not given is the destination address. */
function checkBeneficiary(
  b: NonNullable<TravelRuleInput['beneficiary']>,
  errors: FieldError[],
  destinationAddress: string,
): Record<keyof TravelRuleData['beneficiary'], string | null> {
  const text = partyText(errors, b, 'travel_rule.beneficiary');
  return {
    name: text('name', TRAVEL_RULE_NAME_LENGTH_MAX, true),
    account:
      b.account === undefined ? destinationAddress : text('account', TRAVEL_RULE_ACCOUNT_LENGTH_MAX, true),
    institution: text('institution', TRAVEL_RULE_NAME_LENGTH_MAX, false),
  };
}

/**
 * The refusal of a transfer whose Travel Rule data is required and missing or malformed: a 422 naming the
 * first field, with every field in `errors`.
 */
export function travelRuleRequired(errors: FieldError[], decision: TravelRuleDecision): AppError {
  return new AppError({
    status: 422,
    code: 'travel_rule_required',
    title: 'Travel Rule data required',
    detail: `Digital-asset transfers of ${decision.threshold} USD or more (jurisdiction ${decision.jurisdiction}) need travel_rule data: ${errors.map((e) => e.message).join('; ')}.`,
    param: errors[0]?.param,
    errors,
  });
}

/**
 * The 400 for Travel Rule data given but not usable where it is not required (or on a held deposit), naming
 * each field at fault.
 */
export function travelRuleDataInvalid(errors: FieldError[]): AppError {
  return new AppError({
    status: 400,
    code: 'validation_error',
    title: 'Invalid request',
    detail: `travel_rule is incomplete or malformed: ${errors.map((e) => e.message).join('; ')}.`,
    param: errors[0]?.param,
    errors,
  });
}
