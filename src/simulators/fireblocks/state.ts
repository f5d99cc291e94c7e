/**
 * What a Fireblocks simulator is started with and keeps: its options and timings, the API users it
 * accepts, the vault accounts with their asset wallets and addresses, the transactions (as GET answers
 * them), the records of what it received and sent, and Fireblocks' error body.
 */

import {
  newSimulatorWork,
  type SimulatorListenOptions,
  type SimulatorReceivedRequest,
  type SimulatorWork,
} from '../shared.ts';
import { checkedNetworkFee } from './assets.ts';
import {
  type FireblocksSimulatorWebhookSignatures,
  newWebhookSigning,
  type WebhookSigning,
} from './webhookSigning.ts';

/** How long each step of a transaction's life cycle takes (SUBMITTED → … → COMPLETED). */
export const FIREBLOCKS_SIMULATOR_STEP_MS = 20;
/**
 * The longest JWT lifetime (exp − iat) accepted. Fireblocks' page says exp must be under iat + 30 s, but
 * its own SDKs sign tokens for 55 s, and Fireblocks accepts them; the simulator accepts what the SDKs send.
 */
export const FIREBLOCKS_SIMULATOR_MAX_TOKEN_LIFETIME_SECONDS = 60;
/** How far ahead of the simulator's clock a token's iat may be before it is refused (code −12). */
export const FIREBLOCKS_SIMULATOR_CLOCK_SKEW_SECONDS = 5;
/** How many confirmations a completed transaction reports. */
export const FIREBLOCKS_SIMULATOR_CONFIRMATIONS = 12;
/** A webhook gets this long to be answered. */
export const FIREBLOCKS_SIMULATOR_WEBHOOK_TIMEOUT_MS = 5_000;
/** How long waitForWebhooks and whenIdle wait unless told otherwise. */
export const FIREBLOCKS_SIMULATOR_WAIT_TIMEOUT_MS = 5_000;
/** The largest request body read. */
export const FIREBLOCKS_SIMULATOR_BODY_MAX_BYTES = 64 * 1024;

export interface FireblocksSimulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** API key → the PEM public key of its API user; one user with a fresh key pair unless given. */
  apiUsers?: Record<string, string>;
  /** Where webhooks are POSTed; none are sent until one is set (setWebhookUrl). */
  webhookUrl?: string;
  /** The workspace id webhooks carry as tenantId. */
  tenantId?: string;
  stepMs?: number;
  /**
   * The network fee each outgoing transaction pays once it is on chain: a decimal in the units of the asset
   * that pays it (the network's native coin, FIREBLOCKS_SIMULATOR_FEE_ASSETS); "0" unless given.
   */
  networkFee?: string;
  /** The signatures webhooks carry: v1's, v2's (against the simulator's JWKS) or both (the default). */
  webhookSignatures?: FireblocksSimulatorWebhookSignatures;
  /** Test-only: runs once each answer has been written out (see SimulatorListenOptions). */
  afterAnswer?: SimulatorListenOptions['afterAnswer'];
}

export type FireblocksTransactionStatus =
  | 'SUBMITTED'
  | 'PENDING_SIGNATURE'
  | 'BROADCASTING'
  | 'CONFIRMING'
  | 'COMPLETED'
  | 'FAILED'
  | 'CANCELLED'
  | 'BLOCKED'
  | 'REJECTED';

/** A transaction as GET /v1/transactions/{id} answers it (the fields the simulator keeps). */
export interface FireblocksTransaction {
  id: string;
  externalTxId?: string;
  status: FireblocksTransactionStatus;
  subStatus: string;
  txHash: string;
  operation: 'TRANSFER';
  note: string;
  assetId: string;
  source: { id: string; type: string; name: string; subType: string };
  destination: { id: string; type: string; name: string; subType: string };
  sourceAddress: string;
  destinationAddress: string;
  destinationTag: string;
  amountInfo: { amount: string; requestedAmount: string; netAmount: string; amountUSD: string };
  /** `networkFee` in `feeCurrency`'s units: "0" until the transaction is on chain; `gasPrice` (gwei) on EVM networks. */
  feeInfo: { networkFee: string; serviceFee: string; gasPrice?: string };
  /** The asset that pays the fee: the network's native coin for every token here. */
  feeCurrency: string;
  /** One transfer per transaction here, so empty, as Fireblocks leaves it for a single transfer. */
  networkRecords: unknown[];
  createdAt: number;
  lastUpdated: number;
  createdBy: string;
  signedBy: string[];
  numOfConfirmations: number;
  customerRefId?: string;
  /** Deprecated numeric copies Fireblocks still sends beside amountInfo. */
  amount: number;
  netAmount: number;
  requestedAmount: number;
  fee: number;
  networkFee: number;
}

/** How a transaction ends, chosen by its amount (FIREBLOCKS_SIMULATOR_AMOUNTS) or its funds. */
export type FireblocksOutcome =
  | 'complete'
  | 'fail'
  | 'insufficient_funds'
  | 'cancel'
  | 'block'
  | 'reject'
  | 'no_webhooks'
  | 'duplicate_webhooks'
  | 'stuck';

export interface StoredTransaction {
  transaction: FireblocksTransaction;
  direction: 'outgoing' | 'incoming';
  vaultAccountId: string;
  /** An outgoing transfer to another vault account: credited there on COMPLETED. */
  destinationVaultId?: string;
  units: bigint;
  outcome: FireblocksOutcome;
  /** The network fee it pays once on chain (the simulator's networkFee when it was created). */
  networkFee: string;
  /** Test-only: the transferred asset pays the fee, out of the source wallet on COMPLETED. */
  feeInAsset?: boolean;
}

export interface VaultAddress {
  address: string;
  description: string;
  customerRefId?: string;
  bip44AddressIndex: number;
}

export interface VaultAssetWallet {
  id: string;
  /** Smallest units: everything held, and the part held back for outgoing transactions in flight. */
  totalUnits: bigint;
  lockedUnits: bigint;
  addresses: VaultAddress[];
}

export interface VaultAccount {
  id: string;
  name: string;
  customerRefId?: string;
  hiddenOnUI: boolean;
  autoFuel: boolean;
  assets: Map<string, VaultAssetWallet>;
}

export type FireblocksReceivedRequest = SimulatorReceivedRequest;

export interface FireblocksWebhookDelivery {
  type: 'TRANSACTION_CREATED' | 'TRANSACTION_STATUS_UPDATED';
  transactionId: string;
  externalTxId?: string;
  status: FireblocksTransactionStatus;
  url: string;
  body: string;
  /** The v1 Fireblocks-Signature ('' when only v2 was sent). */
  signature: string;
  /** Every signature header sent. */
  headers: Record<string, string>;
  /** The HTTP status answered, or the error when none came. */
  responseStatus?: number;
  error?: string;
  at: number;
}

export interface Answer {
  status: number;
  body: unknown;
  /** Response headers beside Content-Type (GET /v1/transactions's `next-page`, `prev-page`). */
  headers?: Record<string, string>;
}

export interface FireblocksState extends SimulatorWork {
  apiUsers: Map<string, string>;
  /** `latencyMs`: how long every answer waits before the request is handled (setLatency). */
  config: {
    webhookUrl?: string;
    tenantId: string;
    stepMs: number;
    latencyMs?: number;
    networkFee: string;
    /** Test-only: 'asset' makes the transferred asset pay the fee (setNetworkFee). */
    feePaidIn?: 'native' | 'asset';
  };
  vaults: VaultAccount[];
  transactions: Map<string, StoredTransaction>;
  byExternalTxId: Map<string, string>;
  /** POST answers by API key and Idempotency-Key, with when each was first answered (ms). */
  idempotent: Map<string, { answer: Answer; at: number }>;
  nonces: Set<string>;
  requests: FireblocksReceivedRequest[];
  webhooks: FireblocksWebhookDelivery[];
  /** v2's keys and which signatures webhooks carry. */
  signing: WebhookSigning;
  failures: Array<500 | 503>;
  sequence: number;
}

export function newFireblocksState(
  options: FireblocksSimulatorOptions,
  apiUsers: Record<string, string>,
): FireblocksState {
  return {
    apiUsers: new Map(Object.entries(apiUsers)),
    config: {
      webhookUrl: options.webhookUrl,
      tenantId: options.tenantId ?? '00000000-0000-4000-8000-00000000f1b0',
      stepMs: options.stepMs ?? FIREBLOCKS_SIMULATOR_STEP_MS,
      networkFee: checkedNetworkFee(options.networkFee ?? '0'),
    },
    vaults: [],
    transactions: new Map(),
    byExternalTxId: new Map(),
    idempotent: new Map(),
    nonces: new Set(),
    requests: [],
    webhooks: [],
    signing: newWebhookSigning(options.webhookSignatures),
    failures: [],
    ...newSimulatorWork(),
    sequence: 0,
  };
}

/** Fireblocks' error body: `{message, code}` with the HTTP status its reference gives the code. */
export function fireblocksError(status: number, code: number, message: string): Answer {
  return { status, body: { message, code } };
}

export const VAULT_NOT_FOUND_CODE = 1004;
export const ASSET_NOT_FOUND_CODE = 1006;

export function vaultNotFound(id: string): Answer {
  return fireblocksError(404, VAULT_NOT_FOUND_CODE, `Vault account ${id} was not found`);
}

export function assetNotFound(assetId: string): Answer {
  return fireblocksError(404, ASSET_NOT_FOUND_CODE, `Asset ${assetId} doesn't exist`);
}
