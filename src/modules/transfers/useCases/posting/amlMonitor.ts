/**
 * AML monitoring inside the ledger writer's batch. The rules are read before the transaction (cached per
 * process); the source wallets' recent activity is read once per batch after their accounts are locked, so
 * every transfer from a wallet is judged after the ones committed before it; and each transfer the batch
 * accepts is added to what the next one from the same wallet sees. Two transfers racing from one wallet
 * therefore cannot both slip under a velocity or structuring rule.
 */

import type { Deps } from '../../../../app/deps.ts';
import {
  addTallies,
  distinctSpecs,
  type MovementTally,
  slidRange,
  specsKey,
  type TallySpec,
  tallyKey,
  tallyList,
  windowRange,
} from '../../../../domain/activityTally.ts';
import {
  AML_HISTORY_TRANSFERS_MAX,
  type AmlHit,
  type AmlRule,
  amlHistoryWindowSeconds,
  amlTallySpecs,
  applicableRules,
  evaluateAmlRules,
} from '../../../../domain/decisions/aml.ts';
import type { Transfer } from '../../../../domain/transferRecord.ts';
import {
  readWalletActivity,
  type TallyQuery,
  tallyWalletActivity,
  type WalletActivity,
} from '../../../../store/repositories/walletActivity.ts';
import type { Queryable } from '../../../../store/store.ts';
import { loadAmlRules } from '../../../compliance/index.ts';
import type { AccountSums } from '../../../ledger/index.ts';
import { activityCacheOf, type CachedActivity, type KeptCounts, sumsKeyOf } from './activityCache.ts';
import {
  type BusyWallet,
  factsFromCache,
  foldIntoCounts,
  keptAsCounts,
  listedActivity,
  type PolicyActivityNeeds,
  setUnlistedCounts,
  unlistedTally,
  type WalletFacts,
} from './amlWalletFacts.ts';

/** What a transfer command tells the monitor. */
export interface MonitoredTransfer {
  transfer: Transfer;
  debitAccountId: string;
}

export interface AmlVerdict {
  rulesEvaluated: { id: string; version: number }[];
  hits: AmlHit[];
}

export class AmlBatchMonitor {
  private readonly facts = new Map<string, WalletFacts>();
  /** Each command's counterparty key, as the database computes it. */
  private readonly counterpartyKeys = new Map<MonitoredTransfer, string>();
  private readonly specsByOrganization = new Map<string, { specs: TallySpec[]; key: string }>();

  private constructor(
    private readonly rulesByOrganization: Map<string, AmlRule[]>,
    /** Per organization, what its authorization policy reads of a wallet's activity. */
    private readonly policyNeeds: ReadonlyMap<string, PolicyActivityNeeds>,
  ) {}

  /**
   * Reads each organization's rules (through the cache), before the batch's transaction. The same
   * activity serves the authorization policies' counterparty and aggregate matchers: `policyNeeds` says
   * what each organization's policy reads.
   */
  static async prepare(
    deps: Deps,
    commands: readonly MonitoredTransfer[],
    policyNeeds: ReadonlyMap<string, PolicyActivityNeeds> = new Map(),
  ): Promise<AmlBatchMonitor> {
    const rules = new Map<string, AmlRule[]>();
    for (const organizationId of new Set(commands.map((c) => c.transfer.organizationId))) {
      rules.set(organizationId, await loadAmlRules(deps, organizationId));
    }
    return new AmlBatchMonitor(rules, policyNeeds);
  }

  /** The window an organization's activity is read over: the longest its AML rules or policy need. */
  private windowOf(organizationId: string): number {
    return Math.max(
      amlHistoryWindowSeconds(this.rulesByOrganization.get(organizationId) ?? []),
      this.policyNeeds.get(organizationId)?.windowSeconds ?? 0,
    );
  }

  /**
   * Every count an organization's rules and policy take of a wallet's activity, and their key: worked out
   * once per batch and organization (the rules and policy do not change within a batch).
   */
  private tallySpecsOf(organizationId: string): { specs: TallySpec[]; key: string } {
    let known = this.specsByOrganization.get(organizationId);
    if (!known) {
      const aggregates = this.policyNeeds.get(organizationId)?.aggregateWindowsSeconds ?? [];
      const specs = distinctSpecs([
        ...amlTallySpecs(this.rulesByOrganization.get(organizationId) ?? []),
        ...[...aggregates].map((windowSeconds): TallySpec => ({ direction: 'outgoing', windowSeconds })),
      ]);
      known = { specs, key: specsKey(specs) };
      this.specsByOrganization.set(organizationId, known);
    }
    return known;
  }

  private watches(command: MonitoredTransfer): boolean {
    return (
      this.rulesFor(command).length > 0 ||
      (this.policyNeeds.get(command.transfer.organizationId)?.windowSeconds ?? 0) > 0
    );
  }

  private rulesFor(command: MonitoredTransfer): AmlRule[] {
    const t = command.transfer;
    return applicableRules(this.rulesByOrganization.get(t.organizationId) ?? [], t.currency);
  }

  /**
   * The source wallets' activity after their accounts are locked: from this process's cache where it is
   * still valid, else read with one statement per organization.
   */
  async readActivity(
    tx: Queryable,
    store: object,
    commands: readonly MonitoredTransfer[],
    now: Date,
    lockedSums: (walletId: string) => AccountSums | undefined,
  ): Promise<void> {
    const cache = activityCacheOf(store);
    const toRead = new Map<string, MonitoredTransfer[]>();
    /** Per organization, the busy wallets whose counts are to be read or moved on. */
    const toCount = new Map<string, BusyWallet[]>();
    for (const command of commands) {
      if (!this.watches(command)) continue;
      const organizationId = command.transfer.organizationId;
      const wallet = command.debitAccountId;
      this.startFromCache(command, cache.get(wallet), now, lockedSums, toCount);
      const facts = this.facts.get(wallet);
      const known = facts?.destinations.get(JSON.stringify(command.transfer.destination));
      if (facts && known) {
        this.counterpartyKeys.set(command, known.key);
        continue;
      }
      // A wallet whose activity is known needs only its new counterparty looked up: no history rows.
      listIn(toRead, `${organizationId}\u0000${facts ? 'counterparty' : 'activity'}`).push(command);
    }
    for (const [group, own] of toRead) {
      const [organizationId = '', need] = group.split('\u0000');
      const windowSeconds = this.windowOf(organizationId);
      const activity = await readWalletActivity(
        tx,
        organizationId,
        own.map((c) => ({ walletId: c.debitAccountId, destination: c.transfer.destination })),
        new Date(now.getTime() - windowSeconds * 1_000),
        need === 'activity' ? AML_HISTORY_TRANSFERS_MAX : 0,
      );
      this.learnActivity(organizationId, windowSeconds, own, activity, toCount);
    }
    for (const [organizationId, busy] of toCount) await this.countBusyWallets(tx, organizationId, busy, now);
  }

  /**
   * A wallet's facts from this process's cache, when the entry is still valid: the wallet's sums as locked
   * are those the entry was left at, with the same window and counts (kept counts no later than now).
   */
  private startFromCache(
    command: MonitoredTransfer,
    cached: CachedActivity | undefined,
    now: Date,
    lockedSums: (walletId: string) => AccountSums | undefined,
    toCount: Map<string, BusyWallet[]>,
  ): void {
    const organizationId = command.transfer.organizationId;
    const windowSeconds = this.windowOf(organizationId);
    const wallet = command.debitAccountId;
    const usable =
      cached !== undefined &&
      cached.sumsKey === sumsKeyOf(lockedSums(wallet)) &&
      cached.windowSeconds === windowSeconds &&
      (cached.tallies === undefined ||
        (cached.tallies.specsKey === this.tallySpecsOf(organizationId).key &&
          cached.tallies.asOf.getTime() <= now.getTime()));
    if (usable && !this.facts.has(wallet)) {
      this.facts.set(wallet, factsFromCache(cached, organizationId, windowSeconds));
      if (cached.tallies) this.moveOn(wallet, cached.tallies, now, toCount);
    }
  }

  /** What one statement read of a group's wallets: each new wallet's facts, and each command's counterparty. */
  private learnActivity(
    organizationId: string,
    windowSeconds: number,
    own: readonly MonitoredTransfer[],
    activity: readonly WalletActivity[],
    toCount: Map<string, BusyWallet[]>,
  ): void {
    own.forEach((command, i) => {
      const read = activity[i];
      if (!read) return;
      this.counterpartyKeys.set(command, read.counterpartyKey);
      let facts = this.facts.get(command.debitAccountId);
      if (!facts) {
        facts = {
          organizationId,
          outgoing: read.complete ? read.outgoing : [],
          incoming: read.complete ? read.incoming : [],
          paid: new Set(),
          destinations: new Map(),
          windowSeconds,
        };
        if (!read.complete) listIn(toCount, organizationId).push({ wallet: command.debitAccountId });
        this.facts.set(command.debitAccountId, facts);
      }
      if (read.counterpartyKnown) facts.paid.add(read.counterpartyKey);
      facts.destinations.set(JSON.stringify(command.transfer.destination), {
        key: read.counterpartyKey,
        known: read.counterpartyKnown,
      });
    });
  }

  /**
   * A busy wallet's kept counts, used as they are when nothing they count can have left a window since
   * (its oldest movement is still inside); otherwise the slices that may have are counted (`toCount`).
   */
  private moveOn(wallet: string, kept: KeptCounts, now: Date, toCount: Map<string, BusyWallet[]>): void {
    const facts = this.facts.get(wallet);
    if (!facts) return;
    const { specs } = this.tallySpecsOf(facts.organizationId);
    const leaving = specs.some(
      (spec) => (kept.oldestMs.get(tallyKey(spec)) ?? -Infinity) < now.getTime() - spec.windowSeconds * 1_000,
    );
    if (leaving) {
      listIn(toCount, facts.organizationId).push({ wallet, kept });
      return;
    }
    facts.unlisted = new Map(kept.counts);
    facts.unlistedOldestMs = new Map(kept.oldestMs);
  }

  /**
   * The counts of wallets with more activity than the lists hold, with one statement: a wallet read afresh
   * has each spec's window counted; one kept from an earlier batch has counted only what its windows let go
   * of since, which is taken off what was kept.
   */
  private async countBusyWallets(
    tx: Queryable,
    organizationId: string,
    busy: readonly BusyWallet[],
    now: Date,
  ): Promise<void> {
    const { specs } = this.tallySpecsOf(organizationId);
    const queries: TallyQuery[] = busy.flatMap(({ wallet, kept }) =>
      specs.map((spec) => ({
        walletId: wallet,
        spec,
        ...(kept ? slidRange(spec, kept.asOf, now) : windowRange(spec, now)),
      })),
    );
    const counted = await tallyWalletActivity(tx, organizationId, queries);
    busy.forEach(({ wallet, kept }, w) => {
      const facts = this.facts.get(wallet);
      if (facts) setUnlistedCounts(facts, specs, kept, counted, w * specs.length, now);
    });
  }

  /**
   * Keeps each source wallet's activity as this batch leaves it, keyed by the wallet's sums after the
   * batch; called once the batch's decisions are made (a batch that does not commit leaves other sums in
   * the database, so its entries never match).
   */
  remember(store: object, sumsAfter: (walletId: string) => AccountSums | undefined, now: Date): void {
    const cache = activityCacheOf(store);
    for (const [wallet, facts] of this.facts) {
      const kept = listedActivity(facts, sumsKeyOf(sumsAfter(wallet)), now);
      // Busy (or made busy by this batch): kept as counts as of now, the lists folded into them.
      if (keptAsCounts(facts, kept))
        foldIntoCounts(kept, facts, this.tallySpecsOf(facts.organizationId), now);
      cache.set(wallet, kept);
    }
  }

  /** The rules' verdict on one command, over what committed before it and what this batch accepted. */
  evaluate(command: MonitoredTransfer, now: Date): AmlVerdict {
    const rules = this.rulesFor(command);
    if (rules.length === 0) return { rulesEvaluated: [], hits: [] };
    const t = command.transfer;
    const facts = this.facts.get(command.debitAccountId);
    const key = this.counterpartyKeys.get(command);
    return {
      rulesEvaluated: rules.map((r) => ({ id: r.id, version: r.version })),
      hits: evaluateAmlRules(rules, {
        amountMinor: t.amountMinor,
        currency: t.currency,
        at: now,
        recentOutgoing: facts?.outgoing ?? [],
        recentIncoming: facts?.incoming ?? [],
        unlisted: facts?.unlisted ? (spec) => unlistedTally(facts, spec) : undefined,
        counterpartyKnown: key !== undefined && (facts?.paid.has(key) ?? false),
      }),
    };
  }

  /** Whether the source wallet paid this command's counterparty before; undefined when not looked up. */
  counterpartyKnown(command: MonitoredTransfer): boolean | undefined {
    const key = this.counterpartyKeys.get(command);
    const facts = this.facts.get(command.debitAccountId);
    return key === undefined || facts === undefined ? undefined : facts.paid.has(key);
  }

  /** The source wallet's outgoing transfers in the last `windowSeconds` before `now` (this batch's included). */
  outgoingWithin(command: MonitoredTransfer, windowSeconds: number, now: Date): MovementTally {
    const facts = this.facts.get(command.debitAccountId);
    const spec: TallySpec = { direction: 'outgoing', windowSeconds };
    return addTallies(tallyList(facts?.outgoing ?? [], now, spec), unlistedTally(facts, spec));
  }

  /** Adds an accepted transfer to what later commands of the batch see. */
  accepted(command: MonitoredTransfer, transfer: Transfer, now: Date): void {
    const facts = this.facts.get(command.debitAccountId);
    if (facts) {
      facts.outgoing.unshift({ amountMinor: transfer.amountMinor, at: now });
      const key = this.counterpartyKeys.get(command);
      if (key !== undefined) facts.paid.add(key);
    }
    const credited = transfer.status === 'settled' ? transfer.destinationWalletId : null;
    const receiving = credited === null ? undefined : this.facts.get(credited);
    receiving?.incoming.unshift({ amountMinor: transfer.amountMinor, at: now });
  }
}

/** The list kept under a key, started empty when there is none yet. */
function listIn<T>(lists: Map<string, T[]>, key: string): T[] {
  let list = lists.get(key);
  if (!list) {
    list = [];
    lists.set(key, list);
  }
  return list;
}
