/**
 * The transfer record as every capability reads it (its authorization, Travel Rule link and fee), and its
 * destination masked for logs, receipts and the console.
 */
import type { Metadata } from './metadata.ts';
import type { Currency } from './money.ts';
import type { Destination, LedgerState, Rail, TransferStatus } from './transfers.ts';

/** The authorization policy's decision on a transfer: which version and rule decided, and what. */
export interface TransferAuthorization {
  decision: 'allow' | 'deny' | 'require_approval';
  policyVersion: number;
  rule: string;
}

export type TransferDirection = 'outbound' | 'inbound';

/** A transfer's Travel Rule data: the evidence record that holds it, and whether the threshold required it. */
export interface TravelRuleLink {
  evidenceId: string;
  required: boolean;
}

export interface Transfer {
  id: string;
  organizationId: string;
  direction: TransferDirection;
  sourceWalletId: string | null;
  destination: Destination | { type: 'external'; network?: string; phone?: string };
  destinationWalletId: string | null;
  amountMinor: bigint;
  currency: Currency;
  rail: Rail;
  network: string | null;
  status: TransferStatus;
  statusReason: string | null;
  failureCode: string | null;
  ledgerState: LedgerState;
  metadata: Metadata;
  railReference: string | null;
  /** The partner's receipt for the money moved (M-Pesa's receipt number), once the partner reports it. */
  partnerReceipt: string | null;
  nextRailCheckAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  processingAt: Date | null;
  settledAt: Date | null;
  failedAt: Date | null;
  canceledAt: Date | null;
  returnedAt: Date | null;
  /** Who created it: the member the API key acts for, else the key; null for money that arrived. */
  createdBy: string | null;
  authorization: TransferAuthorization | null;
  /** The approval it waits for (or waited for), when its policy asked for one. */
  approvalId: string | null;
  /** Set on digital-asset transfers that carry Travel Rule data; absent or null otherwise. */
  travelRule?: TravelRuleLink | null;
  /**
   * The fee the sender pays on top of the amount, with the fee schedule version and rule that decided it;
   * absent or null when none was decided (money that arrived, transfers made before fees): no fee.
   */
  fee?: FeeDecision | null;
}

/**
 * What a new transfer's record starts its life with, after what it moves and where: created and updated `now`;
 * no rail reference, receipt or check yet; not processing, settled, failed, canceled or returned; no creator,
 * authorization or approval. A creator writes what differs after it.
 */
export function newTransferLife(now: Date) {
  return {
    railReference: null,
    partnerReceipt: null,
    nextRailCheckAt: null,
    createdAt: now,
    updatedAt: now,
    processingAt: null,
    settledAt: null,
    failedAt: null,
    canceledAt: null,
    returnedAt: null,
    createdBy: null,
    authorization: null,
    approvalId: null,
  };
}

/** A transfer's fee in minor units: 0 when it has none. */
export function feeOf(t: Pick<Transfer, 'fee'>): bigint {
  return t.fee?.feeMinor ?? 0n;
}

/** A value shown in part: at most six bullets, then its last `keep` characters. */
const tail = (value: string, keep = 4) =>
  `${'•'.repeat(Math.max(0, Math.min(6, value.length - keep)))}${value.slice(-keep)}`;

/** A phone number as receipts and statements show it: its country code and last two digits. */
export function maskedPhone(phone: string): string {
  return `${phone.slice(0, 4)}${tail(phone.slice(4), 2)}`;
}

/** A wallet id as the public check shows it: its last six characters, the rest hidden. */
export function maskedWallet(walletId: string): string {
  return tail(walletId, 6);
}

/** The destination as a receipt shows it to whoever holds it: enough to recognise, not to reuse. */
export function maskedDestination(destination: Transfer['destination']): string {
  switch (destination.type) {
    case 'mobile_money':
      return `${destination.network} ${maskedPhone(destination.phone)}`;
    case 'bank_account':
      return `bank ${destination.bank_code} account ${tail(destination.account_number)}`;
    case 'paybill':
      return `paybill ${destination.business_number} ref ${tail(destination.account_reference)}`;
    case 'till':
      return `till ${destination.till_number}`;
    case 'card':
      return 'card';
    case 'wallet':
      return `wallet ${tail(destination.wallet, 6)}`;
    default:
      return destination.type;
  }
}

/** What decided a transfer's fee: the amount, the schedule version, and the rule (null: none for its rail and currency). */
export interface FeeDecision {
  feeMinor: bigint;
  scheduleVersion: number;
  rule: string | null;
}
