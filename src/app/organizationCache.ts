/**
 * A process cache of one value per organization (its policy, its fee schedule, its AML rules), kept apart
 * per store and read again once older than its time to live; when full, the one loaded longest ago goes.
 */
import { outsideListReads } from '../store/readReplica.ts';
import type { Store } from '../store/store.ts';
import { keepNewest, mapForStore } from './processCaches.ts';

interface CachedValue<V> {
  value: V;
  fetchedAtMs: number;
}

/** A value per organization that hot paths read through `read` and changes drop through `forget`. */
export interface OrganizationCache<V> {
  /** The cached value when read less than the time to live before `nowMs`, else `load`'s, kept. */
  read(store: Store, organizationId: string, nowMs: number, load: () => Promise<V>): Promise<V>;
  /** Drops the organization's value, so the next read loads it again. */
  forget(store: Store, organizationId: string): void;
}

export function organizationCache<V>(ttlMs: number, entriesMax: number): OrganizationCache<V> {
  const caches = new WeakMap<Store, Map<string, CachedValue<V>>>();
  return {
    async read(store, organizationId, nowMs, load) {
      const cache = mapForStore(caches, store);
      const cached = cache.get(organizationId);
      // A clock that went back makes the entry stale too.
      if (cached && nowMs - cached.fetchedAtMs < ttlMs && nowMs >= cached.fetchedAtMs) return cached.value;
      // From the primary even inside a list's handler: the value is kept for the writes that read it.
      const value = await outsideListReads(load);
      keepNewest(cache, organizationId, { value, fetchedAtMs: nowMs }, entriesMax);
      return value;
    },
    forget(store, organizationId) {
      mapForStore(caches, store).delete(organizationId);
    },
  };
}
