import type { FeeDecision } from './fees.ts';
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

/** A transfer's fee in minor units: 0 when it has none. */
export function feeOf(t: Pick<Transfer, 'fee'>): bigint {
  return t.fee?.feeMinor ?? 0n;
}
