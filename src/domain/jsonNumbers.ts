/**
 * JSON numbers as the client wrote them. A double cannot hold every decimal (12345678901234567 reads as
 * …568, 0.0000001 prints as 1e-7), so the request parser hands handlers plain numbers and keeps each one's
 * source text here, keyed weakly by the object or array that holds it; money and fingerprints read the text.
 */

const sources = new WeakMap<object, Map<string, string>>();

/** Called by the request parser for every number it reads. */
export function recordNumberSource(container: object, key: string, text: string): void {
  let byKey = sources.get(container);
  if (!byKey) {
    byKey = new Map();
    sources.set(container, byKey);
  }
  byKey.set(key, text);
}

/**
 * The exact text of the JSON number at `container[key]`, or undefined when it was not parsed from a
 * request (a default, a value built in code) or has since been replaced by another number.
 */
export function numberSourceOf(container: unknown, key: string | number): string | undefined {
  if (container === null || typeof container !== 'object') return undefined;
  const text = sources.get(container)?.get(String(key));
  const current = (container as Record<string, unknown>)[String(key)];
  return text !== undefined && typeof current === 'number' && Object.is(Number(text), current)
    ? text
    : undefined;
}

/**
 * A decimal's exact value: (-1)^negative × digits × 10^exponent. `digits` has no leading or trailing
 * zeros ('' for zero, whose exponent is 0). An exponent written with more than 15 digits (no field holds
 * such a number, and a double stops counting exactly near there) is kept as ±Infinity.
 */
export interface ExactDecimal {
  negative: boolean;
  digits: string;
  exponent: number;
}

const JSON_NUMBER_PATTERN = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?)(\d+))?$/;
const EXPONENT_DIGITS_EXACT_MAX = 15;

/** Reads a JSON number's text (also a plain decimal such as "007.50") exactly, or undefined if it is not one. */
export function exactDecimalOf(text: string): ExactDecimal | undefined {
  const match = JSON_NUMBER_PATTERN.exec(text);
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', exponentSign = '', exponentText = ''] = match;
  const all = `${whole}${fraction}`;
  const significant = all.replace(/^0+/, '');
  const digits = significant.replace(/0+$/, '');
  if (digits === '') return { negative: sign === '-', digits: '', exponent: 0 };
  const trailingZeros = significant.length - digits.length;
  const exponentDigits = exponentText.replace(/^0+/, '');
  let written: number;
  if (exponentDigits.length > EXPONENT_DIGITS_EXACT_MAX) {
    written = exponentSign === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  } else {
    written = (exponentSign === '-' ? -1 : 1) * Number(exponentDigits || '0');
  }
  return { negative: sign === '-', digits, exponent: written - fraction.length + trailingZeros };
}

/**
 * The spelling of a JSON number that request fingerprints use: one per value, so 1.5, 1.50 and 15e-1 are
 * the same request, and never rounded, so numbers that differ beyond double precision are not. A number a
 * double holds exactly keeps JavaScript's shortest form (what JSON.stringify writes, so such fingerprints
 * are unchanged); any other is written as digits and exponent, or as sent when its exponent has over 15 digits.
 */
export function canonicalNumberText(text: string): string {
  const exact = exactDecimalOf(text);
  if (!exact) return text;
  if (exact.digits === '') return '0';
  const double = Number(text);
  if (Number.isFinite(double) && double !== 0) {
    const shortest = String(double);
    const read = exactDecimalOf(shortest);
    if (
      read &&
      read.negative === exact.negative &&
      read.digits === exact.digits &&
      read.exponent === exact.exponent
    ) {
      return shortest;
    }
  }
  if (!Number.isFinite(exact.exponent)) return text;
  return `${exact.negative ? '-' : ''}${exact.digits}e${exact.exponent}`;
}
