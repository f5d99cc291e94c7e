/**
 * Fireblocks as a partner rail: `digital_asset` payouts out of the organization's vault account as
 * Fireblocks transactions to a one-time address, followed by Fireblocks' signed webhooks and by polling.
 *
 * Idempotency: the transaction's externalTxId is the transfer's id, and Fireblocks refuses a second
 * transaction with one it has seen. A submit whose answer was lost, or that is refused, first looks the
 * transfer up by externalTxId: a transaction found is the payout's, never a second one.
 *
 * Webhooks: v1's Fireblocks-Signature is the base64 RSA-SHA512 signature of the raw body by Fireblocks'
 * key, checked by parseCallback with the configured public key; v2's Fireblocks-Webhook-Signature, a
 * detached JWS checked against Fireblocks' JWKS, is checked by verifyCallback before the webhook is stored
 * (webhookJwks.ts). The configuration says which it accepts. The rail worker's poller still confirms every
 * outcome with GET by externalTxId.
 */
import { createVerify } from 'node:crypto';
import type { DigitalAsset, DigitalAssetNetwork } from '../../../../domain/digitalAssets.ts';
import { isRecord } from '../../../../domain/json.ts';
import type { Transfer } from '../../../../domain/transferRecord.ts';
import {
  type ArrivedCallback,
  type CallbackReport,
  CallbackVerificationUnavailableError,
  type CustodyDepositReport,
  MalformedCallbackError,
  type PartnerRail,
} from '../../../../rails/partner.ts';
import type { RailOutcome, SubmitRequest, SubmitResult } from '../../../../rails/rail.ts';
import { type FireblocksConfig, findByExternalTxId } from './connection.ts';
import {
  type CustodyVaultAsset,
  fireblocksDepositAddress,
  fireblocksWalletVaultAssets,
  fireblocksWalletVaultBalances,
} from './custody.ts';
import { type CustodyDepositRead, fireblocksDepositsSince } from './deposits.ts';
import {
  depositOfTransaction,
  FIREBLOCKS_ASSET_IDS,
  FIREBLOCKS_PARTNER,
  fireblocksAmount,
  minorOfFireblocksAmount,
  outcomeOfTransaction,
} from './protocol.ts';
import {
  type CustodySweepRequest,
  checkFireblocksSweep,
  createTransactionOnce,
  submitFireblocksSweep,
} from './sweeps.ts';
import { FIREBLOCKS_JWKS_URL, fireblocksJwksCache, verifyFireblocksWebhookJws } from './webhookJwks.ts';

/** Fireblocks' webhook types that speak of a transaction. */
const TRANSACTION_WEBHOOKS = ['TRANSACTION_CREATED', 'TRANSACTION_STATUS_UPDATED'];

/** A partner rail that also keeps wallets' deposits in custody. */
export interface CustodyPartnerRail extends PartnerRail {
  depositAddress(walletId: string, asset: DigitalAsset, network: DigitalAssetNetwork): Promise<string>;
  /**
   * Completed deposits among the transactions created after `after`, oldest first, at most `maxPages`
   * pages (to find those whose webhook never came).
   */
  depositsSince(after: Date, maxPages: number): Promise<CustodyDepositRead>;
  /** Every wallet vault account's stablecoin asset wallets with their balances. */
  walletVaultAssets(): Promise<CustodyVaultAsset[]>;
  /** Moves an asset wallet's coins to the payout vault, once per externalTxId; throws when unanswered. */
  sweep(request: CustodySweepRequest, now: Date): Promise<SubmitResult>;
  /** A sweep's outcome by its externalTxId. */
  checkSweep(externalTxId: string, now: Date): Promise<RailOutcome>;
}

export function fireblocksRail(config: FireblocksConfig): CustodyPartnerRail {
  return {
    partner: FIREBLOCKS_PARTNER,
    depositAddress: (walletId, asset, network) => fireblocksDepositAddress(config, walletId, asset, network),
    depositsSince: (after, maxPages) => fireblocksDepositsSince(config, after, maxPages),
    walletVaultAssets: () => fireblocksWalletVaultAssets(config),
    sweep: (request, now) => submitFireblocksSweep(config, request, now),
    checkSweep: (externalTxId, now) => checkFireblocksSweep(config, externalTxId, now),
    queryBalances: async () => ({ kind: 'reported', accounts: await fireblocksWalletVaultBalances(config) }),
    submit: (request, now) => submitPayout(config, request, now),
    check: (transfer, now) => checkPayout(config, transfer, now),
    collect: async () => ({ accepted: false, failureCode: 'not_supported' }),
    checkCollection: async () => ({ kind: 'failed', failureCode: 'not_supported' }),
    parseCallback: (callback) => parseFireblocksWebhook(config, callback),
    verifyCallback: (callback) => verifyFireblocksWebhook(config, callback),
    parseDeposit: (callback) => parseFireblocksDeposit(config, callback),
  };
}

async function submitPayout(
  config: FireblocksConfig,
  request: SubmitRequest,
  now: Date,
): Promise<SubmitResult> {
  const { transfer, idempotencyReference } = request;
  const destination = transfer.destination;
  if (destination.type !== 'crypto_address')
    return { accepted: false, failureCode: 'destination_not_supported' };
  return createTransactionOnce(
    config,
    {
      operation: 'TRANSFER',
      assetId: FIREBLOCKS_ASSET_IDS[destination.network][destination.asset],
      amount: fireblocksAmount(transfer.amountMinor),
      source: { type: 'VAULT_ACCOUNT', id: config.sourceVaultAccountId },
      destination: { type: 'ONE_TIME_ADDRESS', oneTimeAddress: { address: destination.address } },
      externalTxId: idempotencyReference,
      note: `Mkoba transfer ${transfer.id}`,
    },
    now,
  );
}

async function checkPayout(config: FireblocksConfig, transfer: Transfer, now: Date): Promise<RailOutcome> {
  const found = await findByExternalTxId(config, transfer.id);
  if (!found) return { kind: 'failed', failureCode: 'partner_not_found' };
  return outcomeOfTransaction(found, now);
}

/** What parseCallback needs of a configuration to check a webhook. */
type WebhookKeys = Pick<FireblocksConfig, 'webhookPublicKey' | 'webhookSignatures'>;

/**
 * v2's check, before the webhook is stored: `jwks` once Fireblocks-Webhook-Signature verifies; undefined
 * when the configuration accepts v1 and v1 is left to check (no v2 header, or, under `v1_or_v2`, the JWKS
 * out of reach while the webhook carries a v1 signature too).
 */
export async function verifyFireblocksWebhook(
  config: Pick<FireblocksConfig, 'fetch' | 'webhookSignatures' | 'webhookJwksUrl'>,
  callback: ArrivedCallback,
): Promise<string | undefined> {
  const accepted = config.webhookSignatures ?? 'v1';
  if (accepted === 'v1') return undefined;
  const jws = callback.headers['fireblocks-webhook-signature'];
  if (jws === undefined) {
    if (accepted === 'v2') {
      throw new MalformedCallbackError('The Fireblocks webhook has no Fireblocks-Webhook-Signature');
    }
    return undefined;
  }
  try {
    const url = config.webhookJwksUrl ?? FIREBLOCKS_JWKS_URL;
    await verifyFireblocksWebhookJws(fireblocksJwksCache, config.fetch, url, jws, callback.rawBody);
    return 'jwks';
  } catch (error) {
    const v1Left = accepted === 'v1_or_v2' && callback.headers['fireblocks-signature'] !== undefined;
    if (error instanceof CallbackVerificationUnavailableError && v1Left) return undefined;
    throw error;
  }
}

/**
 * A webhook's event, its signature verified: checked against the JWKS before it was stored (`verifiedBy`
 * `jwks`), or its Fireblocks-Signature with the configured public key where the configuration accepts v1.
 */
function verifiedEvent(
  config: WebhookKeys,
  callback: ArrivedCallback,
): Record<string, unknown> & { type: string } {
  const accepted = config.webhookSignatures ?? 'v1';
  if (callback.verifiedBy === 'jwks' && accepted !== 'v1') return parsedEvent(callback);
  if (accepted === 'v2') {
    throw new MalformedCallbackError("The Fireblocks webhook was not verified against Fireblocks' JWKS");
  }
  const signature = callback.headers['fireblocks-signature'];
  if (signature === undefined)
    throw new MalformedCallbackError('The Fireblocks webhook has no Fireblocks-Signature');
  const verifier = createVerify('RSA-SHA512');
  verifier.update(callback.rawBody);
  if (!verifier.verify(config.webhookPublicKey, signature, 'base64')) {
    throw new MalformedCallbackError('The Fireblocks webhook signature does not verify');
  }
  return parsedEvent(callback);
}

/** Webhooks v2's event types ("Transaction webhooks v2") as v1 names them. */
const V2_EVENT_TYPES: Readonly<Record<string, string>> = {
  'transaction.created': 'TRANSACTION_CREATED',
  'transaction.status.updated': 'TRANSACTION_STATUS_UPDATED',
};

/**
 * The webhook's JSON event with its type: v1's `{type, tenantId, timestamp, data}`, or v2's `{id, eventType,
 * eventVersion, resourceId, data, createdAt, workspaceId}` with its transaction event types named as v1's.
 */
function parsedEvent(callback: ArrivedCallback): Record<string, unknown> & { type: string } {
  let event: unknown;
  try {
    event = JSON.parse(callback.rawBody);
  } catch {
    throw new MalformedCallbackError('The Fireblocks webhook body is not JSON');
  }
  if (isRecord(event) && typeof event.type !== 'string' && typeof event.eventType === 'string') {
    return { ...event, type: V2_EVENT_TYPES[event.eventType] ?? event.eventType };
  }
  if (!isRecord(event) || typeof event.type !== 'string') {
    throw new MalformedCallbackError('The Fireblocks webhook has no type');
  }
  return event as Record<string, unknown> & { type: string };
}

/** A webhook's deposit, its signature verified; undefined when it reports none. */
export function parseFireblocksDeposit(
  config: WebhookKeys,
  callback: ArrivedCallback,
): CustodyDepositReport | undefined {
  const event = verifiedEvent(config, callback);
  return TRANSACTION_WEBHOOKS.includes(event.type) ? depositOfTransaction(event.data) : undefined;
}

/**
 * A transaction between our own vault accounts (a sweep, its externalTxId the sweep's id): the sweep pass
 * follows it by externalTxId, so only a failure is reported, for a sweep that may have completed before.
 */
function sweepReportOf(data: Record<string, unknown>): CallbackReport {
  const outcome = outcomeOfTransaction(data, new Date(0));
  if (outcome.kind !== 'failed' || typeof data.externalTxId !== 'string' || typeof data.id !== 'string') {
    return { kind: 'ignored', reason: 'a transfer between vault accounts' };
  }
  return {
    kind: 'sweep',
    reference: data.id,
    sweepId: data.externalTxId,
    notCompleted: { status: String(data.status), subStatus: String(data.subStatus ?? '') },
  };
}

/** A webhook, its signature verified; a transaction's status read as a payout report. */
export function parseFireblocksWebhook(config: WebhookKeys, callback: ArrivedCallback): CallbackReport {
  const event = verifiedEvent(config, callback);
  if (!TRANSACTION_WEBHOOKS.includes(event.type)) return { kind: 'ignored', reason: `${event.type} webhook` };
  const data = event.data;
  if (!isRecord(data) || typeof data.id !== 'string') {
    throw new MalformedCallbackError('The Fireblocks webhook carries no transaction');
  }
  if (!isRecord(data.source) || data.source.type !== 'VAULT_ACCOUNT') {
    // An incoming deposit, or a transfer not out of a vault: no payout of ours.
    return { kind: 'ignored', reason: 'not an outgoing vault transaction' };
  }
  if (isRecord(data.destination) && data.destination.type === 'VAULT_ACCOUNT') return sweepReportOf(data);
  const amountMinor = minorOfFireblocksAmount(isRecord(data.amountInfo) ? data.amountInfo.amount : undefined);
  const outcome = outcomeOfTransaction(data, new Date(0));
  // A status on the way (SUBMITTED … CONFIRMING) changes nothing of ours; the poller keeps its schedule.
  if (outcome.kind === 'processing') return { kind: 'ignored', reason: `status ${String(data.status)}` };
  return {
    kind: 'payout',
    reference: data.id,
    ...(typeof data.externalTxId === 'string' ? { idempotencyReference: data.externalTxId } : {}),
    outcome,
    ...(typeof data.txHash === 'string' && data.txHash !== '' ? { partnerTransactionId: data.txHash } : {}),
    ...(amountMinor === undefined ? {} : { amountMinor }),
  };
}
