/**
 * Rates as exact decimals (a scaled integer: numerator / 10^scale), parsed from and written as decimal
 * strings: the USD rates of the Travel Rule and the conversion rates between currencies.
 */
import { validationError } from './errors.ts';

/** Digits a rate may have after the decimal point, and before it. */
export const RATE_FRACTION_DIGITS_MAX = 12;
export const RATE_INTEGER_DIGITS_MAX = 9;

/** A rate as an exact decimal: numerator / 10^scale. */
export interface ExactRate {
  numerator: bigint;
  scale: number;
}

/** A rate's wire form: a positive decimal string within the digit bounds (JSON Schema's `pattern` too). */
export const RATE_PATTERN_SOURCE = `^[0-9]{1,${RATE_INTEGER_DIGITS_MAX}}(\\.[0-9]{1,${RATE_FRACTION_DIGITS_MAX}})?$`;
const RATE_PATTERN = new RegExp(RATE_PATTERN_SOURCE);

/** Parses "0.0077" into 77 / 10^4; a 400 naming `param` unless it is a positive decimal within bounds. */
export function parseRate(text: string, param: string): ExactRate {
  if (!RATE_PATTERN.test(text)) {
    throw validationError(
      param,
      `${param} must be a decimal string with at most ${RATE_INTEGER_DIGITS_MAX} digits before the point and ${RATE_FRACTION_DIGITS_MAX} after it, e.g. "0.0077"`,
      'invalid_format',
    );
  }
  const [whole = '', fraction = ''] = text.split('.');
  const trimmed = fraction.replace(/0+$/, '');
  const rate = { numerator: BigInt(`${whole}${trimmed}`), scale: trimmed.length };
  if (rate.numerator === 0n)
    throw validationError(param, `${param} must be greater than zero`, 'not_positive');
  return rate;
}

/** An exact decimal numerator / 10^scale, with at least `minFraction` and otherwise no trailing zeros. */
export function formatDecimal(numerator: bigint, scale: number, minFraction = 0): string {
  const digits = numerator.toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  let fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  fraction = fraction.padEnd(minFraction, '0');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

export function formatRate(rate: ExactRate): string {
  return formatDecimal(rate.numerator, rate.scale);
}
