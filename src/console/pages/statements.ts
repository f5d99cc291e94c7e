/**
 * A wallet's statement of a period, as `GET /v1/wallets/{id}/statement` gives it: opening and closing
 * balance, every entry with the balance after it, and the same statement as a CSV download. The `read`
 * scope, like the API. The period defaults to this month so far (UTC).
 */
import {
  getWalletStatement,
  presentStatement,
  statementCsv,
  statementFileName,
} from '../../modules/digitalAccounts/index.ts';
import { html } from '../html.ts';
import { CONSOLE_PREFIX, fields, idLink, link, table, time } from '../layout.ts';
import type { ConsoleRoutes } from '../routing.ts';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The period asked for, or this month (UTC) up to today. */
function periodOf(query: Record<string, string>, now: Date): { from: string; to: string } {
  const today = now.toISOString().slice(0, 10);
  return {
    from: query.from && DATE.test(query.from) ? query.from : `${today.slice(0, 8)}01`,
    to: query.to && DATE.test(query.to) ? query.to : today,
  };
}

export function statementPages(routes: ConsoleRoutes): void {
  const { deps } = routes;

  routes.get('/wallets/:id/statement', 'read', async (request, reply, identity) => {
    const walletId = request.params.id ?? '';
    const period = periodOf(request.query, deps.now());
    const statement = await getWalletStatement(
      deps,
      identity.organizationId,
      walletId,
      period.from,
      period.to,
    );
    const s = presentStatement(statement);
    const base = `${CONSOLE_PREFIX}/wallets/${walletId}`;
    return routes.render(reply, {
      title: `Statement of ${walletId}`,
      identity,
      section: `${CONSOLE_PREFIX}/wallets`,
      body: html`<p>${link(base, 'Back to the wallet')}</p>
<form method="get" action="${base}/statement" class="search" aria-label="Statement period">
  <div><label for="sfrom">From (UTC day)</label><input id="sfrom" name="from" type="date" value="${period.from}" required></div>
  <div><label for="sto">To (UTC day, included)</label><input id="sto" name="to" type="date" value="${period.to}" required></div>
  <div><button type="submit">Show</button></div>
</form>
${fields([
  ['Period', html`${time(s.from)} to ${time(s.to)}${s.complete ? '' : ' (not over yet)'}`],
  ['Opening balance', html`<span class="num">${s.opening_balance} ${s.currency}</span>`],
  ['Credits', html`<span class="num">${s.total_credits}</span>`],
  ['Debits', html`<span class="num">${s.total_debits}</span>`],
  ['Closing balance', html`<span class="num">${s.closing_balance} ${s.currency}</span>`],
])}
<p>${link(`${base}/statement.csv?from=${encodeURIComponent(period.from)}&to=${encodeURIComponent(period.to)}`, 'Download as CSV')}</p>
${table(
  'Entries in the period, oldest first',
  ['Posted', 'Description', 'Counterparty', 'Transfer', 'Amount', 'Fee', 'Balance'],
  s.entries.map((e) => [
    time(e.posted_at),
    e.description,
    e.counterparty ?? '—',
    idLink(`${CONSOLE_PREFIX}/transfers`, e.transfer),
    html`<span class="num">${e.amount}</span>`,
    html`<span class="num">${e.fee}</span>`,
    html`<span class="num">${e.balance}</span>`,
  ]),
  'No entries in this period.',
)}`,
    });
  });

  routes.get('/wallets/:id/statement.csv', 'read', async (request, reply, identity) => {
    const period = periodOf(request.query, deps.now());
    const statement = await getWalletStatement(
      deps,
      identity.organizationId,
      request.params.id ?? '',
      period.from,
      period.to,
    );
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${statementFileName(statement)}"`)
      .send(statementCsv(statement));
  });
}
