/**
 * Wallets created (with the product check, the owner's existence and the hooks other modules add in the
 * creating transaction), their metadata changed, read, listed, and their balance as of an instant. Status
 * changes are in `status.ts`, under the lock every movement of the wallet takes.
 */
import type { Deps } from '../../../app/deps.ts';
import { recordEvent } from '../../../app/events.ts';
import { appendEvidence } from '../../../app/evidence.ts';
import { requireProduct } from '../../../app/products.ts';
import { getById, listPage, requireById } from '../../../app/reads.ts';
import { isDigitalAsset } from '../../../domain/digitalAssets.ts';
import { resourceMissing } from '../../../domain/errors.ts';
import { walletEventData } from '../../../domain/events.ts';
import { type EvidenceActor, valueDigest } from '../../../domain/evidence.ts';
import type { Metadata } from '../../../domain/metadata.ts';
import type { Currency } from '../../../domain/money.ts';
import type { PageRequest } from '../../../domain/pagination.ts';
import {
  type Balances,
  balanceInstant,
  type Wallet,
  type WalletStatus,
  walletNotActive,
} from '../../../domain/wallets.ts';
import { walletBalanceAsOf } from '../../../store/repositories/walletBalances.ts';
import type { Queryable } from '../../../store/store.ts';
import { requireCustomer } from '../../customers/index.ts';
import {
  findWallet,
  insertWallet,
  listWallets as listWalletRows,
  lockWalletRow,
  updateWalletMetadata,
} from '../repository.ts';

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
  const owner = await requireCustomer(tx, organizationId, input.owner, 'owner');
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
  // What other use cases give a new wallet (its account details, once the organization issues them).
  let created = wallet;
  for (const hook of deps.walletCreatedHooks) created = await hook(tx, deps, created);
  return created;
}

/** `PATCH /v1/wallets/{id}`: the metadata given replaces the wallet's. */
export interface WalletChange {
  metadata?: Metadata | undefined;
}

/**
 * Changes a wallet's metadata, with the wallet's row locked: a `wallet.updated` event and a `wallet.update`
 * evidence record (who, and digests of the old and new metadata) in the same transaction. A closed wallet
 * never changes again (409 `wallet_not_active`); a frozen one may, since metadata moves no money. A change
 * that changes nothing writes nothing.
 */
export async function updateWallet(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  change: WalletChange,
  actor: EvidenceActor,
): Promise<Wallet> {
  if (!(await lockWalletRow(tx, organizationId, id))) throw resourceMissing('wallet', id);
  const wallet = await requireWallet(tx, organizationId, id);
  if (wallet.status === 'closed')
    throw walletNotActive(`Wallet ${id} is closed; a closed wallet never changes again.`);
  if (change.metadata === undefined || valueDigest(change.metadata) === valueDigest(wallet.metadata))
    return wallet;
  const now = deps.now();
  const updated: Wallet = { ...wallet, metadata: change.metadata, updatedAt: now };
  await updateWalletMetadata(tx, updated);
  await recordEvent(tx, deps, now, {
    organizationId,
    type: 'wallet.updated',
    resourceId: id,
    data: { ...walletEventData(updated), changed: ['metadata'], metadata: updated.metadata },
  });
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'wallet.update',
      actor,
      walletId: id,
      customerId: wallet.ownerId,
      data: {
        changes: {
          metadata: { from_sha256: valueDigest(wallet.metadata), to_sha256: valueDigest(updated.metadata) },
        },
      },
    },
  ]);
  return updated;
}

export const getWallet = getById<Wallet>(findWallet, 'wallet');

/** The wallet with this id, read on a transaction (or the pool); 404 naming `param` when the organization has none. */
export const requireWallet = requireById<Wallet>(findWallet, 'wallet');

export interface WalletListRequest extends PageRequest {
  ownerId?: string | undefined;
  currency?: Currency | undefined;
  status?: WalletStatus | undefined;
}

export const listWallets = listPage<Omit<WalletListRequest, keyof PageRequest>, Wallet>(listWalletRows);

/** A wallet's balances as of an instant (entries created strictly before it), exactly. */
export async function getWalletBalanceAsOf(
  deps: Deps,
  organizationId: string,
  walletId: string,
  asOfText: string,
): Promise<{ wallet: Wallet; balances: Balances; asOf: Date }> {
  const asOf = balanceInstant(asOfText, deps.now());
  const wallet = await getWallet(deps, organizationId, walletId);
  const read = await walletBalanceAsOf(deps.store, walletId, asOf);
  if (!read) throw new Error(`wallet ${walletId} has no ledger account`);
  // As walletBalances defines them: available is what was posted less what was held.
  const balances: Balances = {
    currentMinor: read.currentMinor,
    pendingMinor: read.pendingMinor,
    availableMinor: read.currentMinor - read.pendingMinor,
  };
  return { wallet, balances, asOf };
}
