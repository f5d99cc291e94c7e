/**
 * Fireblocks custody of a wallet's deposits: one vault account per Mkoba wallet (named after it, its
 * customerRefId the wallet id), an asset wallet in it per asset and network, and that asset wallet's first
 * address as the wallet's deposit address. Found again by name before anything is created, so asking twice
 * gives the same address. And the wallet vaults' asset wallets with their balances (reserves, sweeps).
 */
import type { DigitalAsset, DigitalAssetNetwork } from '../../../../domain/digitalAssets.ts';
import { isRecord } from '../../../../domain/json.ts';
import type { PartnerAccountBalance } from '../../../../rails/balances.ts';
import {
  type FireblocksConfig,
  FireblocksError,
  fireblocksIdempotencyKey,
  fireblocksRequest,
} from './connection.ts';
import { FIREBLOCKS_ASSET_IDS, minorOfFireblocksAmount, stablecoinOfAssetId } from './protocol.ts';

/** The vault account name of a wallet's custody: the prefix the reserves read finds them all by. */
const WALLET_VAULT_PREFIX = 'mkoba ';
export const vaultNameOf = (walletId: string) => `${WALLET_VAULT_PREFIX}${walletId}`;
/** Vault accounts one page of accounts_paged holds (Fireblocks' largest). */
const FIREBLOCKS_VAULT_PAGE = 500;
/** Pages one reserves read follows at most (100,000 wallets); past it the read fails rather than undercount. */
const FIREBLOCKS_VAULT_PAGES_MAX = 200;

function answered(answer: { status: number; body: unknown }, what: string): Record<string, unknown> {
  if (answer.status !== 200 || !isRecord(answer.body)) {
    throw new FireblocksError(`Fireblocks answered ${answer.status} to ${what}`);
  }
  return answer.body;
}

/** The wallet's vault account, made when there is none: its id and the asset ids it holds. */
async function walletVault(config: FireblocksConfig, walletId: string) {
  const name = vaultNameOf(walletId);
  const query = new URLSearchParams({ namePrefix: name, limit: '10' });
  const page = answered(
    await fireblocksRequest(config, 'GET', `/vault/accounts_paged?${query}`),
    'a vault lookup',
  );
  const accounts = Array.isArray(page.accounts) ? page.accounts.filter(isRecord) : [];
  const found =
    accounts.find((account) => account.name === name) ??
    answered(
      // Two first requests at once both miss the lookup; the key makes Fireblocks create one vault account
      // and answer both with it.
      await fireblocksRequest(
        config,
        'POST',
        '/vault/accounts',
        { name, customerRefId: walletId, hiddenOnUI: true },
        fireblocksIdempotencyKey(`vault account ${walletId}`),
      ),
      'a new vault account',
    );
  if (typeof found.id !== 'string')
    throw new FireblocksError('Fireblocks gave a vault account without an id');
  const assets = Array.isArray(found.assets) ? found.assets.filter(isRecord).map((asset) => asset.id) : [];
  return { id: found.id, assets };
}

/** The deposit address of the wallet's asset on the network, from its vault account (made as needed). */
export async function fireblocksDepositAddress(
  config: FireblocksConfig,
  walletId: string,
  asset: DigitalAsset,
  network: DigitalAssetNetwork,
): Promise<string> {
  const assetId = FIREBLOCKS_ASSET_IDS[network][asset];
  const vault = await walletVault(config, walletId);
  const base = `/vault/accounts/${encodeURIComponent(vault.id)}/${encodeURIComponent(assetId)}`;
  if (!vault.assets.includes(assetId)) {
    const key = fireblocksIdempotencyKey(`asset wallet ${vault.id} ${assetId}`);
    const created = await fireblocksRequest(config, 'POST', base, undefined, key);
    // Refused (the asset wallet exists already, made by a request at the same moment): its address is listed.
    if (created.status === 200 && isRecord(created.body) && typeof created.body.address === 'string') {
      if (created.body.address !== '') return created.body.address;
    } else if (created.status >= 500) {
      throw new FireblocksError(`Fireblocks answered ${created.status} to a new asset wallet`);
    }
  }
  const listed = answered(
    await fireblocksRequest(config, 'GET', `${base}/addresses_paginated?limit=1`),
    'an address lookup',
  );
  const [first] = Array.isArray(listed.addresses) ? listed.addresses.filter(isRecord) : [];
  if (typeof first?.address !== 'string') throw new FireblocksError('Fireblocks gave no deposit address');
  return first.address;
}

/** A stablecoin asset wallet in a wallet's vault account, with its balance in minor units. */
export interface CustodyVaultAsset {
  /** The Mkoba wallet the vault account was made for (from its name). */
  walletId: string;
  vaultAccountId: string;
  assetId: string;
  currency: DigitalAsset;
  totalMinor: bigint;
  availableMinor: bigint;
}

function vaultAsset(
  walletId: string,
  vaultId: string,
  asset: Record<string, unknown>,
): CustodyVaultAsset | undefined {
  const currency = stablecoinOfAssetId(asset.id);
  if (currency === undefined) return undefined;
  const total = minorOfFireblocksAmount(asset.total);
  const available = minorOfFireblocksAmount(asset.available);
  if (total === undefined || available === undefined) {
    throw new FireblocksError(`Fireblocks gave vault ${vaultId} an unreadable ${String(asset.id)} balance`);
  }
  return {
    walletId,
    vaultAccountId: vaultId,
    assetId: String(asset.id),
    currency,
    totalMinor: total,
    availableMinor: available,
  };
}

/**
 * The stablecoin asset wallets of every wallet's vault account (those named `mkoba …`), read page by page
 * with accounts_paged. All or nothing: a page that does not answer, or more pages than
 * FIREBLOCKS_VAULT_PAGES_MAX, fails the read, so a partial list is never taken for the whole.
 */
export async function fireblocksWalletVaultAssets(config: FireblocksConfig): Promise<CustodyVaultAsset[]> {
  const found: CustodyVaultAsset[] = [];
  let after: string | undefined;
  for (let page = 0; page < FIREBLOCKS_VAULT_PAGES_MAX; page++) {
    const query = new URLSearchParams({
      namePrefix: WALLET_VAULT_PREFIX,
      limit: String(FIREBLOCKS_VAULT_PAGE),
      ...(after === undefined ? {} : { after }),
    });
    const listed = answered(
      await fireblocksRequest(config, 'GET', `/vault/accounts_paged?${query}`),
      'a vault list',
    );
    for (const vault of Array.isArray(listed.accounts) ? listed.accounts.filter(isRecord) : []) {
      if (typeof vault.name !== 'string' || !vault.name.startsWith(WALLET_VAULT_PREFIX)) continue;
      for (const asset of Array.isArray(vault.assets) ? vault.assets.filter(isRecord) : []) {
        const read = vaultAsset(vault.name.slice(WALLET_VAULT_PREFIX.length), String(vault.id), asset);
        if (read) found.push(read);
      }
    }
    const next = isRecord(listed.paging) ? listed.paging.after : undefined;
    if (typeof next !== 'string' || next === '') return found;
    after = next;
  }
  throw new FireblocksError(`more than ${FIREBLOCKS_VAULT_PAGES_MAX} pages of vault accounts`);
}

/** The wallet vaults' asset wallets as balances: `current` is the total, `available` less what is locked. */
export async function fireblocksWalletVaultBalances(
  config: FireblocksConfig,
): Promise<PartnerAccountBalance[]> {
  return (await fireblocksWalletVaultAssets(config)).map((a) => ({
    account: `vault ${a.vaultAccountId} ${a.assetId}`,
    currency: a.currency,
    availableMinor: a.availableMinor,
    currentMinor: a.totalMinor,
    walletId: a.walletId,
  }));
}
