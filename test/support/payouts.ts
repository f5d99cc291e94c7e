/** A processing mobile-money payout record as the rail worker hands it to an adapter, for adapter tests. */
import { randomUUID } from 'node:crypto';
import type { Transfer } from '../../src/domain/transferRecord.ts';

export function mobileMoneyPayout(
  phone: string,
  network: 'mpesa' | 'mtn',
  overrides: Partial<Transfer> = {},
): Transfer {
  const now = new Date();
  return {
    id: `tr_${randomUUID().replaceAll('-', '')}`,
    organizationId: 'org_adapter_test',
    direction: 'outbound',
    sourceWalletId: 'wallet_adapter_test',
    destination: { type: 'mobile_money', network, phone },
    destinationWalletId: null,
    amountMinor: 1_500_00n,
    currency: 'KES',
    rail: 'mobile_money',
    network,
    status: 'processing',
    statusReason: null,
    failureCode: null,
    ledgerState: 'pending',
    metadata: {},
    railReference: null,
    partnerReceipt: null,
    nextRailCheckAt: null,
    createdAt: now,
    updatedAt: now,
    processingAt: now,
    settledAt: null,
    failedAt: null,
    canceledAt: null,
    returnedAt: null,
    createdBy: null,
    authorization: null,
    approvalId: null,
    ...overrides,
  };
}
