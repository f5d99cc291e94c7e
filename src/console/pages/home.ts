/** Home: today's settled volume, each rail's success rate, transfers per hour, and the open queues. */
import type { ConsoleIdentity } from '../../app/console/session.ts';
import { CONSOLE_CHART_HOURS, consoleOverview, type Overview } from '../../app/console/views.ts';
import { type Currency, formatAmount } from '../../domain/money.ts';
import { html, jsonScript } from '../html.ts';
import { CONSOLE_PREFIX, can, link, table } from '../layout.ts';
import { noticeOf } from '../notices.ts';
import type { ConsoleRoutes, Handler } from '../routing.ts';

/** Today's settled amount per currency, with how many transfers made it. */
function settledToday(o: Overview) {
  return html`<section aria-labelledby="volume-h" class="cards">
  <h2 id="volume-h">Settled today</h2>
  ${
    o.volume.length === 0
      ? html`<p class="empty">No transfer settled yet today.</p>`
      : html`<ul class="figures">${o.volume.map(
          (v) =>
            html`<li><span class="figure">${formatAmount(v.amountMinor, v.currency as Currency)} ${v.currency}</span>
              <span class="hint">${v.count} transfer${v.count === 1 ? '' : 's'}</span></li>`,
        )}</ul>`
  }
</section>`;
}

/** The open queues, each a link where the member may open it. */
function openWork(o: Overview, identity: ConsoleIdentity) {
  const queue = (label: string, count: number, href: string, allowed: boolean) =>
    html`<li><span class="count">${count}</span> ${allowed ? link(href, label) : label}</li>`;
  return html`<section aria-labelledby="queues-h">
  <h2 id="queues-h">Open work</h2>
  <ul class="queues">
    ${queue('approvals waiting', o.queues.approvals, `${CONSOLE_PREFIX}/approvals`, true)}
    ${queue('review cases', o.queues.reviews, `${CONSOLE_PREFIX}/reviews`, can(identity, 'compliance'))}
    ${queue('AML alerts', o.queues.alerts, `${CONSOLE_PREFIX}/alerts`, can(identity, 'compliance'))}
    ${queue('reconciliation exceptions', o.queues.exceptions, `${CONSOLE_PREFIX}/reconciliation`, can(identity, 'compliance'))}
  </ul>
</section>`;
}

/** Each rail's transfers created today and the share of finished ones that settled. */
function railSuccess(o: Overview) {
  return html`<section aria-labelledby="rails-h">
  <h2 id="rails-h">Success rate by rail, today</h2>
  ${table(
    'Transfers created today, by rail: settled out of those finished (settled or failed)',
    ['Rail', 'Settled', 'Failed or returned', 'In flight', 'Success rate'],
    o.rails.map((r) => [
      r.rail.replace(/_/g, ' '),
      r.settled,
      r.failed,
      r.inFlight,
      r.successRate === null ? '—' : `${(r.successRate * 100).toFixed(1)}%`,
    ]),
    'No transfers yet today.',
  )}
</section>`;
}

/** Transfers per hour as a chart (drawn by the page's script from its JSON) and the same figures as a table. */
function hourlyChart(o: Overview) {
  const hour = (d: Date) => `${d.toISOString().slice(11, 16)}Z`;
  return html`<section aria-labelledby="chart-h">
  <h2 id="chart-h">Transfers per hour, last ${CONSOLE_CHART_HOURS} hours</h2>
  <figure class="chart">
    <div id="transfers-chart" class="chart-box" role="img" aria-label="Line chart of transfers created, settled and failed per hour over the last ${CONSOLE_CHART_HOURS} hours; the same figures are in the table below."></div>
    ${jsonScript('transfers-chart-data', {
      x: o.hourly.map((b) => b.bucketStart.getTime() / 1000),
      series: [
        { label: 'Created', values: o.hourly.map((b) => b.created) },
        { label: 'Settled', values: o.hourly.map((b) => b.settled) },
        { label: 'Failed', values: o.hourly.map((b) => b.failed) },
      ],
    })}
    <details>
      <summary>Figures as a table</summary>
      ${table(
        'Transfers per hour (UTC)',
        ['Hour', 'Created', 'Settled', 'Failed'],
        o.hourly.map((b) => [hour(b.bucketStart), b.created, b.settled, b.failed]),
      )}
    </details>
  </figure>
</section>`;
}

/** GET /: the overview of today and the open queues. */
function overviewPage(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const o = await consoleOverview(routes.deps, identity.organizationId);
    return routes.render(reply, {
      title: 'Home',
      identity,
      section: CONSOLE_PREFIX,
      notice: noticeOf(request.query),
      body: html`<p class="hint">Today is ${o.dayStart.toISOString().slice(0, 10)} (UTC), as of ${o.now.toISOString().slice(11, 19)}Z.</p>
${settledToday(o)}
${openWork(o, identity)}
${railSuccess(o)}
${hourlyChart(o)}`,
    });
  };
}

export function homePage(routes: ConsoleRoutes): void {
  routes.get('/', 'read', overviewPage(routes));
}
