/**
 * Stablecoin money in and across, pure: deposit addresses and deposits (statuses, the confirmations each
 * network needs before a deposit is credited), route limits, and conversions between a fiat wallet and a
 * stablecoin wallet at a quoted rate (exact rate arithmetic and its rounding rule). No I/O, no clock.
 */
import { createHash } from 'node:crypto';
import { base58 } from '@scure/base';
import { formatRate, parseRate, type UsdRate } from './decisions/travelRule.ts';
import {
  base58check,
  DIGITAL_ASSET_NETWORK_FAMILIES,
  type DigitalAsset,
  type DigitalAssetNetwork,
  EVM_ADDRESS_BYTES,
  SOLANA_PUBLIC_KEY_BYTES,
  TRON_ADDRESS_PREFIX,
  toChecksumAddress,
} from './digitalAssets.ts';
import { validationError } from './errors.ts';
import { type Currency, exponentOf, parseAmount } from './money.ts';

/**
 * Confirmations a deposit needs on each network before it is credited: past these, a reorganisation that
 * drops the transaction is no longer a practical risk. Ethereum-family rollups (base, arbitrum) inherit
 * their sequencer's ordering, and these follow common exchange practice; polygon PoS has had deep reorgs,
 * so it waits longer; Solana's `finalized` commitment is 32 slots; Tron's blocks are solidified after 19
 * of its 27 super representatives have built on them.
 */
export const DEPOSIT_CONFIRMATIONS_REQUIRED: Readonly<Record<DigitalAssetNetwork, number>> = {
  ethereum: 12,
  polygon: 128,
  base: 12,
  arbitrum: 12,
  solana: 32,
  tron: 19,
};

/**
 * `pending`: seen on chain, counting confirmations; `held_for_review`: confirmed, but the Travel Rule
 * required the originator's data and it did not come, so a compliance operator decides (a `travel_rule`
 * review case); `credited`: credited to the wallet by an inbound transfer (final); `rejected`: the operator
 * refused it, never credited and owed back to its sender (final); `reorged`: dropped from the chain by a
 * reorganisation before it was final, never credited (final).
 */
export const DEPOSIT_STATUSES = ['pending', 'held_for_review', 'credited', 'rejected', 'reorged'] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];

/** Whether the chain still holds the transaction: `included`, or `dropped` by a reorganisation. */
export const CHAIN_TRANSACTION_STATES = ['included', 'dropped'] as const;
export type ChainTransactionState = (typeof CHAIN_TRANSACTION_STATES)[number];

export const DEPOSIT_EVENT_TYPES = [
  'deposit.detected',
  'deposit.held_for_review',
  'deposit.credited',
  'deposit.rejected',
  'deposit.reorged',
] as const;
export const CONVERSION_EVENT_TYPES = ['conversion.completed'] as const;

/** A deposit's transaction hash: EVM `0x` + 64 hex digits, Tron 64 hex digits, Solana a base58 signature. */
export const TRANSACTION_HASH_PATTERN = '^(0x[0-9a-fA-F]{64}|[0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{64,88})$';
/** The event (log) index of a transfer inside its transaction: one transaction may pay several addresses. */
export const LOG_INDEX_MAX = 1_000_000;

export interface DepositAddress {
  id: string;
  organizationId: string;
  walletId: string;
  asset: DigitalAsset;
  network: DigitalAssetNetwork;
  address: string;
  createdAt: Date;
}

export interface Deposit {
  id: string;
  organizationId: string;
  walletId: string;
  depositAddressId: string;
  asset: DigitalAsset;
  network: DigitalAssetNetwork;
  address: string;
  txHash: string;
  logIndex: number;
  amountMinor: bigint;
  /** What the chain says: confirmations so far and whether it still holds the transaction. */
  confirmations: number;
  chainState: ChainTransactionState;
  requiredConfirmations: number;
  status: DepositStatus;
  /** The inbound transfer that credited the wallet. */
  transferId: string | null;
  /** The evidence record holding the originator's Travel Rule data, when given or required. */
  travelRuleEvidenceId: string | null;
  travelRuleRequired: boolean | null;
  /** Whether that data was received (with the report, or supplied by the operator who cleared its hold). */
  travelRuleReceived: boolean | null;
  /** When the deposit worker should look at it again; null once final. */
  nextCheckAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  creditedAt: Date | null;
  reorgedAt: Date | null;
  heldAt: Date | null;
  rejectedAt: Date | null;
}

/**
 * What the deposit worker does with a deposit, given what the chain says: credit it once it has its
 * confirmations, unless the Travel Rule required the originator's data and it is missing: then hold it for
 * review. A held deposit is credited once its data was supplied (by the operator who cleared it).
 */
export type DepositVerdict = 'credit' | 'hold' | 'reorg' | 'wait';

export function judgeDeposit(
  deposit: Pick<
    Deposit,
    | 'status'
    | 'chainState'
    | 'confirmations'
    | 'requiredConfirmations'
    | 'travelRuleRequired'
    | 'travelRuleReceived'
  >,
): DepositVerdict {
  const missingTravelRule = deposit.travelRuleRequired === true && deposit.travelRuleReceived !== true;
  if (deposit.status === 'held_for_review') return missingTravelRule ? 'wait' : 'credit';
  if (deposit.status !== 'pending') return 'wait';
  if (deposit.chainState === 'dropped') return 'reorg';
  if (deposit.confirmations < deposit.requiredConfirmations) return 'wait';
  return missingTravelRule ? 'hold' : 'credit';
}

/** A deposit is final once it has its confirmations: a reorganisation after that is refused. */
export function isDepositFinal(
  deposit: Pick<Deposit, 'status' | 'confirmations' | 'requiredConfirmations'>,
): boolean {
  return deposit.status !== 'pending' || deposit.confirmations >= deposit.requiredConfirmations;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * The sandbox's deposit address of a wallet on a network: derived from the wallet and network alone (so it
 * is the same in every process and after a restart), in the network's own format with a valid checksum.
 * Nobody holds a key for it: it exists only on the simulated chain.
 */
export function sandboxDepositAddress(walletId: string, network: DigitalAssetNetwork): string {
  const seed = sha256(`mkoba sandbox deposit address\u0000${walletId}\u0000${network}`);
  switch (DIGITAL_ASSET_NETWORK_FAMILIES[network]) {
    case 'evm':
      return toChecksumAddress(`0x${seed.subarray(0, EVM_ADDRESS_BYTES).toString('hex')}`);
    case 'tron':
      return base58check(Uint8Array.of(TRON_ADDRESS_PREFIX, ...seed.subarray(0, EVM_ADDRESS_BYTES)));
    case 'solana':
      return base58.encode(seed.subarray(0, SOLANA_PUBLIC_KEY_BYTES));
  }
}

/** A simulated chain's transaction hash for a seed, written as the network writes hashes. */
export function simulatedChainTransactionHash(seed: string, network: DigitalAssetNetwork): string {
  const digest = sha256(`mkoba sandbox chain transaction\u0000${seed}`);
  switch (DIGITAL_ASSET_NETWORK_FAMILIES[network]) {
    case 'evm':
      return `0x${digest.toString('hex')}`;
    case 'tron':
      return digest.toString('hex');
    case 'solana':
      // A Solana transaction is named by its first signature, 64 bytes.
      return base58.encode(Buffer.concat([digest, sha256(digest.toString('hex'))]));
  }
}

// --- Conversions (mint and redeem) -----------------------------------------------------------------------

/** How long a quote may be executed after it is given. */
export const CONVERSION_QUOTE_TTL_MS = 30_000;

/** mint: fiat → stablecoin; redeem: stablecoin → fiat. */
export const CONVERSION_DIRECTIONS = ['mint', 'redeem'] as const;
export type ConversionDirection = (typeof CONVERSION_DIRECTIONS)[number];

/** A rate: units of `to` for one unit of `from`, an exact decimal (numerator / 10^scale). */
export type ConversionRate = UsdRate;

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

export interface ConversionQuote {
  id: string;
  organizationId: string;
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
  status: ConversionQuoteStatus;
  conversionId: string | null;
  createdAt: Date;
  expiresAt: Date;
}

export interface Conversion {
  id: string;
  organizationId: string;
  quoteId: string;
  customerId: string;
  fromWalletId: string;
  toWalletId: string;
  direction: ConversionDirection;
  fromCurrency: Currency;
  toCurrency: Currency;
  fromAmountMinor: bigint;
  toAmountMinor: bigint;
  rate: string;
  /** The rate version its quote was given at (null: quoted before rates had versions). */
  rateVersionId: string | null;
  feeMinor: bigint;
  feeScheduleVersion: number | null;
  feeRule: string | null;
  /** The entry in `from`'s currency (wallet → conversion account) and the one in `to`'s. */
  debitEntryId: string;
  creditEntryId: string;
  createdBy: string | null;
  createdAt: Date;
}

/** A route limit as a request gives it: a decimal string in the asset, null for none, undefined to keep. */
export function routeLimitMinor(
  value: string | null | undefined,
  asset: DigitalAsset,
  param: string,
): bigint | null | undefined {
  if (value === undefined || value === null) return value;
  const minor = parseAmount(value, asset, param);
  if (minor <= 0n) {
    throw validationError(param, `${param} must be greater than zero, or null for none`, 'not_positive');
  }
  return minor;
}
