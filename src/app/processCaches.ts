/**
 * The pieces of the per-process caches modules keep (wallet identities, system accounts' ids, an
 * organization's settings): one map per store, so two stores in one process (tests, the CLI) never share
 * an entry, and a bound on the entries with the oldest going first.
 */
import type { Store } from '../store/store.ts';

/** The map kept for `store` in `maps`, made the first time it is asked for: caches are kept apart per store. */
export function mapForStore<K, V>(maps: WeakMap<Store, Map<K, V>>, store: Store): Map<K, V> {
  let map = maps.get(store);
  if (!map) {
    map = new Map();
    maps.set(store, map);
  }
  return map;
}

/** Sets `key` as the newest entry; when `entriesMax` are kept already, the oldest one goes. */
export function keepNewest<K, V>(cache: Map<K, V>, key: K, value: V, entriesMax: number): void {
  // Deleted first, so the entry is set again last in the Map's order (the oldest goes when full).
  cache.delete(key);
  if (cache.size >= entriesMax) cache.delete(cache.keys().next().value as K);
  cache.set(key, value);
}
