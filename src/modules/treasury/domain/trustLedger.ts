/**
 * The trust ledger, pure. Customer money held at trust banks (or, for USDC and USDT, at a custodian) is an
 * asset account of the ledger, kind `trust`, one per organization and currency. Money reaches it when a
 * bank deposit or an on-chain deposit is received straight into trust, and when an operator records a sweep
 * from a rail partner's float (the rail's `rail_settlement` account); it leaves it by a sweep back to a
 * float. The daily safeguarding check compares its posted balance with what the banks report.
 */

import { isDigitalAsset } from '../../../domain/digitalAssets.ts';
import { validationError } from '../../../domain/errors.ts';
import type { Currency } from '../../../domain/money.ts';
import { RAILS, type Rail } from '../../../domain/transfers.ts';
import { type AccountSums, directPostings, type Posting } from '../../ledger/domain/ledger.ts';

/**
 * How far the bank-reported trust balance may lie from the ledger's trust balance without an exception, in
 * minor units (0: they must agree exactly).
 */
export const TRUST_LEDGER_TOLERANCE_MINOR = 0n;

/** Characters of a sweep's reference (the bank's or partner's reference of the movement) at most. */
export const SWEEP_REFERENCE_LENGTH_MAX = 100;

/** `to_trust`: from a rail partner's float into trust; `from_trust`: out of trust to a float. */
export const SWEEP_DIRECTIONS = ['to_trust', 'from_trust'] as const;
export type SweepDirection = (typeof SWEEP_DIRECTIONS)[number];

/** Rails whose partner holds a float a sweep can move money to or from: every rail but `internal`. */
export const SWEEP_RAILS = RAILS.filter((r) => r !== 'internal');
export type SweepRail = Exclude<Rail, 'internal'>;

/** Money moved between a rail partner's float and the trust account, as an operator recorded it. */
export interface SafeguardingSweep {
  id: string;
  organizationId: string;
  currency: Currency;
  rail: SweepRail;
  direction: SweepDirection;
  amountMinor: bigint;
  /** The bank's or partner's reference of the movement: unique per organization, rail and currency. */
  reference: string;
  /** The day the money moved, as the bank states it. */
  valueDate: string;
  /** The trust account that received or paid it, when the operator named one. */
  trustAccountId: string | null;
  journalEntryId: string;
  createdBy: string;
  createdAt: Date;
}

/**
 * A stablecoin is held on chain, so it moves between a float and the custody wallet only on the
 * `digital_asset` rail, and that rail carries nothing else.
 */
export function checkSweepRail(rail: SweepRail, currency: Currency): void {
  if (isDigitalAsset(currency) !== (rail === 'digital_asset')) {
    throw validationError(
      'rail',
      isDigitalAsset(currency)
        ? `${currency} moves between a float and its custody wallet on chain: rail must be digital_asset`
        : `the digital_asset rail carries USDC and USDT only, not ${currency}`,
      'invalid_value',
    );
  }
}

/**
 * A sweep's postings, final at once: `to_trust` debits the trust account (the asset grows) and credits the
 * rail's settlement account (the float shrinks); `from_trust` the reverse.
 */
export function sweepPostings(
  direction: SweepDirection,
  trustAccountId: string,
  settlementAccountId: string,
  amountMinor: bigint,
  currency: Currency,
): Posting[] {
  return direction === 'to_trust'
    ? directPostings(trustAccountId, settlementAccountId, amountMinor, currency)
    : directPostings(settlementAccountId, trustAccountId, amountMinor, currency);
}

/** What the trust account holds: an asset, so its debits less its credits (the negative of its net). */
export function trustHeldMinor(sums: Pick<AccountSums, 'debitsPosted' | 'creditsPosted'>): bigint {
  return sums.debitsPosted - sums.creditsPosted;
}

export interface TrustLedgerDecision {
  /** The bank-reported trust balance minus the ledger's; null while a balance is missing or unknown. */
  ledgerDifferenceMinor: bigint | null;
  /** True when the two disagree beyond TRUST_LEDGER_TOLERANCE_MINOR. */
  mismatched: boolean;
}

/**
 * The bank's figure against the ledger's, for one currency and day. Nothing to compare while a closing
 * balance is missing, or for a report written before the ledger had a trust account figure.
 */
export function decideTrustLedger(
  trustBalanceMinor: bigint | null,
  ledgerTrustBalanceMinor: bigint | null,
): TrustLedgerDecision {
  if (trustBalanceMinor === null || ledgerTrustBalanceMinor === null) {
    return { ledgerDifferenceMinor: null, mismatched: false };
  }
  const ledgerDifferenceMinor = trustBalanceMinor - ledgerTrustBalanceMinor;
  const magnitude = ledgerDifferenceMinor < 0n ? -ledgerDifferenceMinor : ledgerDifferenceMinor;
  return { ledgerDifferenceMinor, mismatched: magnitude > TRUST_LEDGER_TOLERANCE_MINOR };
}
