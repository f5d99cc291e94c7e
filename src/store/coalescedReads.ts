/**
 * Reads by key that concurrent requests share. While one read is in flight, the keys asked for meanwhile
 * wait for it and then go out together in the next: under load, one statement serves many requests (each
 * statement costs a round trip and a few hundred microseconds of CPU on both sides); at rest, a key waits
 * only one turn of the event loop. DataLoader gathers the keys; the schedule is ours.
 */
import DataLoader from 'dataloader';
import type { Store } from './store.ts';

/** Keys one coalesced read carries at most; more go out as further reads at once. */
export const COALESCED_READ_KEYS_MAX = 500;

/** Looks up one key, sharing the statement with the keys other requests ask for at about the same time. */
export type CoalescedReader<V> = (key: string) => Promise<V | undefined>;

/**
 * A reader over `readMany`, which must answer every key it is given that exists (a key absent from its map
 * reads as undefined). A failed read fails every key it carried; the next keys get a read of their own.
 */
export function coalescedReader<V>(
  readMany: (keys: readonly string[]) => Promise<ReadonlyMap<string, V>>,
): CoalescedReader<V> {
  let inFlight: Promise<unknown> | undefined;
  const loader = new DataLoader<string, V | undefined>(
    async (keys) => {
      const read = readMany(keys);
      inFlight = read;
      try {
        const found = await read;
        return keys.map((key) => found.get(key));
      } finally {
        if (inFlight === read) inFlight = undefined;
      }
    },
    {
      // Every read goes to the database: what may be kept is kept by the caller, which knows how long.
      cache: false,
      maxBatchSize: COALESCED_READ_KEYS_MAX,
      batchScheduleFn: (dispatch) => {
        if (inFlight) void inFlight.then(dispatch, dispatch);
        else setImmediate(dispatch);
      },
    },
  );
  return (key) => loader.load(key);
}

/** One reader per store (a process may open several, as tests do), made on first use. */
export function coalescedReaderPerStore<V>(
  readMany: (store: Store, keys: readonly string[]) => Promise<ReadonlyMap<string, V>>,
): (store: Store) => CoalescedReader<V> {
  const readers = new WeakMap<Store, CoalescedReader<V>>();
  return (store) => {
    let reader = readers.get(store);
    if (!reader) {
      reader = coalescedReader((keys) => readMany(store, keys));
      readers.set(store, reader);
    }
    return reader;
  };
}
