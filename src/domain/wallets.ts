import type { Currency } from './money.ts';

export const WALLET_STATUSES = ['active', 'frozen', 'closed'] as const;
export type WalletStatus = (typeof WALLET_STATUSES)[number];

/** Balances in minor units: `current` is posted, `pending` is held for outgoing transfers, `available` may be spent. */
export interface Balances {
  availableMinor: bigint;
  pendingMinor: bigint;
  currentMinor: bigint;
}

export interface Wallet extends Balances {
  id: string;
  organizationId: string;
  ownerId: string;
  currency: Currency;
  status: WalletStatus;
  metadata: Record<string, string>;
  createdAt: Date;
  updatedAt: Date;
}
