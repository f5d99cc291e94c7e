/**
 * Transfer vocabulary and the one transition function every status change goes through.
 * `pending` extends the design's machine: accepted and funds held, not yet handed to the rail (cancelable).
 */
import type { CryptoAddressDestination } from './digitalAssets.ts';
import { AppError, invalidStateTransition } from './errors.ts';
import { type Currency, formatAmount, singleAmountMinorMax } from './money.ts';

export const TRANSFER_STATUSES = [
  'pending_approval',
  'in_review',
  'pending',
  'processing',
  'settled',
  'failed',
  'rejected',
  'expired',
  'canceled',
  'returned',
] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

export const TRANSFER_TRANSITIONS: Record<TransferStatus, readonly TransferStatus[]> = {
  pending_approval: ['pending', 'processing', 'rejected', 'expired', 'canceled', 'failed'],
  in_review: ['pending', 'processing', 'rejected', 'pending_approval', 'failed'],
  pending: ['processing', 'settled', 'failed', 'canceled'],
  processing: ['settled', 'failed'],
  settled: ['returned'],
  failed: [],
  rejected: [],
  expired: [],
  canceled: [],
  returned: [],
};

export function isTerminal(status: TransferStatus): boolean {
  return TRANSFER_TRANSITIONS[status].length === 0;
}

export function canTransition(from: TransferStatus, to: TransferStatus): boolean {
  return TRANSFER_TRANSITIONS[from].includes(to);
}

/**
 * Which waiting movement a status change releases, if it moves money that waited: out of an approval or a
 * review, a payout handed to its rail, a pending transfer settled. Such a change passes the posting
 * module's release gate first (src/modules/ledger/domain/posting.ts, `decideRelease`); one that no longer passes fails.
 */
export function releasedMovement(
  from: TransferStatus,
  to: TransferStatus,
): 'transfer_approval' | 'transfer_review' | 'transfer_rail_handoff' | 'transfer_settlement' | undefined {
  const moving = to === 'pending' || to === 'processing' || to === 'settled';
  if (!moving) return undefined;
  if (from === 'pending_approval') return 'transfer_approval';
  if (from === 'in_review') return 'transfer_review';
  if (from === 'pending') return to === 'processing' ? 'transfer_rail_handoff' : 'transfer_settlement';
  return undefined;
}

/** Returns the new status or throws 409 invalid_state_transition; the store writes only what this returns. */
export function transition(from: TransferStatus, to: TransferStatus): TransferStatus {
  if (!canTransition(from, to)) {
    throw invalidStateTransition('Invalid state transition', `A ${from} transfer cannot become ${to}.`);
  }
  return to;
}

export const LEDGER_STATES = ['pending', 'posted', 'matched', 'exception', 'voided'] as const;
export type LedgerState = (typeof LEDGER_STATES)[number];

export const RAILS = [
  'mobile_money',
  'bank',
  'paybill',
  'till',
  'card',
  'internal',
  'digital_asset',
] as const;
export type Rail = (typeof RAILS)[number];

export const DESTINATION_TYPES = [
  'mobile_money',
  'bank_account',
  'paybill',
  'till',
  'card',
  'wallet',
  'crypto_address',
] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

export const RAIL_OF_DESTINATION: Record<DestinationType, Rail> = {
  mobile_money: 'mobile_money',
  bank_account: 'bank',
  paybill: 'paybill',
  till: 'till',
  card: 'card',
  wallet: 'internal',
  crypto_address: 'digital_asset',
};

/** Mobile-money networks and the country calling codes their numbers may carry. */
export const MOBILE_NETWORK_COUNTRY_CODES = {
  mpesa: ['254', '255'],
  airtel: ['254', '255', '256', '250'],
  mtn: ['256', '250', '233', '234', '27'],
  tigo: ['255'],
  vodacom: ['255', '27'],
} as const;
export type MobileNetwork = keyof typeof MOBILE_NETWORK_COUNTRY_CODES;
export const MOBILE_NETWORKS = Object.keys(MOBILE_NETWORK_COUNTRY_CODES) as MobileNetwork[];

export function phoneMatchesNetwork(phone: string, network: MobileNetwork): boolean {
  return MOBILE_NETWORK_COUNTRY_CODES[network].some((code) => phone.startsWith(`+${code}`));
}

/**
 * Per-rail amount bounds in major units of each currency's minor unit: expressed in minor units per
 * currency, since one number cannot fit KES and UGX alike. Missing currency means the rail does not
 * carry it.
 */
export const RAIL_AMOUNT_BOUNDS_MINOR: Record<
  Rail,
  Partial<Record<Currency, { min: bigint; max: bigint }>>
> = {
  mobile_money: {
    KES: { min: 1_00n, max: 250_000_00n },
    UGX: { min: 500n, max: 5_000_000n },
    TZS: { min: 100_00n, max: 5_000_000_00n },
    RWF: { min: 100n, max: 2_000_000n },
    GHS: { min: 1_00n, max: 20_000_00n },
    NGN: { min: 50_00n, max: 5_000_000_00n },
    ZAR: { min: 5_00n, max: 25_000_00n },
  },
  bank: {
    KES: { min: 100_00n, max: 999_999_999_00n },
    UGX: { min: 10_000n, max: 999_999_999_999n },
    TZS: { min: 1_000_00n, max: 999_999_999_00n },
    NGN: { min: 100_00n, max: 999_999_999_00n },
    GHS: { min: 1_00n, max: 999_999_999_00n },
    ZAR: { min: 1_00n, max: 999_999_999_00n },
    USD: { min: 1_00n, max: 10_000_000_00n },
    EUR: { min: 1_00n, max: 10_000_000_00n },
    GBP: { min: 1_00n, max: 10_000_000_00n },
  },
  paybill: { KES: { min: 1_00n, max: 999_999_00n } },
  till: { KES: { min: 1_00n, max: 250_000_00n } },
  card: {
    KES: { min: 10_00n, max: 1_000_000_00n },
    USD: { min: 1_00n, max: 100_000_00n },
    EUR: { min: 1_00n, max: 100_000_00n },
    GBP: { min: 1_00n, max: 100_000_00n },
  },
  internal: {},
  digital_asset: {
    USDC: { min: 1_000000n, max: 10_000_000_000000n },
    USDT: { min: 1_000000n, max: 10_000_000_000000n },
  },
};

/** The internal rail moves any currency, up to the currency's single-amount cap. */
export function railBounds(rail: Rail, currency: Currency): { min: bigint; max: bigint } | undefined {
  if (rail === 'internal') return { min: 1n, max: singleAmountMinorMax(currency) };
  return RAIL_AMOUNT_BOUNDS_MINOR[rail][currency];
}

/** What a rail moves, as a bounds sentence names it. */
const RAIL_MOVEMENT_NAMES: Record<Rail, string> = {
  mobile_money: 'mobile-money payouts',
  bank: 'bank payouts',
  paybill: 'paybill payments',
  till: 'till payments',
  card: 'card payouts',
  internal: 'wallet-to-wallet transfers',
  digital_asset: 'digital-asset transfers',
};

/** An amount for people to read, with thousands separators: 99_999_999_900n KES is "999,999,999.00". */
export function formatAmountForReading(minor: bigint, currency: Currency): string {
  const [whole = '', fraction] = formatAmount(minor, currency).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

/** A rail's bounds for a currency as a sentence: "KES bank payouts are 100.00 to 999,999,999.00". */
export function railBoundsSentence(
  rail: Rail,
  currency: Currency,
  bounds: { min: bigint; max: bigint },
): string {
  return `${currency} ${RAIL_MOVEMENT_NAMES[rail]} are ${formatAmountForReading(bounds.min, currency)} to ${formatAmountForReading(bounds.max, currency)}`;
}

/**
 * What a rail carries beyond its bounds: some move amounts only in steps coarser than the currency's minor
 * unit (M-Pesa moves whole shillings, though KES has cents). Declared per rail and currency, and per
 * mobile-money network where the network decides; the partner adapters (src/rails/partners) read the same
 * declaration. A transfer, quote or collection off its rail's step is refused when created, before any
 * hold, rather than failing `amount_not_supported` at the rail afterwards.
 */
export interface RailAmountStep {
  rail: Rail;
  /** The mobile-money network it holds for; undefined: every destination on the rail. */
  network?: MobileNetwork;
  currency: Currency;
  /** Amounts are whole multiples of this many minor units. */
  stepMinor: bigint;
  /** The rule in words, as a refusal states it. */
  rule: string;
}

export const RAIL_AMOUNT_STEPS: readonly RailAmountStep[] = [
  {
    rail: 'mobile_money',
    network: 'mpesa',
    currency: 'KES',
    stepMinor: 100n,
    rule: 'M-Pesa carries whole shillings',
  },
];

/** The step an amount on a rail (and network) must keep to, if the rail declares one for the currency. */
export function railAmountStep(
  rail: Rail,
  network: string | undefined,
  currency: Currency,
): RailAmountStep | undefined {
  return RAIL_AMOUNT_STEPS.find(
    (s) => s.rail === rail && s.currency === currency && (s.network === undefined || s.network === network),
  );
}

export function fitsRailAmountStep(
  rail: Rail,
  network: string | undefined,
  currency: Currency,
  amountMinor: bigint,
): boolean {
  const step = railAmountStep(rail, network, currency);
  return step === undefined || amountMinor % step.stepMinor === 0n;
}

/** Refuses an amount its rail does not carry: a 422 `amount_not_supported` on `amount`, naming the rule. */
export function checkRailAmountStep(
  rail: Rail,
  network: string | undefined,
  currency: Currency,
  amountMinor: bigint,
): void {
  const step = railAmountStep(rail, network, currency);
  if (step === undefined || amountMinor % step.stepMinor === 0n) return;
  const below = amountMinor - (amountMinor % step.stepMinor);
  const nearest = [below, below + step.stepMinor]
    .filter((candidate) => candidate > 0n)
    .map((candidate) => formatAmountForReading(candidate, currency));
  throw new AppError({
    status: 422,
    code: 'amount_not_supported',
    title: 'Amount not supported by the rail',
    detail: `${step.rule} (multiples of ${formatAmountForReading(step.stepMinor, currency)} ${currency}): ${formatAmountForReading(amountMinor, currency)} ${currency} cannot be sent; ${nearest.join(' or ')} can.`,
    param: 'amount',
    errors: [
      {
        param: 'amount',
        code: 'amount_not_supported',
        message: `${step.rule}: amount must be a multiple of ${formatAmountForReading(step.stepMinor, currency)} ${currency}`,
      },
    ],
  });
}

export type Destination =
  | { type: 'mobile_money'; network: MobileNetwork; phone: string; name?: string }
  | { type: 'bank_account'; bank_code: string; account_number: string; account_name?: string }
  | { type: 'paybill'; business_number: string; account_reference: string }
  | { type: 'till'; till_number: string }
  | { type: 'card'; token: string }
  | { type: 'wallet'; wallet: string }
  | CryptoAddressDestination;
