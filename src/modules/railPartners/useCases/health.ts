/**
 * Each configured rail partner's health as the console shows it: active or disabled; paused now (its
 * circuit breaker's last announcement was a pause still within its pause); its last callback and status;
 * its callbacks of the last RAIL_PARTNER_HEALTH_WINDOW_HOURS by status; its last balance query. The pause
 * is read from the `rail_partner.paused`/`resumed` events, not this process's breaker: the worker that
 * calls the partner may run in another process.
 */

import type { Deps } from '../../../app/deps.ts';
import type { MobileMarket } from '../../../domain/mobileMarkets.ts';
import { marketsCarriedBy, type RailPartnerConfig } from '../domain.ts';
import {
  countCallbacksByStatus,
  type LastBalanceQuery,
  type LastCallback,
  lastBalanceQueries,
  lastCallbacks,
  lastPauseEvents,
} from '../repository/health.ts';
import { listRailPartnerConfigs } from '../repository/partners.ts';

/** How far back callbacks are counted by status. */
export const RAIL_PARTNER_HEALTH_WINDOW_HOURS = 24;
/** The most configurations the page reads (an organization has one per rail and network, plus disabled ones). */
const RAIL_PARTNER_HEALTH_ROWS_MAX = 100;

export interface RailPartnerHealth {
  config: Pick<RailPartnerConfig, 'id' | 'partner' | 'rail' | 'network' | 'status' | 'updatedAt'>;
  /** The mobile-money markets it carries (marketsCarriedBy), as the rail-provider gate counts them. */
  markets: readonly MobileMarket[];
  /** Until when the circuit stays open, when it is open now; null otherwise. */
  pausedUntil: Date | null;
  lastCallback: LastCallback | null;
  recentCallbacks: Record<string, number>;
  lastBalanceQuery: LastBalanceQuery | null;
}

export async function railPartnerHealth(deps: Deps, organizationId: string): Promise<RailPartnerHealth[]> {
  const now = deps.now();
  const since = new Date(now.getTime() - RAIL_PARTNER_HEALTH_WINDOW_HOURS * 3_600_000);
  const db = deps.store;
  const [configs, counts, callbacks, balances, pauses] = await Promise.all([
    listRailPartnerConfigs(db, organizationId, {}, RAIL_PARTNER_HEALTH_ROWS_MAX),
    countCallbacksByStatus(db, organizationId, since),
    lastCallbacks(db, organizationId),
    lastBalanceQueries(db, organizationId),
    lastPauseEvents(db, organizationId),
  ]);
  return configs.map((c) => {
    const pause = pauses.get(c.id);
    const until =
      pause?.paused && pause.pausedForMs !== null ? new Date(pause.at.getTime() + pause.pausedForMs) : null;
    return {
      config: {
        id: c.id,
        partner: c.partner,
        rail: c.rail,
        network: c.network,
        status: c.status,
        updatedAt: c.updatedAt,
      },
      markets: marketsCarriedBy(c.partner, c.settings),
      pausedUntil: until && until > now ? until : null,
      lastCallback: callbacks.get(c.id) ?? null,
      recentCallbacks: counts.get(c.id) ?? {},
      lastBalanceQuery: balances.get(c.id) ?? null,
    };
  });
}
