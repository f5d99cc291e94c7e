/**
 * The per-process caches' pieces: one map per store, and a bound on the entries with the oldest going first
 * (an entry set again counts as the newest).
 */
import { describe, expect, it } from 'vitest';
import { keepNewest, mapForStore } from '../src/app/processCaches.ts';
import type { Store } from '../src/store/store.ts';

describe('process caches', () => {
  it('keeps one map per store, made the first time it is asked for', () => {
    const maps = new WeakMap<Store, Map<string, number>>();
    const first = {} as Store;
    const second = {} as Store;
    mapForStore(maps, first).set('a', 1);
    expect(mapForStore(maps, first).get('a')).toBe(1);
    expect(mapForStore(maps, second).size).toBe(0);
  });

  it('drops the oldest entry when full, and counts an entry set again as the newest', () => {
    const cache = new Map<string, number>();
    keepNewest(cache, 'a', 1, 2);
    keepNewest(cache, 'b', 2, 2);
    keepNewest(cache, 'a', 3, 2);
    keepNewest(cache, 'c', 4, 2);
    expect([...cache.entries()]).toEqual([
      ['a', 3],
      ['c', 4],
    ]);
  });
});
