/**
 * The Fireblocks simulator's vault API: vault accounts (create, list, list paged, read), the asset wallets
 * inside them (create, read the balance) and their deposit addresses (list, add). Addresses are made on
 * the asset's network the way the sandbox chain makes them, from the vault, asset and address index.
 */
import { sandboxDepositAddress } from '../../domain/stablecoins.ts';
import { decimalAmount, FIREBLOCKS_SIMULATOR_ASSETS } from './assets.ts';
import {
  type Answer,
  assetNotFound,
  type FireblocksState,
  fireblocksError,
  type VaultAccount,
  type VaultAssetWallet,
  vaultNotFound,
} from './state.ts';

/** Fireblocks' "Create Vault Account failed" and "GetVaultAccounts request has invalid values". */
const CREATE_VAULT_FAILED_CODE = 1002;
const INVALID_VAULT_QUERY_CODE = 1000;
/** The simulator's code for an asset wallet that already exists (Fireblocks' own was not found). */
const ASSET_WALLET_EXISTS_CODE = 1026;
/** accounts_paged's default and largest page, as Fireblocks' reference gives them. */
const VAULT_PAGE_DEFAULT = 200;
const VAULT_PAGE_MAX = 500;
const VAULT_NAME_MAX_CHARS = 128;
/** addresses_paginated's default and largest page (Fireblocks' reference: up to 1000). */
const ADDRESS_PAGE_DEFAULT = 500;
const ADDRESS_PAGE_MAX = 1_000;

export function presentVaultAsset(assetId: string, wallet: VaultAssetWallet) {
  const decimals = FIREBLOCKS_SIMULATOR_ASSETS[assetId]?.decimals ?? 0;
  const amount = (units: bigint) => decimalAmount(units, decimals);
  return {
    id: assetId,
    total: amount(wallet.totalUnits),
    balance: amount(wallet.totalUnits),
    available: amount(wallet.totalUnits - wallet.lockedUnits),
    pending: '0',
    frozen: '0',
    lockedAmount: amount(wallet.lockedUnits),
    staked: '0',
    blockHeight: '',
    blockHash: '',
  };
}

export function presentVault(vault: VaultAccount) {
  return {
    id: vault.id,
    name: vault.name,
    hiddenOnUI: vault.hiddenOnUI,
    ...(vault.customerRefId === undefined ? {} : { customerRefId: vault.customerRefId }),
    autoFuel: vault.autoFuel,
    assets: [...vault.assets].map(([assetId, wallet]) => presentVaultAsset(assetId, wallet)),
  };
}

export function findVault(state: FireblocksState, id: string): VaultAccount | undefined {
  return state.vaults.find((vault) => vault.id === id);
}

export function createVaultAccount(state: FireblocksState, body: Record<string, unknown>): Answer {
  const { name, customerRefId, hiddenOnUI, autoFuel } = body;
  if (typeof name !== 'string' || name.trim() === '' || name.length > VAULT_NAME_MAX_CHARS) {
    return fireblocksError(400, CREATE_VAULT_FAILED_CODE, 'Create Vault Account failed: name is required');
  }
  const vault: VaultAccount = {
    id: String(state.vaults.length),
    name,
    customerRefId: typeof customerRefId === 'string' ? customerRefId : undefined,
    hiddenOnUI: hiddenOnUI === true,
    autoFuel: autoFuel === true,
    assets: new Map(),
  };
  state.vaults.push(vault);
  return { status: 200, body: presentVault(vault) };
}

/** GET /v1/vault/accounts_paged: namePrefix, nameSuffix, limit, and the after/before cursors (vault ids). */
export function listVaultsPaged(state: FireblocksState, query: URLSearchParams): Answer {
  const limit = Number(query.get('limit') ?? VAULT_PAGE_DEFAULT);
  if (!Number.isInteger(limit) || limit < 1 || limit > VAULT_PAGE_MAX) {
    return fireblocksError(400, INVALID_VAULT_QUERY_CODE, 'GetVaultAccounts request has invalid values');
  }
  const prefix = query.get('namePrefix') ?? '';
  const suffix = query.get('nameSuffix') ?? '';
  const after = query.get('after');
  const before = query.get('before');
  let matching = state.vaults.filter((vault) => vault.name.startsWith(prefix) && vault.name.endsWith(suffix));
  if (after !== null) matching = matching.filter((vault) => Number(vault.id) > Number(after));
  if (before !== null) matching = matching.filter((vault) => Number(vault.id) < Number(before)).slice(-limit);
  const page = matching.slice(0, limit);
  const more = matching.length > page.length;
  const last = page.at(-1);
  return {
    status: 200,
    body: {
      accounts: page.map(presentVault),
      paging: more && last ? { after: last.id } : {},
    },
  };
}

export function readVault(state: FireblocksState, id: string): Answer {
  const vault = findVault(state, id);
  return vault ? { status: 200, body: presentVault(vault) } : vaultNotFound(id);
}

/** An address of the vault's asset wallet; the workspace (tenant) is in the seed, so workspaces never share one. */
function newAddress(
  state: FireblocksState,
  vault: VaultAccount,
  assetId: string,
  index: number,
  description: string,
) {
  const network = FIREBLOCKS_SIMULATOR_ASSETS[assetId]?.network ?? 'ethereum';
  const seed = `fireblocks\u0000${state.config.tenantId}\u0000${vault.id}\u0000${assetId}\u0000${index}`;
  return { address: sandboxDepositAddress(seed, network), description, bip44AddressIndex: index };
}

/** POST /v1/vault/accounts/{id}/{assetId}: the vault's wallet of the asset, with its first address. */
export function createVaultAsset(state: FireblocksState, id: string, assetId: string): Answer {
  const vault = findVault(state, id);
  if (!vault) return vaultNotFound(id);
  if (FIREBLOCKS_SIMULATOR_ASSETS[assetId] === undefined) return assetNotFound(assetId);
  if (vault.assets.has(assetId)) {
    return fireblocksError(400, ASSET_WALLET_EXISTS_CODE, `Asset wallet ${assetId} already exists`);
  }
  const first = newAddress(state, vault, assetId, 0, '');
  vault.assets.set(assetId, { id: assetId, totalUnits: 0n, lockedUnits: 0n, addresses: [first] });
  return {
    status: 200,
    body: { id: vault.id, address: first.address, legacyAddress: '', enterpriseAddress: '', tag: '' },
  };
}

export function readVaultAsset(state: FireblocksState, id: string, assetId: string): Answer {
  const vault = findVault(state, id);
  if (!vault) return vaultNotFound(id);
  const wallet = vault.assets.get(assetId);
  return wallet ? { status: 200, body: presentVaultAsset(assetId, wallet) } : assetNotFound(assetId);
}

/** GET …/addresses (the older list, all at once) and …/addresses_paginated (limit, after/before indexes). */
export function listAddresses(
  state: FireblocksState,
  id: string,
  assetId: string,
  query?: URLSearchParams,
): Answer {
  const vault = findVault(state, id);
  if (!vault) return vaultNotFound(id);
  const wallet = vault.assets.get(assetId);
  if (!wallet) return assetNotFound(assetId);
  const presented = wallet.addresses.map((entry) => ({
    assetId,
    address: entry.address,
    description: entry.description,
    tag: '',
    type: 'Permanent',
    ...(entry.customerRefId === undefined ? {} : { customerRefId: entry.customerRefId }),
    addressFormat: 'BASE',
    legacyAddress: '',
    enterpriseAddress: '',
    bip44AddressIndex: entry.bip44AddressIndex,
    userDefined: false,
  }));
  if (query === undefined) return { status: 200, body: presented };
  const limit = Number(query.get('limit') ?? ADDRESS_PAGE_DEFAULT);
  if (!Number.isInteger(limit) || limit < 1 || limit > ADDRESS_PAGE_MAX) {
    return fireblocksError(400, INVALID_VAULT_QUERY_CODE, 'limit has an invalid value');
  }
  const after = Number(query.get('after') ?? -1);
  const page = presented.filter((entry) => entry.bip44AddressIndex > after).slice(0, limit);
  const last = page.at(-1);
  const more = last !== undefined && last.bip44AddressIndex < presented.length - 1;
  return {
    status: 200,
    body: { addresses: page, paging: more ? { after: String(last.bip44AddressIndex) } : {} },
  };
}

/** POST /v1/vault/accounts/{id}/{assetId}/addresses: one more deposit address for the asset wallet. */
export function addAddress(
  state: FireblocksState,
  id: string,
  assetId: string,
  body: Record<string, unknown>,
): Answer {
  const vault = findVault(state, id);
  if (!vault) return vaultNotFound(id);
  const wallet = vault.assets.get(assetId);
  if (!wallet) return assetNotFound(assetId);
  const description = typeof body.description === 'string' ? body.description : '';
  const entry = newAddress(state, vault, assetId, wallet.addresses.length, description);
  wallet.addresses.push({
    ...entry,
    customerRefId: typeof body.customerRefId === 'string' ? body.customerRefId : undefined,
  });
  return {
    status: 200,
    body: {
      address: entry.address,
      legacyAddress: '',
      enterpriseAddress: '',
      tag: '',
      bip44AddressIndex: entry.bip44AddressIndex,
    },
  };
}
