/**
 * Fireblocks' vocabulary as the adapter speaks it, pure: the asset id of each stablecoin on each network,
 * amounts between minor units and Fireblocks' decimal strings, and a transaction's status read as a rail
 * outcome with the failure code its sub-status means.
 */
import type { DigitalAsset, DigitalAssetNetwork } from '../../../../domain/digitalAssets.ts';
import { isRecord } from '../../../../domain/json.ts';
import type { CustodyDepositReport } from '../../../../rails/partner.ts';
import type { NetworkFee, RailOutcome } from '../../../../rails/rail.ts';

export const FIREBLOCKS_PARTNER = 'fireblocks';

/**
 * Fireblocks' asset ids; USDC and USDT_ERC20 on Ethereum and TRX_USDT_S2UZ on Tron are the ones its guides
 * use, the others unverified (docs/rails/fireblocks.md). Both stablecoins have 6 decimals everywhere here.
 */
export const FIREBLOCKS_ASSET_IDS: Readonly<Record<DigitalAssetNetwork, Record<DigitalAsset, string>>> = {
  ethereum: { USDC: 'USDC', USDT: 'USDT_ERC20' },
  polygon: { USDC: 'USDC_POLYGON_NXTB', USDT: 'USDT_POLYGON' },
  base: { USDC: 'USDC_BASECHAIN_ETH_5I5C', USDT: 'USDT_BASECHAIN_ETH' },
  arbitrum: { USDC: 'USDC_ARB_3SBJ', USDT: 'USDT_ARB' },
  solana: { USDC: 'SOL_USDC_PTHX', USDT: 'SOL_USDT_EWAY' },
  tron: { USDC: 'TRX_USDC_6NU3', USDT: 'TRX_USDT_S2UZ' },
};
/** USDC's and USDT's decimals, which are their minor units in Mkoba too. */
const STABLECOIN_DECIMALS = 6;
/** How long after an unfinished answer the rail worker looks again. */
export const FIREBLOCKS_STATUS_POLL_INTERVAL_MS = 30_000;

/** Minor units as Fireblocks' decimal amount. */
export function fireblocksAmount(minor: bigint): string {
  const scale = 10n ** BigInt(STABLECOIN_DECIMALS);
  const fraction = (minor % scale).toString().padStart(STABLECOIN_DECIMALS, '0').replace(/0+$/, '');
  return fraction === '' ? `${minor / scale}` : `${minor / scale}.${fraction}`;
}

/** A Fireblocks decimal amount (string) in minor units, or undefined when it is not one. */
export function minorOfFireblocksAmount(text: unknown): bigint | undefined {
  if (typeof text !== 'string') return undefined;
  const match = /^(\d{1,20})(?:\.(\d{1,6}))?$/.exec(text);
  if (!match) return undefined;
  return (
    BigInt(match[1] ?? '0') * 10n ** BigInt(STABLECOIN_DECIMALS) + BigInt((match[2] ?? '').padEnd(6, '0'))
  );
}

/** Final statuses and the failure code each means (a sub-status may say more). */
const FAILED_STATUS_CODES: Readonly<Record<string, string>> = {
  FAILED: 'partner_error',
  CANCELLED: 'partner_canceled',
  BLOCKED: 'partner_not_allowed',
  REJECTED: 'partner_rejected',
};
const SUB_STATUS_CODES: Readonly<Record<string, string>> = {
  INSUFFICIENT_FUNDS: 'insufficient_funds',
};

/** A transaction's status as a rail outcome: COMPLETED settles; the four failures fail; anything else waits. */
export function outcomeOfStatus(
  status: unknown,
  subStatus: unknown,
  reference: string,
  now: Date,
): RailOutcome {
  if (status === 'COMPLETED') return { kind: 'settled', reference };
  if (typeof status === 'string' && Object.hasOwn(FAILED_STATUS_CODES, status)) {
    const specific =
      typeof subStatus === 'string' && Object.hasOwn(SUB_STATUS_CODES, subStatus)
        ? SUB_STATUS_CODES[subStatus]
        : undefined;
    return { kind: 'failed', failureCode: specific ?? (FAILED_STATUS_CODES[status] as string), reference };
  }
  return {
    kind: 'processing',
    checkAt: new Date(now.getTime() + FIREBLOCKS_STATUS_POLL_INTERVAL_MS),
    reference,
  };
}

/**
 * The network fee a transaction reports: `feeInfo.networkFee` (a decimal string, in the units of the asset
 * that paid it) in `feeCurrency` (that asset: ETH for a token on Ethereum). The deprecated numeric
 * `networkFee` beside them is not read (a JSON number loses digits). Undefined when no fee is reported.
 */
export function networkFeeOfTransaction(data: Record<string, unknown>): NetworkFee | undefined {
  const amount = isRecord(data.feeInfo) ? data.feeInfo.networkFee : undefined;
  if (typeof amount !== 'string' || amount === '') return undefined;
  const asset = typeof data.feeCurrency === 'string' ? data.feeCurrency : '';
  const currency = stablecoinOfAssetId(asset);
  const amountMinor = currency === undefined ? undefined : minorOfFireblocksAmount(amount);
  return {
    partner: FIREBLOCKS_PARTNER,
    asset,
    amount,
    ...(currency !== undefined && amountMinor !== undefined ? { currency, amountMinor } : {}),
  };
}

/** A transaction's status as a rail outcome, with the network fee it paid once it is COMPLETED. */
export function outcomeOfTransaction(data: Record<string, unknown>, now: Date): RailOutcome {
  const outcome = outcomeOfStatus(data.status, data.subStatus, String(data.id), now);
  if (outcome.kind !== 'settled') return outcome;
  const networkFee = networkFeeOfTransaction(data);
  return networkFee ? { ...outcome, networkFee } : outcome;
}

/** The network of a Fireblocks asset id, by FIREBLOCKS_ASSET_IDS. */
function networkOfAssetId(assetId: unknown): DigitalAssetNetwork | undefined {
  const entry = Object.entries(FIREBLOCKS_ASSET_IDS).find(([, ids]) =>
    Object.values(ids).includes(String(assetId)),
  );
  return entry?.[0] as DigitalAssetNetwork | undefined;
}

/** The stablecoin a Fireblocks asset id holds, by FIREBLOCKS_ASSET_IDS; undefined for any other asset. */
export function stablecoinOfAssetId(assetId: unknown): DigitalAsset | undefined {
  for (const ids of Object.values(FIREBLOCKS_ASSET_IDS)) {
    const found = (Object.keys(ids) as DigitalAsset[]).find((asset) => ids[asset] === assetId);
    if (found) return found;
  }
  return undefined;
}

/**
 * A transaction into a vault from outside, as a deposit to one of the wallets' addresses: a completed one,
 * or one ended in a failure, reported `notCompleted` (it may have been completed and credited before: a
 * status after COMPLETED); undefined for one still on its way.
 */
export function depositOfTransaction(data: unknown): CustodyDepositReport | undefined {
  if (!isRecord(data)) return undefined;
  const failed = typeof data.status === 'string' && Object.hasOwn(FAILED_STATUS_CODES, data.status);
  if (data.status !== 'COMPLETED' && !failed) return undefined;
  if (!isRecord(data.destination) || data.destination.type !== 'VAULT_ACCOUNT') return undefined;
  if (isRecord(data.source) && data.source.type === 'VAULT_ACCOUNT') return undefined;
  const network = networkOfAssetId(data.assetId);
  const amount = isRecord(data.amountInfo) ? data.amountInfo.amount : undefined;
  const { destinationAddress: address, txHash } = data;
  if (
    network === undefined ||
    typeof amount !== 'string' ||
    typeof address !== 'string' ||
    typeof txHash !== 'string'
  ) {
    return undefined;
  }
  const logIndex = typeof data.index === 'number' && Number.isSafeInteger(data.index) ? data.index : 0;
  if (!failed) return { network, address, amount, txHash, logIndex };
  const notCompleted = { status: String(data.status), subStatus: String(data.subStatus ?? '') };
  return { network, address, amount, txHash, logIndex, notCompleted };
}
