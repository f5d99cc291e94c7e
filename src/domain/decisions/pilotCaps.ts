/**
 * Pilot volume caps, pure. A pilot deployment (MKOBA_ENV=pilot) behaves as production, but each organization
 * may create at most so many transfers, and send at most so much, per currency per UTC day. A currency with
 * no amount cap carries nothing in a pilot. Amounts are in minor units.
 */
import { type Currency, formatAmount } from '../money.ts';

export const PILOT_CAPS = ['daily_transfer_count', 'daily_amount'] as const;
export type PilotCapName = (typeof PILOT_CAPS)[number];

export interface PilotCaps {
  /** Transfers one organization may create per currency per UTC day. */
  transfersPerDayMax: number;
  /** What one organization may send per currency per UTC day, in minor units; absent: nothing. */
  amountPerDayMaxMinor: Partial<Record<Currency, bigint>>;
}

/** What an organization created in a currency on the transfer's UTC day. */
export interface PilotUsage {
  transferCount: number;
  sentMinor: bigint;
}

export interface PilotCapRefusal {
  cap: PilotCapName;
  /** The cap: transfers for the count, minor units for the amount. */
  limit: bigint;
  /** What the day still allows under it. */
  remaining: bigint;
}

/** Whether one more transfer of this amount fits the day's caps; the cap it breaks otherwise (count first). */
export function decidePilotCap(
  caps: PilotCaps,
  currency: Currency,
  amountMinor: bigint,
  usage: PilotUsage,
): PilotCapRefusal | undefined {
  const countMax = BigInt(caps.transfersPerDayMax);
  const count = BigInt(usage.transferCount);
  if (count + 1n > countMax) {
    return {
      cap: 'daily_transfer_count',
      limit: countMax,
      remaining: countMax > count ? countMax - count : 0n,
    };
  }
  const amountMax = caps.amountPerDayMaxMinor[currency] ?? 0n;
  if (usage.sentMinor + amountMinor > amountMax) {
    return {
      cap: 'daily_amount',
      limit: amountMax,
      remaining: amountMax > usage.sentMinor ? amountMax - usage.sentMinor : 0n,
    };
  }
  return undefined;
}

/** The refusal in words, with what remains in the cap's unit. */
export function pilotCapSentence(refusal: PilotCapRefusal, currency: Currency): string {
  if (refusal.cap === 'daily_transfer_count') {
    return `The pilot allows ${refusal.limit} ${currency} transfers per organization per UTC day; ${refusal.remaining} remain.`;
  }
  if (refusal.limit === 0n) {
    return `The pilot has no amount cap for ${currency}, so it carries no ${currency} transfers (MKOBA_PILOT_AMOUNT_PER_DAY_MAX).`;
  }
  return `The pilot allows ${formatAmount(refusal.limit, currency)} ${currency} sent per organization per UTC day; ${formatAmount(refusal.remaining, currency)} ${currency} remains.`;
}

/** What remains, on the wire: a count of transfers, or a decimal amount in the currency. */
export function pilotCapRemaining(refusal: PilotCapRefusal, currency: Currency): string {
  return refusal.cap === 'daily_transfer_count'
    ? refusal.remaining.toString()
    : formatAmount(refusal.remaining, currency);
}
