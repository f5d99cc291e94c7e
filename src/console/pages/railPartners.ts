/**
 * Rail partners: each partner the organization configured (M-Pesa Daraja, MTN MoMo, Flutterwave,
 * Fireblocks) with its health: active or disabled, paused now (its circuit open, as the worker announced
 * it), the mobile-money markets it carries (what the rail-provider gate counts), its last callback
 * and that callback's status, its callbacks of the last day by status, and its last balance query. The `admin` scope, like `GET /v1/rail-partners`; read-only (configuring is the API's).
 */
import { RAIL_PARTNER_HEALTH_WINDOW_HOURS, railPartnerHealth } from '../../modules/railPartners/index.ts';
import { html } from '../html.ts';
import { CONSOLE_PREFIX, statusBadge, table, time } from '../layout.ts';
import type { ConsoleRoutes } from '../routing.ts';

const SECTION = `${CONSOLE_PREFIX}/rail-partners`;

export function railPartnerPages(routes: ConsoleRoutes): void {
  const { deps } = routes;

  routes.get('/rail-partners', 'admin', async (_request, reply, identity) => {
    const partners = await railPartnerHealth(deps, identity.organizationId);
    const paused = partners.filter((p) => p.pausedUntil !== null).length;
    return routes.render(reply, {
      title: 'Rail partners',
      identity,
      section: SECTION,
      body: html`<p>${
        partners.length === 0
          ? 'No rail partner is configured: in pilot and production, payouts on a rail no partner carries fail rail_not_configured, and keys that move money are refused until each product has one.'
          : paused === 0
            ? html`${partners.length} configured; none paused.`
            : html`<strong>${paused} of ${partners.length} paused</strong>: their circuit is open after repeated errors; payouts wait and are retried when it closes.`
      } Card payouts have no partner: they are sandbox-only.</p>
${table(
  'Configured rail partners and their health',
  [
    'Partner',
    'Rail',
    'Mobile-money markets',
    'Status',
    'Circuit',
    'Last callback',
    `Callbacks, last ${RAIL_PARTNER_HEALTH_WINDOW_HOURS} h`,
    'Last balance query',
  ],
  partners.map((p) => [
    html`${p.config.partner.replace(/_/g, ' ')} <code>${p.config.id}</code>`,
    p.config.network ? `${p.config.rail} (${p.config.network})` : p.config.rail,
    p.markets.join(', ') || html`—`,
    statusBadge(p.config.status),
    p.pausedUntil ? html`${statusBadge('paused')} until ${time(p.pausedUntil)}` : 'closed',
    p.lastCallback ? html`${statusBadge(p.lastCallback.status)} ${time(p.lastCallback.receivedAt)}` : html`—`,
    Object.keys(p.recentCallbacks).length === 0
      ? html`—`
      : Object.entries(p.recentCallbacks)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([status, n]) => `${status} ${n}`)
          .join(', '),
    p.lastBalanceQuery
      ? html`${statusBadge(p.lastBalanceQuery.status)}${p.lastBalanceQuery.failureCode ? ` (${p.lastBalanceQuery.failureCode})` : ''} ${time(p.lastBalanceQuery.reportedAt ?? p.lastBalanceQuery.createdAt)}`
      : html`—`,
  ]),
)}`,
    });
  });
}
