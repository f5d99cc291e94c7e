/**
 * Sweeps through Fireblocks: a wallet vault account's coins moved to the payout (source) vault as a
 * VAULT_ACCOUNT to VAULT_ACCOUNT transaction whose externalTxId is the sweep's id. As with payouts, a
 * refused or unanswered submit first looks the sweep up by externalTxId: one found is the sweep's
 * transaction, never a second one.
 */

import { isRecord } from '../../../../domain/json.ts';
import type { RailOutcome, SubmitResult } from '../../../../rails/rail.ts';
import {
  type FireblocksConfig,
  FireblocksError,
  findByExternalTxId,
  fireblocksRequest,
} from './connection.ts';
import { FIREBLOCKS_STATUS_POLL_INTERVAL_MS, fireblocksAmount, outcomeOfTransaction } from './protocol.ts';

export interface CustodySweepRequest {
  externalTxId: string;
  vaultAccountId: string;
  assetId: string;
  amountMinor: bigint;
}

/**
 * Creates a transaction once under its externalTxId. A refused submit (Fireblocks refuses an externalTxId it
 * has seen) or one whose answer never came first looks the externalTxId up: a transaction found is the one
 * asked for, accepted, never a second one; none found after a refusal is refused, after no answer thrown
 * (the caller asks again with the same externalTxId).
 */
export async function createTransactionOnce(
  config: FireblocksConfig,
  payload: Record<string, unknown> & { externalTxId: string },
  now: Date,
): Promise<SubmitResult> {
  const checkAt = new Date(now.getTime() + FIREBLOCKS_STATUS_POLL_INTERVAL_MS);
  let created: Awaited<ReturnType<typeof fireblocksRequest>>;
  try {
    created = await fireblocksRequest(config, 'POST', '/transactions', payload);
  } catch (error) {
    // No answer: the transaction may exist; only Fireblocks' own record can say.
    const existing = await findByExternalTxId(config, payload.externalTxId);
    if (existing) return { accepted: true, reference: existing.id as string, checkAt };
    throw error;
  }
  if (created.status === 200 && isRecord(created.body) && typeof created.body.id === 'string') {
    return { accepted: true, reference: created.body.id, checkAt };
  }
  const existing = await findByExternalTxId(config, payload.externalTxId);
  if (existing) return { accepted: true, reference: existing.id as string, checkAt };
  if (created.status >= 500)
    throw new FireblocksError(`Fireblocks answered ${created.status} to a transaction`);
  return { accepted: false, failureCode: 'partner_rejected' };
}

export function submitFireblocksSweep(
  config: FireblocksConfig,
  request: CustodySweepRequest,
  now: Date,
): Promise<SubmitResult> {
  return createTransactionOnce(
    config,
    {
      operation: 'TRANSFER',
      assetId: request.assetId,
      amount: fireblocksAmount(request.amountMinor),
      source: { type: 'VAULT_ACCOUNT', id: request.vaultAccountId },
      destination: { type: 'VAULT_ACCOUNT', id: config.sourceVaultAccountId },
      externalTxId: request.externalTxId,
      note: `Mkoba sweep ${request.externalTxId}`,
    },
    now,
  );
}

export async function checkFireblocksSweep(
  config: FireblocksConfig,
  externalTxId: string,
  now: Date,
): Promise<RailOutcome> {
  const found = await findByExternalTxId(config, externalTxId);
  if (!found) return { kind: 'failed', failureCode: 'partner_not_found' };
  return outcomeOfTransaction(found, now);
}
