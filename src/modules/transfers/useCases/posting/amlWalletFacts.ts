/**
 * What the AML monitor knows of a source wallet's activity within one ledger writer batch, and the pure steps
 * over it: the activity each organization's authorization policy reads, a busy wallet's counts as counted or
 * moved on, and what a batch leaves of a wallet in the process's cache.
 */
import {
  addTallies,
  countedTally,
  type MovementTally,
  NO_MOVEMENTS,
  oldestListedMs,
  slidRange,
  subtractTallies,
  type TallySpec,
  tallyKey,
  tallyList,
} from '../../../../domain/activityTally.ts';
import { AML_HISTORY_TRANSFERS_MAX, type AmlMovement } from '../../../../domain/decisions/aml.ts';
import { type Policy, policyNeeds } from '../../../../domain/decisions/policies.ts';
import type { Transfer } from '../../../../domain/transferRecord.ts';
import type { CountedMovements } from '../../../../store/repositories/walletActivity.ts';
import {
  AML_ACTIVITY_CACHE_DESTINATIONS_MAX,
  type CachedActivity,
  type KeptCounts,
} from './activityCache.ts';

/** What an organization's authorization policy reads of a wallet's activity. */
export interface PolicyActivityNeeds {
  /** How far back it looks (0: never). */
  windowSeconds: number;
  /** The windows its aggregate matchers count. */
  aggregateWindowsSeconds: ReadonlySet<number>;
}

/** What each organization's policy reads of a wallet's activity: the AML monitor reads it for both. */
export function policyActivityOf(
  commands: readonly { transfer: Transfer; policy: Policy }[],
): Map<string, PolicyActivityNeeds> {
  const policyActivity = new Map<string, PolicyActivityNeeds>();
  for (const c of commands) {
    const needs = policyNeeds(c.policy);
    const before = policyActivity.get(c.transfer.organizationId);
    policyActivity.set(c.transfer.organizationId, {
      windowSeconds: Math.max(needs.activityWindowSeconds, before?.windowSeconds ?? 0),
      aggregateWindowsSeconds: new Set([
        ...(before?.aggregateWindowsSeconds ?? []),
        ...needs.aggregateWindowsSeconds,
      ]),
    });
  }
  return policyActivity;
}

export interface WalletFacts {
  organizationId: string;
  /** Movements out, newest first: every one in the window, or (with `unlisted`) only this batch's. */
  outgoing: AmlMovement[];
  incoming: AmlMovement[];
  /**
   * A wallet busier than the lists hold: each spec's count of what committed before this batch, by tallyKey.
   * The lists then hold only what the batch adds.
   */
  unlisted?: Map<string, MovementTally>;
  /**
   * Per spec, no movement `unlisted` counts was created before this (epoch ms; Infinity: it counts none), so
   * nothing it counts leaves the window before this plus the window.
   */
  unlistedOldestMs?: Map<string, number>;
  /** Counterparty keys this wallet paid (known from before, or paid earlier in this batch). */
  paid: Set<string>;
  destinations: Map<string, { key: string; known: boolean }>;
  windowSeconds: number;
}

/** A wallet whose window holds more than the lists: counted afresh, or from counts kept at an earlier time. */
export interface BusyWallet {
  wallet: string;
  kept?: KeptCounts;
}

/** What committed before the batch and the lists do not hold, for one spec (none for a listed wallet). */
export function unlistedTally(facts: WalletFacts | undefined, spec: TallySpec): MovementTally {
  return facts?.unlisted ? countedTally(facts.unlisted, spec) : NO_MOVEMENTS;
}

/** A wallet's facts as this process's cache kept them; a busy wallet's counts are moved on apart. */
export function factsFromCache(
  cached: CachedActivity,
  organizationId: string,
  windowSeconds: number,
): WalletFacts {
  return {
    organizationId,
    outgoing: [...cached.outgoing],
    incoming: [...cached.incoming],
    paid: new Set([...cached.destinations.values()].filter((d) => d.known).map((d) => d.key)),
    destinations: new Map(cached.destinations),
    windowSeconds,
  };
}

/**
 * A busy wallet's counts from one statement's answers (this wallet's from `offset`, one per spec): read afresh,
 * each spec's window counted; kept from an earlier batch, only what its windows let go of since, taken off
 * what was kept.
 */
export function setUnlistedCounts(
  facts: WalletFacts,
  specs: readonly TallySpec[],
  kept: KeptCounts | undefined,
  counted: readonly CountedMovements[],
  offset: number,
  now: Date,
): void {
  facts.unlisted = new Map();
  facts.unlistedOldestMs = new Map();
  specs.forEach((spec, s) => {
    const key = tallyKey(spec);
    const read = counted[offset + s] ?? { ...NO_MOVEMENTS, oldestAt: null };
    if (!kept) {
      facts.unlisted?.set(key, read);
      facts.unlistedOldestMs?.set(key, read.oldestAt?.getTime() ?? Infinity);
      return;
    }
    const left = subtractTallies(countedTally(kept.counts, spec), read);
    facts.unlisted?.set(key, left);
    // What is left was created at or after the slice's end: an empty slice moves the bound up to it;
    // after a slice that let go of something, exactly when the oldest left was created is not read.
    const sliceEnd = slidRange(spec, kept.asOf, now).before.getTime();
    const oldest = read.count === 0 ? Math.max(kept.oldestMs.get(key) ?? -Infinity, sliceEnd) : sliceEnd;
    facts.unlistedOldestMs?.set(key, left.count === 0 ? Infinity : oldest);
  });
}

/** What the cache keeps of a wallet as the batch leaves it: its movements still in the window, its destinations. */
export function listedActivity(facts: WalletFacts, sumsKey: string, now: Date): CachedActivity {
  const since = now.getTime() - facts.windowSeconds * 1_000;
  const outgoing = facts.outgoing.filter((m) => m.at.getTime() >= since);
  const incoming = facts.incoming.filter((m) => m.at.getTime() >= since);
  const destinations = new Map(
    [...facts.destinations]
      .slice(-AML_ACTIVITY_CACHE_DESTINATIONS_MAX)
      .map(([json, d]) => [json, { key: d.key, known: d.known || facts.paid.has(d.key) }]),
  );
  return { sumsKey, windowSeconds: facts.windowSeconds, outgoing, incoming, destinations };
}

/** Whether a wallet is kept as counts: it was busy, or this batch made its lists longer than they hold. */
export function keptAsCounts(facts: WalletFacts, kept: CachedActivity): boolean {
  return (
    facts.unlisted !== undefined ||
    kept.outgoing.length > AML_HISTORY_TRANSFERS_MAX ||
    kept.incoming.length > AML_HISTORY_TRANSFERS_MAX
  );
}

/** A busy wallet's entry as counts as of now, the lists folded into them. */
export function foldIntoCounts(
  kept: CachedActivity,
  facts: WalletFacts,
  { specs, key: keyOfSpecs }: { specs: readonly TallySpec[]; key: string },
  now: Date,
): void {
  const { outgoing, incoming } = kept;
  kept.outgoing = [];
  kept.incoming = [];
  kept.tallies = {
    specsKey: keyOfSpecs,
    asOf: now,
    oldestMs: new Map(
      specs.map((spec) => [
        tallyKey(spec),
        Math.min(
          oldestListedMs(spec.direction === 'outgoing' ? outgoing : incoming, now, spec),
          facts.unlisted ? (facts.unlistedOldestMs?.get(tallyKey(spec)) ?? -Infinity) : Infinity,
        ),
      ]),
    ),
    counts: new Map(
      specs.map((spec) => [
        tallyKey(spec),
        addTallies(
          tallyList(spec.direction === 'outgoing' ? outgoing : incoming, now, spec),
          unlistedTally(facts, spec),
        ),
      ]),
    ),
  };
}
