/**
 * How the Fireblocks simulator moves a transaction through Fireblocks' statuses, one step at a time, and
 * announces each change by webhook: TRANSACTION_CREATED when it appears, TRANSACTION_STATUS_UPDATED on
 * every status after, each body `{type, tenantId, timestamp, data}` signed as webhookSigning.ts says (v1's
 * Fireblocks-Signature, v2's Fireblocks-Webhook-Signature, or both).
 * Balances move when a transaction is final: an outgoing one's locked amount leaves the vault on
 * COMPLETED and is released otherwise; an incoming one is credited on COMPLETED.
 */
import { simulatedChainTransactionHash } from '../../domain/stablecoins.ts';
import { notifyWaiting, sendCallback } from '../shared.ts';
import {
  atomicAmount,
  FIREBLOCKS_SIMULATOR_ASSETS,
  FIREBLOCKS_SIMULATOR_GAS_PRICE_GWEI,
  isEvmAsset,
} from './assets.ts';
import {
  FIREBLOCKS_SIMULATOR_CONFIRMATIONS,
  FIREBLOCKS_SIMULATOR_WEBHOOK_TIMEOUT_MS,
  type FireblocksOutcome,
  type FireblocksState,
  type FireblocksTransactionStatus,
  type FireblocksWebhookDelivery,
  type StoredTransaction,
} from './state.ts';
import { findVault } from './vaults.ts';
import { webhookEvent, webhookSignatureHeaders } from './webhookSigning.ts';

type Step = readonly [FireblocksTransactionStatus, string];

const SIGNING: Step[] = [
  ['PENDING_SIGNATURE', ''],
  ['BROADCASTING', ''],
];
const CONFIRMING: Step = ['CONFIRMING', 'PENDING_BLOCKCHAIN_CONFIRMATIONS'];
const COMPLETED: Step = ['COMPLETED', 'CONFIRMED'];

/** The statuses after SUBMITTED an outgoing transaction goes through, by its outcome. */
const OUTGOING_STEPS: Record<FireblocksOutcome, Step[]> = {
  complete: [...SIGNING, CONFIRMING, COMPLETED],
  no_webhooks: [...SIGNING, CONFIRMING, COMPLETED],
  duplicate_webhooks: [...SIGNING, CONFIRMING, COMPLETED],
  fail: [...SIGNING, ['FAILED', 'INTERNAL_ERROR']],
  insufficient_funds: [['FAILED', 'INSUFFICIENT_FUNDS']],
  cancel: [
    ['PENDING_SIGNATURE', ''],
    ['CANCELLED', 'CANCELLED_BY_USER'],
  ],
  block: [['BLOCKED', 'BLOCKED_BY_POLICY']],
  reject: [
    ['PENDING_SIGNATURE', ''],
    ['REJECTED', 'REJECTED_BY_USER'],
  ],
  stuck: [...SIGNING],
};

/** Announces a new transaction and schedules the rest of its life. */
export function advance(state: FireblocksState, stored: StoredTransaction): void {
  const steps = stored.direction === 'incoming' ? [COMPLETED] : OUTGOING_STEPS[stored.outcome];
  const run = async () => {
    await announce(state, stored, 'TRANSACTION_CREATED');
    for (const [status, subStatus] of steps) {
      await sleep(state, state.config.stepMs);
      if (state.closed) return;
      move(state, stored, status, subStatus);
      notifyWaiting(state);
      await announce(state, stored, 'TRANSACTION_STATUS_UPDATED');
    }
  };
  state.busy += 1;
  run().finally(() => {
    state.busy -= 1;
    notifyWaiting(state);
  });
}

function move(
  state: FireblocksState,
  stored: StoredTransaction,
  status: FireblocksTransactionStatus,
  subStatus: string,
): void {
  const { transaction } = stored;
  transaction.status = status;
  transaction.subStatus = subStatus;
  transaction.lastUpdated = Date.now();
  if (status === 'BROADCASTING' || status === 'CONFIRMING') {
    const network = FIREBLOCKS_SIMULATOR_ASSETS[transaction.assetId]?.network ?? 'ethereum';
    transaction.txHash ||= simulatedChainTransactionHash(`fireblocks\u0000${transaction.id}`, network);
  }
  // Mined: the fee it paid is known (and kept through COMPLETED).
  if (status === 'CONFIRMING' && stored.direction === 'outgoing') chargeNetworkFee(stored);
  if (status === 'COMPLETED') transaction.numOfConfirmations = FIREBLOCKS_SIMULATOR_CONFIRMATIONS;
  const wallet = findVault(state, stored.vaultAccountId)?.assets.get(transaction.assetId);
  if (!wallet || !isFinal(status)) return;
  if (stored.direction === 'incoming') {
    if (status === 'COMPLETED') wallet.totalUnits += stored.units;
    return;
  }
  if (stored.outcome === 'insufficient_funds') return; // nothing was locked
  wallet.lockedUnits -= stored.units;
  if (status !== 'COMPLETED') return;
  wallet.totalUnits -= stored.units;
  if (stored.feeInAsset) {
    const decimals = FIREBLOCKS_SIMULATOR_ASSETS[transaction.assetId]?.decimals ?? 6;
    wallet.totalUnits -= atomicAmount(stored.networkFee, decimals) ?? 0n;
  }
  if (stored.destinationVaultId === undefined) return;
  const destination = findVault(state, stored.destinationVaultId)?.assets.get(transaction.assetId);
  if (destination) destination.totalUnits += stored.units;
}

/**
 * Reports the network fee an outgoing transaction paid, field by field as Fireblocks does: `feeInfo.networkFee`
 * in `feeCurrency` (the native coin; the simulator keeps no native balances, so none is debited), the gas price
 * on EVM networks, and the deprecated numeric `networkFee` and `fee`.
 */
function chargeNetworkFee(stored: StoredTransaction): void {
  const { transaction } = stored;
  if (stored.feeInAsset) transaction.feeCurrency = transaction.assetId;
  transaction.feeInfo = {
    ...transaction.feeInfo,
    networkFee: stored.networkFee,
    ...(isEvmAsset(transaction.assetId) ? { gasPrice: FIREBLOCKS_SIMULATOR_GAS_PRICE_GWEI } : {}),
  };
  transaction.networkFee = Number(stored.networkFee);
  transaction.fee = Number(stored.networkFee);
}

function isFinal(status: FireblocksTransactionStatus): boolean {
  return ['COMPLETED', 'FAILED', 'CANCELLED', 'BLOCKED', 'REJECTED'].includes(status);
}

/** Sends the transaction's webhook (none, or twice, as its outcome says) and waits for the answers. */
export async function announce(
  state: FireblocksState,
  stored: StoredTransaction,
  type: FireblocksWebhookDelivery['type'],
): Promise<void> {
  const url = state.config.webhookUrl;
  if (url === undefined || state.closed || stored.outcome === 'no_webhooks') return;
  const body = JSON.stringify(webhookEvent(state, type, stored.transaction));
  const headers = webhookSignatureHeaders(state.signing, body);
  const times = stored.outcome === 'duplicate_webhooks' ? 2 : 1;
  for (let i = 0; i < times; i += 1) await deliver(state, stored, type, url, body, headers);
}

async function deliver(
  state: FireblocksState,
  stored: StoredTransaction,
  type: FireblocksWebhookDelivery['type'],
  url: string,
  body: string,
  signatures: Record<string, string>,
): Promise<void> {
  const delivery: FireblocksWebhookDelivery = {
    type,
    transactionId: stored.transaction.id,
    externalTxId: stored.transaction.externalTxId,
    status: stored.transaction.status,
    url,
    body,
    signature: signatures['Fireblocks-Signature'] ?? '',
    headers: signatures,
    at: Date.now(),
  };
  const headers = { 'Content-Type': 'application/json', ...signatures };
  const sent = await sendCallback(
    url,
    { method: 'POST', headers, body },
    FIREBLOCKS_SIMULATOR_WEBHOOK_TIMEOUT_MS,
  );
  if (sent.status !== undefined) delivery.responseStatus = sent.status;
  if (sent.error !== undefined) delivery.error = sent.error;
  state.webhooks.push(delivery);
  notifyWaiting(state);
}

function sleep(state: FireblocksState, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      state.timers.delete(timer);
      resolve();
    }, ms);
    state.timers.add(timer);
  });
}
