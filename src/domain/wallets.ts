/**
 * Wallets, pure: statuses and the transitions between them with their reasons, balances, identities and the
 * account details a wallet carries.
 */
import { parseInstant } from './days.ts';
import { AppError, validationError } from './errors.ts';
import { type Currency, isCurrency } from './money.ts';

export const WALLET_STATUSES = ['active', 'frozen', 'closed'] as const;
export type WalletStatus = (typeof WALLET_STATUSES)[number];

/** Balances in minor units: `current` is posted, `pending` is held for outgoing transfers, `available` may be spent. */
export interface Balances {
  availableMinor: bigint;
  pendingMinor: bigint;
  currentMinor: bigint;
}

/** What never changes about a wallet once it exists: whose it is, in which organization, in which currency. */
export interface WalletIdentity {
  id: string;
  organizationId: string;
  ownerId: string;
  currency: Currency;
}

export interface Wallet extends Balances {
  id: string;
  organizationId: string;
  ownerId: string;
  currency: Currency;
  status: WalletStatus;
  /** Why the wallet last changed status (a freeze, unfreeze or close reason); null while never changed. */
  statusReason: WalletStatusReason | null;
  statusChangedAt: Date | null;
  metadata: Record<string, string>;
  /** What outsiders pay it by (docs/PRODUCTS.md); null until issued. */
  accountDetails: WalletAccountDetails | null;
  createdAt: Date;
  updatedAt: Date;
}

/** 409 `wallet_not_active`: the wallet's status refuses what was asked; `detail` says why. */
export function walletNotActive(detail: string, param?: string): AppError {
  return new AppError({ status: 409, code: 'wallet_not_active', title: 'Wallet not active', detail, param });
}

/** A movement's currency, which must be its source wallet's (400 `currency_mismatch` naming `currency`). */
export function requireSourceCurrency(currency: string, source: Pick<WalletIdentity, 'currency'>): void {
  if (!isCurrency(currency) || currency !== source.currency) {
    throw validationError(
      'currency',
      `currency must be ${source.currency}, the currency of the source wallet`,
      'currency_mismatch',
    );
  }
}

/**
 * The wallet a movement pays into, checked against the wallet paying: not that same wallet, and holding the
 * movement's currency (400s naming `destination`).
 */
export function requirePayableDestination(
  destination: Pick<WalletIdentity, 'id' | 'currency'>,
  sourceWalletId: string,
  currency: Currency,
): void {
  if (destination.id === sourceWalletId)
    throw validationError('destination', 'a wallet cannot pay itself', 'same_as_source');
  if (destination.currency !== currency) {
    throw validationError(
      'destination',
      `destination wallet holds ${destination.currency}, not ${currency}`,
      'currency_mismatch',
    );
  }
}

/**
 * The wallet status machine: an operator freezes an active wallet and unfreezes it; a wallet closes only
 * from active (a frozen wallet is unfrozen first, by whoever froze it) and never reopens. Mirrored by the
 * database's wallet_status_transitions table.
 */
export const WALLET_STATUS_TRANSITIONS: Record<WalletStatus, readonly WalletStatus[]> = {
  active: ['frozen', 'closed'],
  frozen: ['active'],
  closed: [],
};

export function canChangeWalletStatus(from: WalletStatus, to: WalletStatus): boolean {
  return WALLET_STATUS_TRANSITIONS[from].includes(to);
}

/** Why an operator freezes a wallet. */
export const WALLET_FREEZE_REASONS = [
  'compliance_review',
  'sanctions_match',
  'fraud_suspected',
  'court_order',
  'customer_request',
  'other',
] as const;
/** Why an operator lifts a freeze. */
export const WALLET_UNFREEZE_REASONS = [
  'review_cleared',
  'false_positive',
  'court_order_lifted',
  'customer_request',
  'other',
] as const;
/** Why a wallet is closed. */
export const WALLET_CLOSE_REASONS = ['customer_request', 'account_consolidation', 'other'] as const;
export type WalletStatusReason =
  | (typeof WALLET_FREEZE_REASONS)[number]
  | (typeof WALLET_UNFREEZE_REASONS)[number]
  | (typeof WALLET_CLOSE_REASONS)[number];
/** Every reason a wallet's status may carry, once each. */
export const WALLET_STATUS_REASONS: readonly WalletStatusReason[] = [
  ...new Set<WalletStatusReason>([
    ...WALLET_FREEZE_REASONS,
    ...WALLET_UNFREEZE_REASONS,
    ...WALLET_CLOSE_REASONS,
  ]),
];

/** The free-text note an operator may add to a status change. */
export const WALLET_STATUS_NOTE_LENGTH_MAX = 500;

/** What a wallet carries once it has account details: fixed when issued, never changed or reused. */
export interface WalletAccountDetails {
  walletId: string;
  organizationId: string;
  accountNumber: string;
  /** The bank code and name the number was issued under (a later settings change does not rewrite them). */
  bankCode: string;
  bankName: string;
  /** The wallet's virtual account reference (`MK…`), made with the details if the wallet had none. */
  virtualReference: string;
  createdAt: Date;
}

/**
 * The instant a balance is read as of: entries created strictly before it count. A date names the end of
 * that UTC day. Not later than `now`: the balance of a time still to come is not known.
 */
export function balanceInstant(asOf: string, now: Date): Date {
  const instant = parseInstant(asOf, 'as_of', 'end');
  if (instant.getTime() > now.getTime()) {
    throw validationError(
      'as_of',
      `as_of must not be later than now (${now.toISOString()}); a date names the end of that UTC day`,
      'out_of_range',
    );
  }
  return instant;
}
