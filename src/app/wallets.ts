import { isDigitalAsset } from '../domain/digitalAssets.ts';
import { resourceMissing } from '../domain/errors.ts';
import type { Metadata } from '../domain/metadata.ts';
import type { Currency } from '../domain/money.ts';
import { type Page, type PageRequest, toPage } from '../domain/pagination.ts';
import type { Wallet, WalletStatus } from '../domain/wallets.ts';
import { findCustomer } from '../store/repositories/customers.ts';
import { findWallet, insertWallet, listWallets as listWalletRows } from '../store/repositories/wallets.ts';
import type { Queryable } from '../store/store.ts';
import type { Deps } from './deps.ts';
import { accountDetailsForNewWallet } from './digitalAccounts.ts';
import { requireProduct } from './products.ts';

export interface CreateWalletInput {
  owner: string;
  currency: Currency;
  metadata?: Metadata | undefined;
}

export async function createWallet(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: CreateWalletInput,
): Promise<Wallet> {
  // Another organization's customer is indistinguishable from one that does not exist.
  const owner = await findCustomer(tx, organizationId, input.owner);
  if (!owner) throw resourceMissing('customer', input.owner, 'owner');
  if (isDigitalAsset(input.currency))
    await requireProduct(deps, organizationId, 'stablecoins', 'currency', tx);
  const now = deps.now();
  const wallet: Wallet = {
    id: deps.newId('wallet'),
    organizationId,
    ownerId: owner.id,
    currency: input.currency,
    status: 'active',
    statusReason: null,
    statusChangedAt: null,
    availableMinor: 0n,
    pendingMinor: 0n,
    currentMinor: 0n,
    metadata: input.metadata ?? {},
    accountDetails: null,
    createdAt: now,
    updatedAt: now,
  };
  await insertWallet(tx, wallet);
  // Once the organization issues account numbers, every new wallet has its details from the start.
  return { ...wallet, accountDetails: await accountDetailsForNewWallet(tx, deps, wallet) };
}

export async function getWallet(deps: Deps, organizationId: string, id: string): Promise<Wallet> {
  const wallet = await findWallet(deps.store, organizationId, id);
  if (!wallet) throw resourceMissing('wallet', id);
  return wallet;
}

export interface WalletListRequest extends PageRequest {
  ownerId?: string | undefined;
  currency?: Currency | undefined;
  status?: WalletStatus | undefined;
}

export async function listWallets(
  deps: Deps,
  organizationId: string,
  request: WalletListRequest,
): Promise<Page<Wallet>> {
  const rows = await listWalletRows(deps.store, organizationId, request, request.limit + 1);
  return toPage(rows, request.limit);
}
