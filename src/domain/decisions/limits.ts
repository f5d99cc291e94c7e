/**
 * Tiers and their limits, pure. A customer's tier follows from its KYC status and type; each tier caps a
 * single transfer and the sums a customer sends per UTC day and per UTC month, per currency, across all its
 * wallets. Amounts are in minor units.
 */

import type { Currency } from '../money.ts';
import { exponentOf, formatAmount } from '../money.ts';

export const TIERS = [0, 1, 2] as const;
export type Tier = (typeof TIERS)[number];

/** Tier 0: not verified (unverified, pending, rejected, documents required); 1: verified individual; 2: verified business. */
export function tierOf(kycStatus: string, customerType: string): Tier {
  if (kycStatus !== 'verified') return 0;
  return customerType === 'business' ? 2 : 1;
}

export const LIMIT_KINDS = ['single', 'daily_sum', 'monthly_sum'] as const;
export type LimitKind = (typeof LIMIT_KINDS)[number];

export interface TierLimitsMinor {
  singleMinor: bigint;
  dailySumMinor: bigint;
  monthlySumMinor: bigint;
}

/**
 * Per tier, per currency, in minor units. KES follows the tiers of East African mobile-money wallets;
 * the others are about the same value. A stablecoin counts against its peg's row (LIMIT_PEGS); any other
 * currency without a row is refused (`limit_not_configured`), never unlimited.
 */
export const TIER_LIMITS_MINOR: Record<Tier, Partial<Record<Currency, TierLimitsMinor>>> = {
  0: {
    KES: { singleMinor: 7_000_000n, dailySumMinor: 15_000_000n, monthlySumMinor: 30_000_000n }, // 70,000 / 150,000 / 300,000
    UGX: { singleMinor: 2_000_000n, dailySumMinor: 4_000_000n, monthlySumMinor: 8_000_000n },
    TZS: { singleMinor: 150_000_000n, dailySumMinor: 300_000_000n, monthlySumMinor: 600_000_000n },
    USD: { singleMinor: 50_000n, dailySumMinor: 100_000n, monthlySumMinor: 200_000n }, // 500 / 1,000 / 2,000
  },
  1: {
    KES: { singleMinor: 25_000_000n, dailySumMinor: 50_000_000n, monthlySumMinor: 300_000_000n }, // 250,000 / 500,000 / 3,000,000
    UGX: { singleMinor: 7_000_000n, dailySumMinor: 14_000_000n, monthlySumMinor: 80_000_000n },
    TZS: { singleMinor: 500_000_000n, dailySumMinor: 1_000_000_000n, monthlySumMinor: 6_000_000_000n },
    USD: { singleMinor: 200_000n, dailySumMinor: 400_000n, monthlySumMinor: 2_500_000n },
  },
  2: {
    KES: { singleMinor: 1_000_000_000n, dailySumMinor: 5_000_000_000n, monthlySumMinor: 50_000_000_000n }, // 10 M / 50 M / 500 M
    UGX: { singleMinor: 300_000_000n, dailySumMinor: 1_500_000_000n, monthlySumMinor: 15_000_000_000n },
    TZS: {
      singleMinor: 20_000_000_000n,
      dailySumMinor: 100_000_000_000n,
      monthlySumMinor: 1_000_000_000_000n,
    },
    USD: { singleMinor: 10_000_000n, dailySumMinor: 50_000_000n, monthlySumMinor: 500_000_000n },
  },
};

/**
 * Currencies without a row of their own that count against another currency's limits one to one: USDC and
 * USDT against USD. Their amounts are converted exactly between the two precisions (1 USD minor unit, a
 * cent, is 10^4 USDC minor units), rounded UP to the peg's minor unit, so splitting an amount into dust
 * never counts less than the whole.
 */
export const LIMIT_PEGS: Readonly<Partial<Record<Currency, Currency>>> = { USDC: 'USD', USDT: 'USD' };

/** The currency and amount a movement counts as against the tier limits. */
export interface LimitBasis {
  currency: Currency;
  amountMinor: bigint;
}

/**
 * What an amount counts as against the tier limits: itself in a currency with its own limits; its peg's
 * equivalent, rounded up to the peg's minor unit, for a stablecoin; undefined for a currency with neither
 * (the movement is refused, not unlimited).
 */
export function limitBasisOf(currency: Currency, amountMinor: bigint): LimitBasis | undefined {
  if (TIER_LIMITS_MINOR[0][currency]) return { currency, amountMinor };
  const peg = LIMIT_PEGS[currency];
  if (!peg || !TIER_LIMITS_MINOR[0][peg]) return undefined;
  const shift = exponentOf(currency) - exponentOf(peg);
  if (shift <= 0) return { currency: peg, amountMinor: amountMinor * 10n ** BigInt(-shift) };
  const unit = 10n ** BigInt(shift);
  return { currency: peg, amountMinor: (amountMinor + unit - 1n) / unit };
}

/** What a customer already sent in the transfer's day and month (UTC), in the transfer's currency. */
export interface LimitUsage {
  dayMinor: bigint;
  monthMinor: bigint;
}

export interface LimitRefusal {
  limit: LimitKind;
  tier: Tier;
  limitMinor: bigint;
  /** What may still be sent under that limit (0 when spent). */
  remainingMinor: bigint;
}

/** Whether the amount fits the tier's limits given what was sent; the first limit it breaks otherwise. */
export function decideLimits(
  tier: Tier,
  currency: Currency,
  amountMinor: bigint,
  usage: LimitUsage,
): LimitRefusal | undefined {
  const limits = TIER_LIMITS_MINOR[tier][currency];
  if (!limits) return undefined;
  if (amountMinor > limits.singleMinor) {
    return { limit: 'single', tier, limitMinor: limits.singleMinor, remainingMinor: limits.singleMinor };
  }
  // The day's sum before the month's: a refusal names the first limit broken in this order.
  const sums = [
    ['daily_sum', limits.dailySumMinor, usage.dayMinor],
    ['monthly_sum', limits.monthlySumMinor, usage.monthMinor],
  ] as const;
  for (const [limit, capMinor, usedMinor] of sums) {
    if (usedMinor + amountMinor > capMinor) {
      return {
        limit,
        tier,
        limitMinor: capMinor,
        remainingMinor: capMinor > usedMinor ? capMinor - usedMinor : 0n,
      };
    }
  }
  return undefined;
}

/** The UTC day and month a transfer counts in, as dates (YYYY-MM-DD). */
export function limitPeriods(at: Date): { day: string; month: string } {
  const day = at.toISOString().slice(0, 10);
  return { day, month: `${day.slice(0, 7)}-01` };
}

export function limitSentence(refusal: LimitRefusal, currency: Currency): string {
  const money = (minor: bigint) => `${formatAmount(minor, currency)} ${currency}`;
  const what =
    refusal.limit === 'single'
      ? `a single transfer of at most ${money(refusal.limitMinor)}`
      : `${money(refusal.limitMinor)} sent per ${refusal.limit === 'daily_sum' ? 'day' : 'month'} (UTC)`;
  return `Tier ${refusal.tier} allows ${what}; ${money(refusal.remainingMinor)} remains.`;
}
