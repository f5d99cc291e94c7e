/**
 * Digital-asset route limits inside the ledger writer's batch: the routes of the batch's withdrawals are
 * locked after the accounts (in key order) with what each organization has withdrawn on them today, each
 * withdrawal is decided over those sums in order, and an accepted one counts at once. So two withdrawals
 * racing for the last of a route's daily limit, in one batch or in two lanes or processes, cannot both pass.
 * Nothing is stored: today's sum is read from the transfers themselves, so a withdrawal that fails or is
 * canceled gives its amount back without any bookkeeping.
 */

import { limitPeriods } from '../../../../domain/decisions/limits.ts';
import type { DigitalAssetRoute } from '../../../../domain/digitalAssets.ts';
import type { AppError } from '../../../../domain/errors.ts';
import type { Transfer } from '../../../../domain/transferRecord.ts';
import type { Queryable } from '../../../../store/store.ts';
import { lockRoutesWithDayUsage, routeLimitRefusal } from '../../../compliance/index.ts';

type LockedRoute = DigitalAssetRoute & { usedTodayMinor: bigint };

function routeKey(t: Transfer): string | undefined {
  const d = t.destination;
  if (d.type !== 'crypto_address') return undefined;
  return `${t.organizationId}\u0000${d.asset}\u0000${d.network}`;
}

export class RouteLimitGuard {
  private constructor(private readonly routes: Map<string, LockedRoute>) {}

  static async lock(
    tx: Queryable,
    commands: readonly { transfer: Transfer }[],
    now: Date,
  ): Promise<RouteLimitGuard> {
    const keys = commands.flatMap(({ transfer: t }) =>
      t.destination.type === 'crypto_address'
        ? [{ organizationId: t.organizationId, asset: t.destination.asset, network: t.destination.network }]
        : [],
    );
    const dayStart = new Date(`${limitPeriods(now).day}T00:00:00.000Z`);
    const locked = await lockRoutesWithDayUsage(tx, keys, dayStart);
    return new RouteLimitGuard(
      new Map(locked.map((r) => [`${r.organizationId}\u0000${r.asset}\u0000${r.network}`, r])),
    );
  }

  /** The 422 a withdrawal gets if it would pass its route's limits; undefined when it fits. */
  check(command: { transfer: Transfer }): AppError | undefined {
    const key = routeKey(command.transfer);
    const route = key === undefined ? undefined : this.routes.get(key);
    if (!route) return undefined;
    return routeLimitRefusal(route, command.transfer.amountMinor, route.usedTodayMinor);
  }

  /** Counts an accepted withdrawal in its route's day. */
  accepted(command: { transfer: Transfer }): void {
    const key = routeKey(command.transfer);
    const route = key === undefined ? undefined : this.routes.get(key);
    if (route) route.usedTodayMinor += command.transfer.amountMinor;
  }
}
