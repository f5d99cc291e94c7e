/**
 * Money leaves a savings account only as a withdrawal: the movement-source guard that refuses a savings
 * account as the source of a transfer, a batch or a conversion, with what a process knows of which
 * wallets are savings accounts.
 */

import type { Deps, MovementSourceGuard } from '../../../app/deps.ts';
import { keepNewest, mapForStore } from '../../../app/processCaches.ts';
import { AppError } from '../../../domain/errors.ts';
import { coalescedReaderPerStore } from '../../../store/coalescedReads.ts';
import type { Queryable, Store } from '../../../store/store.ts';
import { savingsWalletIds } from '../repository/accounts.ts';

/** Wallet ids whose savings-or-not answer one process keeps at most. */
export const SAVINGS_WALLET_CACHE_ENTRIES_MAX = 100_000;

const savingsWalletCaches = new WeakMap<Store, Map<string, boolean>>();

/** Reads whether wallets are savings accounts, sharing the statement between concurrent requests. */
const savingsReader = coalescedReaderPerStore(async (store, walletIds) => {
  const savings = await savingsWalletIds(store, walletIds);
  return new Map(walletIds.map((id) => [id, savings.has(id)]));
});

/**
 * Whether a wallet is a savings account. A wallet is one from the transaction that creates it, or never, so
 * the answer is kept per process once the wallet exists. `db` is the caller's transaction when it is in one
 * (the embedded database has one session).
 */
export async function isSavingsWallet(deps: Deps, db: Queryable, walletId: string): Promise<boolean> {
  const cache = mapForStore(savingsWalletCaches, deps.store);
  const known = cache.get(walletId);
  if (known !== undefined) return known;
  // Outside a transaction the read is shared with other requests'; inside one, it is the transaction's own.
  const found =
    db === deps.store
      ? (await savingsReader(deps.store)(walletId)) === true
      : (await savingsWalletIds(db, [walletId])).has(walletId);
  keepNewest(cache, walletId, found, SAVINGS_WALLET_CACHE_ENTRIES_MAX);
  return found;
}

/**
 * Refuses a transfer, batch or conversion from a savings account: money leaves one only as a withdrawal to a
 * wallet of its owner (the database refuses such a transfer too): a movement source guard, see
 * src/app/composition.ts.
 */
export const refuseSavingsSource: MovementSourceGuard = async (deps, db, walletId, param) => {
  if (!(await isSavingsWallet(deps, db, walletId))) return;
  throw new AppError({
    status: 422,
    code: 'savings_account_cannot_send',
    title: 'A savings account cannot send',
    detail: `Wallet ${walletId} is a savings account: it cannot pay out to a rail or another wallet. Withdraw to a wallet of its owner with POST /v1/savings-accounts/${walletId}/withdrawals.`,
    param,
  });
};
