/**
 * Stablecoin money in, pure: deposit addresses and deposits (statuses, the confirmations each network needs
 * before a deposit is credited, the simulated chain's addresses and hashes) and route limits. Conversions
 * between a fiat wallet and a stablecoin wallet are in conversions.ts. No I/O, no clock.
 */
import { createHash } from 'node:crypto';
import { base58 } from '@scure/base';
import {
  base58check,
  DIGITAL_ASSET_NETWORK_FAMILIES,
  type DigitalAsset,
  type DigitalAssetNetwork,
  EVM_ADDRESS_BYTES,
  SOLANA_PUBLIC_KEY_BYTES,
  TRON_ADDRESS_PREFIX,
  toChecksumAddress,
} from './digitalAssets.ts';
import { validationError } from './errors.ts';
import { parseAmount } from './money.ts';

/**
 * Confirmations a deposit needs on each network before it is credited: past these, a reorganisation that
 * drops the transaction is no longer a practical risk. Ethereum-family rollups (base, arbitrum) inherit
 * their sequencer's ordering, and these follow common exchange practice; polygon PoS has had deep reorgs,
 * so it waits longer; Solana's `finalized` commitment is 32 slots; Tron's blocks are solidified after 19
 * of its 27 super representatives have built on them.
 */
export const DEPOSIT_CONFIRMATIONS_REQUIRED: Readonly<Record<DigitalAssetNetwork, number>> = {
  ethereum: 12,
  polygon: 128,
  base: 12,
  arbitrum: 12,
  solana: 32,
  tron: 19,
};

/**
 * `pending`: seen on chain, counting confirmations; `held_for_review`: confirmed, but the Travel Rule
 * required the originator's data and it did not come, so a compliance operator decides (a `travel_rule`
 * review case); `credited`: credited to the wallet by an inbound transfer (final); `rejected`: the operator
 * refused it, never credited and owed back to its sender (final); `reorged`: dropped from the chain by a
 * reorganisation before it was final, never credited (final).
 */
export const DEPOSIT_STATUSES = ['pending', 'held_for_review', 'credited', 'rejected', 'reorged'] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];

/** Whether the chain still holds the transaction: `included`, or `dropped` by a reorganisation. */
export const CHAIN_TRANSACTION_STATES = ['included', 'dropped'] as const;
export type ChainTransactionState = (typeof CHAIN_TRANSACTION_STATES)[number];

export const DEPOSIT_EVENT_TYPES = [
  'deposit.detected',
  'deposit.held_for_review',
  'deposit.credited',
  'deposit.rejected',
  'deposit.reorged',
] as const;

/** A deposit's transaction hash: EVM `0x` + 64 hex digits, Tron 64 hex digits, Solana a base58 signature. */
export const TRANSACTION_HASH_PATTERN = '^(0x[0-9a-fA-F]{64}|[0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{64,88})$';
/** The event (log) index of a transfer inside its transaction: one transaction may pay several addresses. */
export const LOG_INDEX_MAX = 1_000_000;

export interface DepositAddress {
  id: string;
  organizationId: string;
  walletId: string;
  asset: DigitalAsset;
  network: DigitalAssetNetwork;
  address: string;
  createdAt: Date;
}

export interface Deposit {
  id: string;
  organizationId: string;
  walletId: string;
  depositAddressId: string;
  asset: DigitalAsset;
  network: DigitalAssetNetwork;
  address: string;
  txHash: string;
  logIndex: number;
  amountMinor: bigint;
  /** What the chain says: confirmations so far and whether it still holds the transaction. */
  confirmations: number;
  chainState: ChainTransactionState;
  requiredConfirmations: number;
  status: DepositStatus;
  /** The inbound transfer that credited the wallet. */
  transferId: string | null;
  /** The evidence record holding the originator's Travel Rule data, when given or required. */
  travelRuleEvidenceId: string | null;
  travelRuleRequired: boolean | null;
  /** Whether that data was received (with the report, or supplied by the operator who cleared its hold). */
  travelRuleReceived: boolean | null;
  /** When the deposit worker should look at it again; null once final. */
  nextCheckAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  creditedAt: Date | null;
  reorgedAt: Date | null;
  heldAt: Date | null;
  rejectedAt: Date | null;
}

/**
 * What the deposit worker does with a deposit, given what the chain says: credit it once it has its
 * confirmations, unless the Travel Rule required the originator's data and it is missing: then hold it for
 * review. A held deposit is credited once its data was supplied (by the operator who cleared it).
 */
export type DepositVerdict = 'credit' | 'hold' | 'reorg' | 'wait';

export function judgeDeposit(
  deposit: Pick<
    Deposit,
    | 'status'
    | 'chainState'
    | 'confirmations'
    | 'requiredConfirmations'
    | 'travelRuleRequired'
    | 'travelRuleReceived'
  >,
): DepositVerdict {
  const missingTravelRule = deposit.travelRuleRequired === true && deposit.travelRuleReceived !== true;
  if (deposit.status === 'held_for_review') return missingTravelRule ? 'wait' : 'credit';
  if (deposit.status !== 'pending') return 'wait';
  if (deposit.chainState === 'dropped') return 'reorg';
  if (deposit.confirmations < deposit.requiredConfirmations) return 'wait';
  return missingTravelRule ? 'hold' : 'credit';
}

/** A deposit is final once it has its confirmations: a reorganisation after that is refused. */
export function isDepositFinal(
  deposit: Pick<Deposit, 'status' | 'confirmations' | 'requiredConfirmations'>,
): boolean {
  return deposit.status !== 'pending' || deposit.confirmations >= deposit.requiredConfirmations;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * The sandbox's deposit address of a wallet on a network: derived from the wallet and network alone (so it
 * is the same in every process and after a restart), in the network's own format with a valid checksum.
 * Nobody holds a key for it: it exists only on the simulated chain.
 */
export function sandboxDepositAddress(walletId: string, network: DigitalAssetNetwork): string {
  const seed = sha256(`mkoba sandbox deposit address\u0000${walletId}\u0000${network}`);
  switch (DIGITAL_ASSET_NETWORK_FAMILIES[network]) {
    case 'evm':
      return toChecksumAddress(`0x${seed.subarray(0, EVM_ADDRESS_BYTES).toString('hex')}`);
    case 'tron':
      return base58check(Uint8Array.of(TRON_ADDRESS_PREFIX, ...seed.subarray(0, EVM_ADDRESS_BYTES)));
    case 'solana':
      return base58.encode(seed.subarray(0, SOLANA_PUBLIC_KEY_BYTES));
  }
}

/** A simulated chain's transaction hash for a seed, written as the network writes hashes. */
export function simulatedChainTransactionHash(seed: string, network: DigitalAssetNetwork): string {
  const digest = sha256(`mkoba sandbox chain transaction\u0000${seed}`);
  switch (DIGITAL_ASSET_NETWORK_FAMILIES[network]) {
    case 'evm':
      return `0x${digest.toString('hex')}`;
    case 'tron':
      return digest.toString('hex');
    case 'solana':
      // A Solana transaction is named by its first signature, 64 bytes.
      return base58.encode(Buffer.concat([digest, sha256(digest.toString('hex'))]));
  }
}

/** A route limit as a request gives it: a decimal string in the asset, null for none, undefined to keep. */
export function routeLimitMinor(
  value: string | null | undefined,
  asset: DigitalAsset,
  param: string,
): bigint | null | undefined {
  if (value === undefined || value === null) return value;
  const minor = parseAmount(value, asset, param);
  if (minor <= 0n) {
    throw validationError(param, `${param} must be greater than zero, or null for none`, 'not_positive');
  }
  return minor;
}
