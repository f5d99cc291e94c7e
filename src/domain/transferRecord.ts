import type { Metadata } from './metadata.ts';
import type { Currency } from './money.ts';
import type { Destination, LedgerState, Rail, TransferStatus } from './transfers.ts';

export type TransferDirection = 'outbound' | 'inbound';

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
}
