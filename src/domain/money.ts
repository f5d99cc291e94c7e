/**
 * Money is integer minor units (bigint) inside and a decimal string in major units on the wire.
 * No floating point takes part in any computation here.
 */
import { validationError } from './errors.ts';
import { exactDecimalOf } from './jsonNumbers.ts';

/** ISO 4217 minor-unit exponents, plus stablecoins at their on-chain precision. */
export const CURRENCY_EXPONENTS = {
  KES: 2,
  UGX: 0,
  TZS: 2,
  RWF: 0,
  NGN: 2,
  GHS: 2,
  ZAR: 2,
  XOF: 0,
  XAF: 0,
  ZMW: 2,
  MWK: 2,
  ETB: 2,
  EGP: 2,
  MAD: 2,
  USD: 2,
  EUR: 2,
  GBP: 2,
  USDC: 6,
  USDT: 6,
} as const;

export type Currency = keyof typeof CURRENCY_EXPONENTS;
export const SUPPORTED_CURRENCIES = Object.keys(CURRENCY_EXPONENTS) as Currency[];

/** The largest amount we accept in minor units: PostgreSQL BIGINT's maximum. */
export const AMOUNT_MINOR_MAX = 9_223_372_036_854_775_807n;

/** The largest single movement in major units of any currency: one trillion. */
export const SINGLE_AMOUNT_MAJOR_MAX = 1_000_000_000_000n;
/**
 * And never more than this many minor units (a billion of the 6-decimal stablecoins), so that an account
 * takes thousands of the largest movements before its running sums near BIGINT (which the posting module
 * refuses cleanly anyway).
 */
export const SINGLE_AMOUNT_MINOR_CEILING = 1_000_000_000_000_000n;

export function isCurrency(value: string): value is Currency {
  return Object.hasOwn(CURRENCY_EXPONENTS, value);
}

/** `raw` when it is a supported currency's code; else 400 `invalid_value` on `param`. */
export function requireCurrency(raw: unknown, param: string): Currency {
  if (typeof raw !== 'string' || !isCurrency(raw)) {
    throw validationError(param, `${param} must be a supported ISO 4217 currency code`, 'invalid_value');
  }
  return raw;
}

export function exponentOf(currency: Currency): number {
  return CURRENCY_EXPONENTS[currency];
}

const DECIMAL_PATTERN = /^\d+(?:\.\d+)?$/;

/**
 * Parses a wire amount into minor units. A string must be a plain non-negative decimal. A JSON number
 * (the spec's form B) is read from `numberText`, its exact source text when the request parser kept it
 * (`numberSourceOf`), so exponent forms and digits beyond double precision follow the same rules as a
 * string: exact at the exponent or `too_precise`, at most BIGINT's maximum or `out_of_range`.
 */
export function parseAmount(
  value: unknown,
  currency: Currency,
  param = 'amount',
  numberText?: string,
): bigint {
  let text: string;
  if (typeof value === 'string') {
    text = value;
    if (text.startsWith('-')) throw validationError(param, 'Amount must be positive.', 'not_positive');
    if (!DECIMAL_PATTERN.test(text)) {
      throw validationError(param, `Amount '${text}' is not a decimal number.`, 'invalid_format');
    }
  } else if (typeof value === 'number') {
    if (numberText === undefined && !Number.isFinite(value)) {
      throw validationError(param, 'Amount must be a finite number.');
    }
    // Without the source text, JS prints the shortest round-tripping decimal (0.1 stays "0.1").
    text = numberText ?? String(value);
    if (text.startsWith('-')) throw validationError(param, 'Amount must be positive.', 'not_positive');
  } else {
    throw validationError(param, 'Amount must be a decimal string such as "1500.00".', 'invalid_type');
  }
  const exact = exactDecimalOf(text);
  if (!exact) throw validationError(param, `Amount '${text}' is not a decimal number.`, 'invalid_format');
  if (exact.digits === '') return 0n;
  const exponent = exponentOf(currency);
  // Minor units = digits × 10^shift; digits has no trailing zeros, so a negative shift means lost precision.
  const shift = exact.exponent + exponent;
  if (shift < 0) {
    throw validationError(
      param,
      `Amount has more than ${exponent} decimal places, the precision of ${currency}.`,
      'too_precise',
    );
  }
  const outOfRange = () => validationError(param, 'Amount is out of range.', 'out_of_range');
  if (exact.digits.length + shift > AMOUNT_MINOR_MAX.toString().length) throw outOfRange();
  const minor = BigInt(exact.digits) * 10n ** BigInt(shift);
  if (minor > AMOUNT_MINOR_MAX) throw outOfRange();
  return minor;
}

/** The largest single amount (a transfer, a funding) in a currency, in its minor units. */
export function singleAmountMinorMax(currency: Currency): bigint {
  const major = SINGLE_AMOUNT_MAJOR_MAX * 10n ** BigInt(exponentOf(currency));
  return major < SINGLE_AMOUNT_MINOR_CEILING ? major : SINGLE_AMOUNT_MINOR_CEILING;
}

/** Refuses a movement amount that is not positive or above the currency's single-amount cap. */
export function checkSingleAmount(minor: bigint, currency: Currency, param = 'amount'): bigint {
  if (minor <= 0n) throw validationError(param, 'amount must be greater than zero', 'not_positive');
  const max = singleAmountMinorMax(currency);
  if (minor > max) {
    throw validationError(
      param,
      `amount is above the largest single amount in ${currency}, ${formatAmount(max, currency)}`,
      'out_of_range',
    );
  }
  return minor;
}

/**
 * A plain decimal's exact minor units, read on the text: "1500.75" GHS → 150075n. Undefined for text that is
 * not a plain non-negative decimal, or has more decimals than the currency carries ("1.50" UGX).
 */
export function minorUnitsOfDecimal(text: string, currency: Currency): bigint | undefined {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return undefined;
  const exponent = exponentOf(currency);
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > exponent) return undefined;
  return BigInt(`${match[1]}${fraction.padEnd(exponent, '0')}`);
}

/** Renders minor units at the currency's exact exponent: 150000n KES → "1500.00". */
export function formatAmount(minor: bigint, currency: Currency): string {
  const exponent = exponentOf(currency);
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = digits.slice(digits.length - exponent);
  return `${negative ? '-' : ''}${whole}${exponent > 0 ? `.${fraction}` : ''}`;
}
