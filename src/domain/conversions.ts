/**
 * Conversions between a fiat wallet and a stablecoin wallet (mint and redeem), pure: rates (exact rate
 * arithmetic and its rounding rule, the band a change or a quote is held to, round trips that would create
 * money), quotes and conversions. No I/O, no clock.
 */

import { type Currency, exponentOf } from './money.ts';
import { type ExactRate, formatRate, parseRate } from './rates.ts';

export const CONVERSION_EVENT_TYPES = ['conversion.completed'] as const;

/** How long a quote may be executed after it is given. */
export const CONVERSION_QUOTE_TTL_MS = 30_000;

/** mint: fiat → stablecoin; redeem: stablecoin → fiat. */
export const CONVERSION_DIRECTIONS = ['mint', 'redeem'] as const;
export type ConversionDirection = (typeof CONVERSION_DIRECTIONS)[number];

/** A rate: units of `to` for one unit of `from`, an exact decimal (numerator / 10^scale). */
export type ConversionRate = ExactRate;

export interface ConversionRateEntry {
  from: Currency;
  to: Currency;
  rate: string;
}

/**
 * The rates an organization starts with in the sandbox: USD one to one with both stablecoins, KES at the
 * Travel Rule's default 0.0077 with a spread the other way. Production starts with none: an operator sets
 * the rates its treasury stands behind.
 */
export const SANDBOX_DEFAULT_CONVERSION_RATES: readonly ConversionRateEntry[] = [
  { from: 'USD', to: 'USDC', rate: '1' },
  { from: 'USDC', to: 'USD', rate: '1' },
  { from: 'USD', to: 'USDT', rate: '1' },
  { from: 'USDT', to: 'USD', rate: '1' },
  { from: 'KES', to: 'USDC', rate: '0.0077' },
  { from: 'USDC', to: 'KES', rate: '128.5' },
  { from: 'KES', to: 'USDT', rate: '0.0077' },
  { from: 'USDT', to: 'KES', rate: '128.5' },
];

/** At most this many rates per organization. */
export const CONVERSION_RATES_MAX = 200;

export function parseConversionRate(text: string, param: string): ConversionRate {
  return parseRate(text, param);
}

/**
 * The amount credited for `fromMinor` at `rate`, in `to`'s minor units, rounded DOWN (toward zero) to the
 * minor unit: to = floor(from_minor × numerator × 10^(exp_to) / (10^scale × 10^(exp_from))). Exact in
 * integers; never rounds in the customer's favour, so the treasury never pays out more than the rate says.
 */
export function convertAmount(fromMinor: bigint, from: Currency, to: Currency, rate: ConversionRate): bigint {
  const numerator = fromMinor * rate.numerator * 10n ** BigInt(exponentOf(to));
  const denominator = 10n ** BigInt(rate.scale + exponentOf(from));
  return numerator / denominator;
}

/** Basis points: 10,000 is 100 %. */
export const BASIS_POINTS_PER_UNIT = 10_000n;
/**
 * How far, in basis points of the rate in force, a conversion rate may move without a second member's
 * approval; and how far a quote's output may stand from what the rate in force gives when it is executed.
 */
export const CONVERSION_RATE_BAND_BPS_DEFAULT = 500;
/** The widest band a deployment may configure (MKOBA_CONVERSION_RATE_BAND_BPS): 100 %. */
export const CONVERSION_RATE_BAND_BPS_MAX = 10_000;

/**
 * Whether `value` is within `bandBps` basis points of `reference` (both > 0 or the reference 0), exact:
 * |value − reference| × 10,000 ≤ reference × band. Decimals are compared over a common denominator.
 */
function withinBand(
  value: { numerator: bigint; scale: number },
  reference: { numerator: bigint; scale: number },
  bandBps: number,
): boolean {
  // value = v / 10^vs, reference = r / 10^rs: compare v × 10^rs with r × 10^vs.
  const v = value.numerator * 10n ** BigInt(reference.scale);
  const r = reference.numerator * 10n ** BigInt(value.scale);
  const distance = v > r ? v - r : r - v;
  return distance * BASIS_POINTS_PER_UNIT <= r * BigInt(bandBps);
}

/** Whether an amount is within the band of a reference amount (same currency, minor units). */
export function amountWithinBand(amountMinor: bigint, referenceMinor: bigint, bandBps: number): boolean {
  return withinBand({ numerator: amountMinor, scale: 0 }, { numerator: referenceMinor, scale: 0 }, bandBps);
}

/**
 * What a change of one pair's rate needs: `unchanged` and `within_band` apply at once; `no_previous_rate`
 * (the pair's first rate: nothing to bound it) and `outside_band` need a second member's approval.
 */
export type RateChangeReason = 'unchanged' | 'within_band' | 'outside_band' | 'no_previous_rate';

export interface RateChangeDecision {
  from: Currency;
  to: Currency;
  previous: string | null;
  next: string;
  reason: RateChangeReason;
  needsApproval: boolean;
}

/** Decides one pair's change against the rate in force (undefined: the pair has none). Pure and exact. */
export function decideRateChange(
  pair: { from: Currency; to: Currency },
  previous: ConversionRate | undefined,
  next: ConversionRate,
  bandBps: number,
): RateChangeDecision {
  const base = { from: pair.from, to: pair.to, next: formatRate(next) };
  if (!previous) return { ...base, previous: null, reason: 'no_previous_rate', needsApproval: true };
  const previousText = formatRate(previous);
  if (previousText === base.next) {
    return { ...base, previous: previousText, reason: 'unchanged', needsApproval: false };
  }
  const inBand = withinBand(next, previous, bandBps);
  return {
    ...base,
    previous: previousText,
    reason: inBand ? 'within_band' : 'outside_band',
    needsApproval: !inBand,
  };
}

/**
 * The first pair of a rate table whose round trip gains: converting one way and back at rate(A→B) ×
 * rate(B→A) > 1 would return more than was sent, so repeated round trips would create money (each leg
 * inside the band or not). Exact: the numerators' product against 10^(sum of scales). Undefined when every
 * pair with its reverse in the table loses or breaks even (the spread is the treasury's).
 */
export function roundTripGain(
  rates: readonly { from: Currency; to: Currency; rate: ConversionRate }[],
): { index: number; from: Currency; to: Currency } | undefined {
  const byPair = new Map(rates.map((r) => [`${r.from}/${r.to}`, r.rate]));
  for (const [index, r] of rates.entries()) {
    const back = byPair.get(`${r.to}/${r.from}`);
    if (!back) continue;
    if (r.rate.numerator * back.numerator > 10n ** BigInt(r.rate.scale + back.scale)) {
      return { index, from: r.from, to: r.to };
    }
  }
  return undefined;
}

/**
 * Of a change's decisions, those that must wait for a second member's approval: every change outside the
 * band, and every pair's first rate, except in the sandbox a pair that never had a rate (`hadRate` false),
 * so that the sandbox's seed and tests can set rates. Pure: the caller says which environment it is and
 * which pairs had a rate before.
 */
export function rateChangesRequiringApproval(
  decisions: readonly RateChangeDecision[],
  context: { sandbox: boolean; hadRate: (pair: { from: Currency; to: Currency }) => boolean },
): RateChangeDecision[] {
  return decisions.filter(
    (d) => d.needsApproval && !(d.reason === 'no_previous_rate' && context.sandbox && !context.hadRate(d)),
  );
}

export function conversionDirection(
  from: Currency,
  to: Currency,
  isAsset: (c: Currency) => boolean,
): ConversionDirection | undefined {
  if (!isAsset(from) && isAsset(to)) return 'mint';
  if (isAsset(from) && !isAsset(to)) return 'redeem';
  return undefined;
}

export const CONVERSION_QUOTE_STATUSES = ['open', 'executed'] as const;
export type ConversionQuoteStatus = (typeof CONVERSION_QUOTE_STATUSES)[number];

/** The terms a quote fixes and the conversion that executes it carries unchanged. */
export interface ConversionTerms {
  customerId: string;
  fromWalletId: string;
  toWalletId: string;
  direction: ConversionDirection;
  fromCurrency: Currency;
  toCurrency: Currency;
  fromAmountMinor: bigint;
  toAmountMinor: bigint;
  /** The rate as quoted, an exact decimal string. */
  rate: string;
  /** The rate version it was quoted at (null: quoted before rates had versions). */
  rateVersionId: string | null;
  /** In `from`'s minor units, paid on top of the amount; decided by the fee schedule when quoted. */
  feeMinor: bigint;
  /** The fee schedule version that decided the fee and its rule (null: none for conversions from the currency). */
  feeScheduleVersion: number | null;
  feeRule: string | null;
}

export interface ConversionQuote extends ConversionTerms {
  id: string;
  organizationId: string;
  status: ConversionQuoteStatus;
  conversionId: string | null;
  createdAt: Date;
  expiresAt: Date;
}

export interface Conversion extends ConversionTerms {
  id: string;
  organizationId: string;
  quoteId: string;
  /** The entry in `from`'s currency (wallet → conversion account) and the one in `to`'s. */
  debitEntryId: string;
  creditEntryId: string;
  createdBy: string | null;
  createdAt: Date;
}
