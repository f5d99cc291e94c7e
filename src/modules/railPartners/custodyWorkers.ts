/**
 * Looks for deposits whose webhook never came: for each organization's active custody partner, the
 * deposits it completed lately, each recorded through the same path a webhook's takes (in its own
 * transaction; one already recorded changes nothing). Any number of processes may run it.
 */
import type { Deps } from '../../app/deps.ts';
import { FIREBLOCKS_PARTNER } from './partners/fireblocks/protocol.ts';
import { activeRailPartnersOf } from './repository/partners.ts';
import { isCustodyRail } from './useCases/custody.ts';
import { applyCustodyDeposit } from './useCases/custodyDeposits.ts';
import type { RailPartnerDirectory } from './useCases/directory.ts';

/** How often custody partners are asked for missed deposits. */
export const CUSTODY_DEPOSIT_POLL_INTERVAL_MS = 60_000;
/** How far back each look reaches: a webhook missing longer than this is past the look's reach. */
export const CUSTODY_DEPOSIT_LOOKBACK_MS = 24 * 60 * 60 * 1_000;
/** Configurations one pass asks at most. */
const CUSTODY_CONFIGS_PER_PASS = 1_000;

/**
 * One pass; returns how many deposits it recorded for the first time. A partner that does not answer is
 * passed over, the others still asked, and the pass then throws naming each (the worker loop logs it).
 */
export async function runCustodyDepositPollOnce(
  deps: Deps,
  directory: RailPartnerDirectory,
): Promise<number> {
  const since = new Date(deps.now().getTime() - CUSTODY_DEPOSIT_LOOKBACK_MS);
  let recorded = 0;
  const failures: string[] = [];
  for (const config of await activeRailPartnersOf(deps.store, FIREBLOCKS_PARTNER, CUSTODY_CONFIGS_PER_PASS)) {
    const resolved = directory.guarded(config);
    const adapter = resolved.adapter;
    if (!isCustodyRail(adapter)) continue;
    try {
      const deposits = await resolved.call(() => adapter.recentDeposits(since));
      for (const deposit of deposits) {
        const effect = await deps.store.transaction((tx) =>
          applyCustodyDeposit(tx, deps, config.organizationId, deposit),
        );
        if (effect.status === 'applied') recorded += 1;
      }
    } catch (error) {
      failures.push(`${config.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (failures.length > 0) throw new Error(`custody deposits not read from ${failures.join('; ')}`);
  return recorded;
}
