/**
 * Wallets' identities (organization, owner, currency) kept per process: they never change once a wallet
 * exists, so a transfer from a wallet this process has seen needs no read before the writer. What does change
 * (the wallet's status, its balance) is checked by the writer on the account row it locks. The wallets a
 * process has not seen yet are read with those other requests ask for at the same time (coalescedReads.ts).
 */

import type { Deps } from '../../../app/deps.ts';
import { keepNewest, mapForStore } from '../../../app/processCaches.ts';
import type { WalletIdentity } from '../../../domain/wallets.ts';
import { coalescedReaderPerStore } from '../../../store/coalescedReads.ts';
import type { Store } from '../../../store/store.ts';
import { findWalletIdentitiesByIds } from '../repository.ts';

/** Wallet identities one process keeps at most (about 200 bytes each); the oldest is dropped first. */
export const WALLET_IDENTITY_CACHE_ENTRIES_MAX = 100_000;

const caches = new WeakMap<Store, Map<string, WalletIdentity>>();

const cacheKey = (organizationId: string, walletId: string) => `${organizationId}\u0000${walletId}`;

/**
 * Reads identities by `organization\0wallet` key. The statement asks by wallet id alone, so a key answers
 * only when the wallet is that organization's: another organization's wallet reads as absent.
 */
const identityReader = coalescedReaderPerStore(async (store, keys) => {
  const walletIds = [...new Set(keys.map((key) => key.slice(key.indexOf('\u0000') + 1)))];
  const identities = await findWalletIdentitiesByIds(store, walletIds);
  return new Map(identities.map((identity) => [cacheKey(identity.organizationId, identity.id), identity]));
});

/** The organization's wallets among `ids` that exist (a wallet of another organization is absent). */
export async function findWalletIdentities(
  deps: Deps,
  organizationId: string,
  ids: readonly string[],
): Promise<Map<string, WalletIdentity>> {
  const cache = mapForStore(caches, deps.store);
  const found = new Map<string, WalletIdentity>();
  const missing: string[] = [];
  for (const id of ids) {
    const known = cache.get(cacheKey(organizationId, id));
    if (known) found.set(id, known);
    else missing.push(id);
  }
  if (missing.length === 0) return found;
  const read = identityReader(deps.store);
  for (const identity of await Promise.all(missing.map((id) => read(cacheKey(organizationId, id))))) {
    if (!identity) continue;
    found.set(identity.id, identity);
    keepNewest(cache, cacheKey(organizationId, identity.id), identity, WALLET_IDENTITY_CACHE_ENTRIES_MAX);
  }
  return found;
}
