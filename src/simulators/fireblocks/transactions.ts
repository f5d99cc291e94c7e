/**
 * The Fireblocks simulator's transactions API: POST /v1/transactions (a transfer from a vault account to a
 * one-time address, refused when its externalTxId was used before), GET /v1/transactions/{id} and
 * GET /v1/transactions/external_tx_id/{externalTxId}; and the incoming deposits its control announces.
 * Each transaction's fate is its amount's (FIREBLOCKS_SIMULATOR_AMOUNTS), or insufficient funds.
 */
import { randomUUID } from 'node:crypto';
import { isRecord } from '../../domain/json.ts';
import { simulatedChainTransactionHash } from '../../domain/stablecoins.ts';
import { atomicAmount, decimalAmount, FIREBLOCKS_SIMULATOR_ASSETS, feeAssetOf } from './assets.ts';
import { advance } from './lifecycle.ts';
import {
  type Answer,
  assetNotFound,
  type FireblocksOutcome,
  type FireblocksState,
  type FireblocksTransaction,
  fireblocksError,
  type StoredTransaction,
  vaultNotFound,
} from './state.ts';
import { findVault } from './vaults.ts';

/**
 * Amounts whose transaction ends a set way, whatever the asset: the simulator's magic values. Any other
 * amount completes (or fails INSUFFICIENT_FUNDS when the vault's asset wallet holds less).
 */
export const FIREBLOCKS_SIMULATOR_AMOUNTS: Readonly<Record<string, FireblocksOutcome>> = {
  '13.13': 'fail',
  '14.14': 'cancel',
  '15.15': 'block',
  '16.16': 'reject',
  '17.17': 'no_webhooks',
  '18.18': 'duplicate_webhooks',
  '19.19': 'stuck',
};

/** The simulator's codes for refusals whose code Fireblocks' table does not give (documented as such). */
export const FIREBLOCKS_SIMULATOR_CODES = {
  invalidRequest: 1400,
  duplicateExternalTxId: 1438,
  transactionNotFound: 1404,
} as const;

const invalid = (message: string): Answer =>
  fireblocksError(400, FIREBLOCKS_SIMULATOR_CODES.invalidRequest, message);

/** Fireblocks' externalTxId is free-form; the simulator caps it as a sane bound. */
const EXTERNAL_TX_ID_MAX_CHARS = 255;

/** A JSON value when it is an object, so a missing or mistyped field reads as absent. */
function record(value: unknown): Record<string, unknown> | undefined {
  return isRecord(value) ? value : undefined;
}

interface TransferRequest {
  assetId: string;
  decimals: number;
  vaultAccountId: string;
  /** A ONE_TIME_ADDRESS's address; empty for a VAULT_ACCOUNT destination. */
  destinationAddress: string;
  /** A VAULT_ACCOUNT destination's id. */
  destinationVaultId?: string;
  units: bigint;
  externalTxId?: string;
  note?: string;
  customerRefId?: string;
}

/** The transfer a request body asks for, or the 400/404 refusing it (before anything is looked up). */
function transferRequest(body: Record<string, unknown>): TransferRequest | Answer {
  const { assetId, externalTxId, note, customerRefId } = body;
  if (body.operation !== undefined && body.operation !== 'TRANSFER') {
    return invalid('Only the TRANSFER operation is simulated');
  }
  if (typeof assetId !== 'string') return invalid('assetId is required');
  const asset = FIREBLOCKS_SIMULATOR_ASSETS[assetId];
  if (asset === undefined) return assetNotFound(assetId);
  const source = record(body.source);
  const destination = record(body.destination);
  if (source?.type !== 'VAULT_ACCOUNT' || typeof source.id !== 'string') {
    return invalid('source must be a VAULT_ACCOUNT with an id');
  }
  const address = record(destination?.oneTimeAddress)?.address;
  const toVault = destination?.type === 'VAULT_ACCOUNT' && typeof destination.id === 'string';
  if (
    !toVault &&
    (destination?.type !== 'ONE_TIME_ADDRESS' || typeof address !== 'string' || address === '')
  ) {
    return invalid(
      'destination must be a ONE_TIME_ADDRESS with oneTimeAddress.address, or a VAULT_ACCOUNT with an id',
    );
  }
  const units = atomicAmount(body.amount, asset.decimals);
  if (units === undefined || units <= 0n) return invalid('amount must be a positive decimal');
  if (
    externalTxId !== undefined &&
    (typeof externalTxId !== 'string' ||
      externalTxId === '' ||
      externalTxId.length > EXTERNAL_TX_ID_MAX_CHARS)
  ) {
    return invalid('externalTxId must be a non-empty string');
  }
  return {
    assetId,
    decimals: asset.decimals,
    vaultAccountId: source.id,
    destinationAddress: toVault ? '' : String(address),
    ...(toVault ? { destinationVaultId: String(destination.id) } : {}),
    units,
    externalTxId: externalTxId as string | undefined,
    note: typeof note === 'string' ? note : undefined,
    customerRefId: typeof customerRefId === 'string' ? customerRefId : undefined,
  };
}

export function createTransaction(
  state: FireblocksState,
  body: Record<string, unknown>,
  apiKey: string,
): Answer {
  const request = transferRequest(body);
  if ('status' in request) return request;
  const { externalTxId, units } = request;
  if (externalTxId !== undefined && state.byExternalTxId.has(externalTxId)) {
    return fireblocksError(
      400,
      FIREBLOCKS_SIMULATOR_CODES.duplicateExternalTxId,
      `A transaction with externalTxId ${externalTxId} already exists`,
    );
  }
  const vault = findVault(state, request.vaultAccountId);
  if (!vault) return vaultNotFound(request.vaultAccountId);
  const wallet = vault.assets.get(request.assetId);
  if (!wallet) return assetNotFound(request.assetId);
  const target =
    request.destinationVaultId === undefined ? undefined : findVault(state, request.destinationVaultId);
  if (request.destinationVaultId !== undefined) {
    if (!target) return vaultNotFound(request.destinationVaultId);
    if (!target.assets.has(request.assetId)) return assetNotFound(request.assetId);
  }
  const amountText = decimalAmount(units, request.decimals);
  let outcome = FIREBLOCKS_SIMULATOR_AMOUNTS[amountText] ?? 'complete';
  if (wallet.totalUnits - wallet.lockedUnits < units) outcome = 'insufficient_funds';
  else wallet.lockedUnits += units;
  const transaction = newTransaction({
    assetId: request.assetId,
    amountText,
    source: { id: vault.id, type: 'VAULT_ACCOUNT', name: vault.name, subType: '' },
    destination: target
      ? { id: target.id, type: 'VAULT_ACCOUNT', name: target.name, subType: '' }
      : { id: '', type: 'ONE_TIME_ADDRESS', name: 'N/A', subType: '' },
    sourceAddress: '',
    destinationAddress: target
      ? (target.assets.get(request.assetId)?.addresses[0]?.address ?? '')
      : request.destinationAddress,
    createdBy: apiKey,
  });
  if (externalTxId !== undefined) transaction.externalTxId = externalTxId;
  if (request.note !== undefined) transaction.note = request.note;
  if (request.customerRefId !== undefined) transaction.customerRefId = request.customerRefId;
  store(state, {
    transaction,
    direction: 'outgoing',
    vaultAccountId: vault.id,
    ...(target ? { destinationVaultId: target.id } : {}),
    units,
    outcome,
    networkFee: state.config.networkFee,
    ...(state.config.feePaidIn === 'asset' ? { feeInAsset: true } : {}),
  });
  return { status: 200, body: { id: transaction.id, status: transaction.status } };
}

export interface IncomingDeposit {
  vaultAccountId: string;
  assetId: string;
  /** A decimal string in the asset's units. */
  amount: string;
  /** The vault address paid; the asset wallet's first address unless given. */
  address?: string;
  sourceAddress?: string;
}

/** A deposit into a vault address seen on chain: CONFIRMING, then COMPLETED (credited to the vault). */
export function announceDeposit(state: FireblocksState, deposit: IncomingDeposit): FireblocksTransaction {
  const asset = FIREBLOCKS_SIMULATOR_ASSETS[deposit.assetId];
  const vault = findVault(state, deposit.vaultAccountId);
  const wallet = vault?.assets.get(deposit.assetId);
  if (!asset || !vault || !wallet) throw new Error('deposit: no such vault account asset wallet');
  const units = atomicAmount(deposit.amount, asset.decimals);
  if (units === undefined || units <= 0n) throw new Error('deposit: amount must be a positive decimal');
  const address = deposit.address ?? wallet.addresses[0]?.address ?? '';
  if (!wallet.addresses.some((entry) => entry.address === address))
    throw new Error('deposit: not this wallet');
  const amountText = decimalAmount(units, asset.decimals);
  const transaction = newTransaction({
    assetId: deposit.assetId,
    amountText,
    source: { id: '', type: 'UNKNOWN', name: 'External', subType: '' },
    destination: { id: vault.id, type: 'VAULT_ACCOUNT', name: vault.name, subType: '' },
    sourceAddress: deposit.sourceAddress ?? '',
    destinationAddress: address,
    createdBy: '',
  });
  transaction.status = 'CONFIRMING';
  transaction.subStatus = 'PENDING_BLOCKCHAIN_CONFIRMATIONS';
  transaction.txHash = simulatedChainTransactionHash(`fireblocks\u0000${transaction.id}`, asset.network);
  const outcome = FIREBLOCKS_SIMULATOR_AMOUNTS[amountText];
  const stored: StoredTransaction = {
    transaction,
    direction: 'incoming',
    vaultAccountId: vault.id,
    units,
    outcome: outcome === 'no_webhooks' || outcome === 'duplicate_webhooks' ? outcome : 'complete',
    // The sender paid the deposit's fee, not a vault of ours.
    networkFee: '0',
  };
  store(state, stored);
  return structuredClone(transaction);
}

function store(state: FireblocksState, stored: StoredTransaction): void {
  const { transaction } = stored;
  state.transactions.set(transaction.id, stored);
  if (transaction.externalTxId !== undefined)
    state.byExternalTxId.set(transaction.externalTxId, transaction.id);
  advance(state, stored);
}

interface NewTransaction {
  assetId: string;
  amountText: string;
  source: FireblocksTransaction['source'];
  destination: FireblocksTransaction['destination'];
  sourceAddress: string;
  destinationAddress: string;
  createdBy: string;
}

function newTransaction(fields: NewTransaction): FireblocksTransaction {
  const now = Date.now();
  const amount = Number(fields.amountText);
  return {
    id: randomUUID(),
    status: 'SUBMITTED',
    subStatus: '',
    txHash: '',
    operation: 'TRANSFER',
    note: '',
    assetId: fields.assetId,
    source: fields.source,
    destination: fields.destination,
    sourceAddress: fields.sourceAddress,
    destinationAddress: fields.destinationAddress,
    destinationTag: '',
    amountInfo: {
      amount: fields.amountText,
      requestedAmount: fields.amountText,
      netAmount: fields.amountText,
      amountUSD: fields.amountText,
    },
    feeInfo: { networkFee: '0', serviceFee: '0' },
    feeCurrency: feeAssetOf(fields.assetId),
    networkRecords: [],
    createdAt: now,
    lastUpdated: now,
    createdBy: fields.createdBy,
    signedBy: [],
    numOfConfirmations: 0,
    amount,
    netAmount: amount,
    requestedAmount: amount,
    fee: 0,
    networkFee: 0,
  };
}

export function readTransaction(state: FireblocksState, id: string): Answer {
  const stored = state.transactions.get(id);
  if (!stored) return transactionNotFound(id);
  return { status: 200, body: stored.transaction };
}

export function readTransactionByExternalTxId(state: FireblocksState, externalTxId: string): Answer {
  const id = state.byExternalTxId.get(externalTxId);
  if (id === undefined) return transactionNotFound(externalTxId);
  return readTransaction(state, id);
}

function transactionNotFound(id: string): Answer {
  return fireblocksError(404, FIREBLOCKS_SIMULATOR_CODES.transactionNotFound, `Transaction ${id} not found`);
}
