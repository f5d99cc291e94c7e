/**
 * The assets the Fireblocks simulator knows: Fireblocks' asset ids for USDC and USDT on the networks Mkoba
 * speaks, each with its network (for the addresses and hashes it makes) and its decimals; and the decimal
 * arithmetic of amounts, which Fireblocks writes as decimal strings (or JSON numbers) in the asset's units.
 */
import type { DigitalAsset, DigitalAssetNetwork } from '../../domain/digitalAssets.ts';

export interface FireblocksSimulatorAsset {
  asset: DigitalAsset;
  network: DigitalAssetNetwork;
  decimals: number;
}

/**
 * Fireblocks' asset ids (GET /v1/supported_assets lists a workspace's). The Ethereum ids (USDC, USDT_ERC20)
 * and Tron's USDT (TRX_USDT_S2UZ) are the ones Fireblocks' guides use; the others follow the same
 * catalogue's naming and are unverified: an adapter maps its own network names to these through
 * FIREBLOCKS_ASSET_IDS, so a different id in a real workspace is a configuration change, not a code one.
 */
export const FIREBLOCKS_SIMULATOR_ASSETS: Readonly<Record<string, FireblocksSimulatorAsset>> = {
  USDC: { asset: 'USDC', network: 'ethereum', decimals: 6 },
  USDT_ERC20: { asset: 'USDT', network: 'ethereum', decimals: 6 },
  USDC_POLYGON_NXTB: { asset: 'USDC', network: 'polygon', decimals: 6 },
  USDT_POLYGON: { asset: 'USDT', network: 'polygon', decimals: 6 },
  USDC_BASECHAIN_ETH_5I5C: { asset: 'USDC', network: 'base', decimals: 6 },
  USDT_BASECHAIN_ETH: { asset: 'USDT', network: 'base', decimals: 6 },
  USDC_ARB_3SBJ: { asset: 'USDC', network: 'arbitrum', decimals: 6 },
  USDT_ARB: { asset: 'USDT', network: 'arbitrum', decimals: 6 },
  SOL_USDC_PTHX: { asset: 'USDC', network: 'solana', decimals: 6 },
  SOL_USDT_EWAY: { asset: 'USDT', network: 'solana', decimals: 6 },
  TRX_USDC_6NU3: { asset: 'USDC', network: 'tron', decimals: 6 },
  TRX_USDT_S2UZ: { asset: 'USDT', network: 'tron', decimals: 6 },
};

/**
 * The asset that pays a transaction's network fee on each network: its native coin (Fireblocks' `feeCurrency`;
 * "the asset which was withdrawn to pay the transaction fee, for example ETH for EVM-based blockchains").
 * ETH is Fireblocks' id in its guides; the others follow its catalogue's naming and are unverified.
 */
export const FIREBLOCKS_SIMULATOR_FEE_ASSETS: Readonly<Record<DigitalAssetNetwork, string>> = {
  ethereum: 'ETH',
  polygon: 'MATIC_POLYGON',
  base: 'BASECHAIN_ETH',
  arbitrum: 'ETH-AETH',
  solana: 'SOL',
  tron: 'TRX',
};

/** The fee asset of a token's network (ETH when the token is unknown). */
export function feeAssetOf(assetId: string): string {
  const network = FIREBLOCKS_SIMULATOR_ASSETS[assetId]?.network ?? 'ethereum';
  return FIREBLOCKS_SIMULATOR_FEE_ASSETS[network];
}

/** An EVM network's fee carries the gas price it paid; the simulator's is fixed (gwei). */
export const FIREBLOCKS_SIMULATOR_GAS_PRICE_GWEI = '12.5';
const EVM_NETWORKS: readonly DigitalAssetNetwork[] = ['ethereum', 'polygon', 'base', 'arbitrum'];
export const isEvmAsset = (assetId: string): boolean =>
  EVM_NETWORKS.includes(FIREBLOCKS_SIMULATOR_ASSETS[assetId]?.network ?? 'ethereum');

/** A network fee as the simulator is told it: a plain non-negative decimal (native coins have up to 18 places). */
export function checkedNetworkFee(fee: string): string {
  if (!/^\d{1,30}(?:\.\d{1,18})?$/.test(fee)) throw new Error(`networkFee: not a decimal: ${fee}`);
  return fee;
}

const DECIMAL_AMOUNT = /^(\d{1,30})(?:\.(\d{1,30}))?$/;

/** An amount (a decimal string or a JSON number) in the asset's smallest units, or undefined if malformed. */
export function atomicAmount(value: unknown, decimals: number): bigint | undefined {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string') return undefined;
  const match = DECIMAL_AMOUNT.exec(text);
  if (!match) return undefined;
  const [, whole = '0', fraction = ''] = match;
  if (fraction.replace(/0+$/, '').length > decimals) return undefined;
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
}

/** Smallest units written back as Fireblocks writes a balance: a decimal string without trailing zeros. */
export function decimalAmount(units: bigint, decimals: number): string {
  const scale = 10n ** BigInt(decimals);
  const whole = units / scale;
  const fraction = (units % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return fraction === '' ? whole.toString() : `${whole}.${fraction}`;
}
