/**
 * What a process keeps of wallets' activity between the ledger writer's batches, per store: a wallet's
 * movements in its window (or, for a busy wallet, its counts as of its last batch) and the destinations it
 * looked up. An entry is used only while the wallet's ledger sums are what this process left them at.
 */
import type { MovementTally } from '../../../../domain/activityTally.ts';
import type { AmlMovement } from '../../../../domain/decisions/aml.ts';
import type { AccountSums } from '../../../ledger/index.ts';

/**
 * Wallets whose activity a process keeps between batches. A hot wallet's batches then skip re-reading the
 * same history: the entry is valid only while the wallet's ledger sums are what this process left them at
 * (any movement by another process or path changes them) and the rules' window is the same.
 */
export const AML_ACTIVITY_CACHE_WALLETS_MAX = 10_000;
/**
 * Movements and destinations the cache holds at most over all its wallets (a movement about 70 bytes in a
 * heap snapshot, a destination more, so 15–30 MB): the wallet bound alone would let 10,000 busy wallets
 * keep 500 movements each way. The wallets used longest ago go first.
 */
export const AML_ACTIVITY_CACHE_ENTRIES_MAX = 200_000;
/** Destinations one wallet's entry remembers at most (the oldest looked up go first; a lookup is redone). */
export const AML_ACTIVITY_CACHE_DESTINATIONS_MAX = 1_000;

/** A busy wallet's counts as of `asOf`, per spec, with when the oldest movement each counts was created. */
export interface KeptCounts {
  specsKey: string;
  asOf: Date;
  counts: Map<string, MovementTally>;
  oldestMs: Map<string, number>;
}

export interface CachedActivity {
  /** The wallet's four sums after the batch that left this entry. */
  sumsKey: string;
  windowSeconds: number;
  outgoing: AmlMovement[];
  incoming: AmlMovement[];
  /** Destinations (as stored JSON) already looked up: their counterparty key and whether it was paid. */
  destinations: Map<string, { key: string; known: boolean }>;
  /**
   * A busy wallet (more in its window than the lists hold; its lists then empty): each spec's count as of
   * `asOf`, moved on by what time lets go of when used again.
   */
  tallies?: KeptCounts;
}

/** Per store: the wallets' entries, least recently kept first, and how many movements and destinations they hold. */
export class ActivityCache {
  private readonly wallets = new Map<string, CachedActivity>();
  private entries = 0;

  get(wallet: string): CachedActivity | undefined {
    return this.wallets.get(wallet);
  }

  set(wallet: string, activity: CachedActivity): void {
    this.delete(wallet);
    this.wallets.set(wallet, activity);
    this.entries += entriesOf(activity);
    while (
      this.wallets.size > AML_ACTIVITY_CACHE_WALLETS_MAX ||
      (this.entries > AML_ACTIVITY_CACHE_ENTRIES_MAX && this.wallets.size > 1)
    ) {
      this.delete(this.wallets.keys().next().value as string);
    }
  }

  private delete(wallet: string): void {
    const old = this.wallets.get(wallet);
    if (!old) return;
    this.entries -= entriesOf(old);
    this.wallets.delete(wallet);
  }
}

function entriesOf(activity: CachedActivity): number {
  return (
    activity.outgoing.length +
    activity.incoming.length +
    activity.destinations.size +
    (activity.tallies?.counts.size ?? 0)
  );
}

const activityCaches = new WeakMap<object, ActivityCache>();

export function activityCacheOf(store: object): ActivityCache {
  let cache = activityCaches.get(store);
  if (!cache) {
    cache = new ActivityCache();
    activityCaches.set(store, cache);
  }
  return cache;
}

export function sumsKeyOf(sums: AccountSums | undefined): string {
  return sums
    ? `${sums.debitsPending}/${sums.debitsPosted}/${sums.creditsPending}/${sums.creditsPosted}`
    : '';
}
