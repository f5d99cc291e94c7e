/**
 * Looks for deposits whose webhook never came: for each organization's active custody partner, the
 * completed deposits in its transaction history from where the last look left off, oldest first, each
 * recorded through the same path a webhook's takes (in its own transaction; one already recorded changes
 * nothing). Any number of processes may run it.
 */
import type { Deps } from '../../app/deps.ts';
import { FIREBLOCKS_PARTNER } from './partners/fireblocks/protocol.ts';
import { depositMarkOf, saveDepositMark } from './repository/custodyDepositMarks.ts';
import { activeRailPartnersOf } from './repository/partners.ts';
import { isCustodyRail } from './useCases/custody.ts';
import { applyCustodyDeposit } from './useCases/custodyDeposits.ts';
import { readCustodyReserves, reserveDayAt } from './useCases/custodyReserves.ts';
import { sweepCustody } from './useCases/custodySweeps.ts';
import type { RailPartnerDirectory } from './useCases/directory.ts';

/** How often custody partners are asked for missed deposits. */
export const CUSTODY_DEPOSIT_POLL_INTERVAL_MS = 60_000;
/**
 * How long after its creation a deposit may complete and still be found: a look that read the history to
 * its end starts the next one this far back from now (and the first look this far back), since the history
 * is read by creation time and a deposit still confirming is not yet in it.
 */
export const CUSTODY_DEPOSIT_COMPLETION_WINDOW_MS = 24 * 60 * 60 * 1_000;
/** History pages (FIREBLOCKS_DEPOSIT_PAGE transactions each) one look reads per configuration at most. */
export const CUSTODY_DEPOSIT_PAGES_PER_PASS = 20;
/** Configurations one pass asks at most. */
const CUSTODY_CONFIGS_PER_PASS = 1_000;

/** Each active custody partner configuration with its guarded custody adapter, resolved as the pass reaches it. */
async function* activeCustodyRails(deps: Deps, directory: RailPartnerDirectory) {
  for (const config of await activeRailPartnersOf(deps.store, FIREBLOCKS_PARTNER, CUSTODY_CONFIGS_PER_PASS)) {
    const resolved = directory.guarded(config);
    const adapter = resolved.adapter;
    if (isCustodyRail(adapter)) yield { config, rail: { ...resolved, adapter } };
  }
}

/** What a pass could not do, one line a configuration: the others still run, and the pass then throws naming each. */
class PassFailures {
  private readonly lines: string[] = [];

  add(configId: string, why: string): void {
    this.lines.push(`${configId}: ${why}`);
  }

  addError(configId: string, error: unknown): void {
    this.add(configId, error instanceof Error ? error.message : String(error));
  }

  throwIfAny(notDone: string): void {
    if (this.lines.length > 0) throw new Error(`${notDone} ${this.lines.join('; ')}`);
  }
}

/**
 * One pass; returns how many deposits it recorded for the first time. A look that stopped at the page bound
 * leaves the next starting at the last transaction it read (a millisecond before, so one created in the
 * same millisecond is not passed over), so a backlog larger than a pass is read over the next passes; one
 * that read to the end leaves the next starting CUSTODY_DEPOSIT_COMPLETION_WINDOW_MS back. A partner that
 * does not answer is passed over (its mark unchanged), the others still asked, and the pass then throws
 * naming each (the worker loop logs it).
 */
export async function runCustodyDepositPollOnce(
  deps: Deps,
  directory: RailPartnerDirectory,
  pagesPerPass = CUSTODY_DEPOSIT_PAGES_PER_PASS,
): Promise<number> {
  let recorded = 0;
  const failures = new PassFailures();
  for await (const { config, rail } of activeCustodyRails(deps, directory)) {
    try {
      const windowStart = new Date(deps.now().getTime() - CUSTODY_DEPOSIT_COMPLETION_WINDOW_MS);
      const since = (await depositMarkOf(deps.store, config.id)) ?? windowStart;
      const read = await rail.call(() => rail.adapter.depositsSince(since, pagesPerPass));
      for (const deposit of read.deposits) {
        // The history is read again every pass: a deposit no longer completed is raised by its webhook alone.
        if (deposit.notCompleted) continue;
        const effect = await deps.store.transaction((tx) =>
          applyCustodyDeposit(tx, deps, config.organizationId, deposit, {
            partner: config.partner,
            callbackId: null,
          }),
        );
        if (effect.status === 'applied') recorded += 1;
      }
      const next =
        read.complete || read.lastCreatedAt === undefined ? windowStart : new Date(read.lastCreatedAt - 1);
      await saveDepositMark(deps.store, config.id, next, deps.now());
    } catch (error) {
      failures.addError(config.id, error);
    }
  }
  failures.throwIfAny('custody deposits not read from');
  return recorded;
}

/**
 * How often custody partners' reserves are looked at. A pass outside the hour after midnight does nothing;
 * inside it, each organization's custody wallets still waiting for the closed day's figure are read, so a
 * read that failed is tried again on the next pass while the window lasts.
 */
export const CUSTODY_RESERVE_POLL_INTERVAL_MS = 300_000;

/**
 * One pass; returns how many closing balances it recorded. A partner that does not answer records a failed
 * balance query and no figure; the others are still read, and the pass then throws naming each.
 */
export async function runCustodyReservePassOnce(
  deps: Deps,
  directory: RailPartnerDirectory,
): Promise<number> {
  const day = reserveDayAt(deps.now());
  if (day === undefined) return 0;
  let recorded = 0;
  const failures = new PassFailures();
  for (const config of await activeRailPartnersOf(deps.store, FIREBLOCKS_PARTNER, CUSTODY_CONFIGS_PER_PASS)) {
    try {
      const read = await readCustodyReserves(deps, directory, config, day);
      recorded += read.recorded.length;
      if (read.query?.status === 'failed') failures.add(config.id, `balance query ${read.query.id} failed`);
    } catch (error) {
      failures.addError(config.id, error);
    }
  }
  failures.throwIfAny('custody reserves not read from');
  return recorded;
}

/** How often wallets' custody vault accounts are swept into the payout vault. */
export const CUSTODY_SWEEP_INTERVAL_MS = 600_000;

/**
 * One sweep pass over every organization's active custody partner; returns how many sweeps completed. A
 * partner that does not answer is passed over, the others still swept, and the pass then throws naming each.
 */
export async function runCustodySweepPassOnce(deps: Deps, directory: RailPartnerDirectory): Promise<number> {
  let completed = 0;
  const failures = new PassFailures();
  for await (const { config, rail } of activeCustodyRails(deps, directory)) {
    try {
      completed += await sweepCustody(deps, rail, config);
    } catch (error) {
      failures.addError(config.id, error);
    }
  }
  failures.throwIfAny('custody not swept for');
  return completed;
}
