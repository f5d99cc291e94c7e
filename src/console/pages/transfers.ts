/**
 * Transfers: search (id, reference, phone, status, dates) and a transfer's detail: its status timeline,
 * ledger entries, events with their webhook deliveries, and its evidence (for the `compliance` scope).
 * Every wallet shown has its owner's name beside it.
 */
import type { ConsoleIdentity } from '../../app/console/session.ts';
import { type PartyNames, partyNames, searchTransfers } from '../../app/console/views.ts';
import { listEvents } from '../../app/events.ts';
import { listEvidence } from '../../app/evidence.ts';
import { validationError } from '../../domain/errors.ts';
import { ID_PREFIXES, idPattern } from '../../domain/ids.ts';
import { formatAmount } from '../../domain/money.ts';
import { PAGE_SIZE_MAX } from '../../domain/pagination.ts';
import type { Transfer } from '../../domain/transferRecord.ts';
import { TRANSFER_STATUSES, type TransferStatus } from '../../domain/transfers.ts';
import { presentTransfer } from '../../http/presenters.ts';
import { listJournalEntries } from '../../modules/ledger/index.ts';
import { getTransfer } from '../../modules/transfers/index.ts';
import { eventDeliveries } from '../../modules/webhooks/index.ts';
import { html, type Renderable } from '../html.ts';
import {
  CONSOLE_PREFIX,
  can,
  fields,
  idLink,
  jsonBlock,
  nextPageLink,
  statusBadge,
  table,
  time,
  walletCell,
} from '../layout.ts';
import { type ConsoleRoutes, type Handler, idOfKind, oneOf } from '../routing.ts';

/** Rows a search page shows. */
export const CONSOLE_SEARCH_ROWS = 50;
/** Events of one transfer the detail page shows (a transfer has a handful). */
const TRANSFER_EVENTS_MAX = 50;
const SECTION = `${CONSOLE_PREFIX}/transfers`;
const TRANSFER_ID = new RegExp(idPattern(ID_PREFIXES.transfer));

/** A `YYYY-MM-DD` date field as the start (or the end) of that UTC day. */
export function dayBound(value: string | undefined, param: string, end: boolean): Date | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw validationError(param, `${param} must be a date such as 2026-11-26.`, 'invalid_format');
  }
  return new Date(`${value}T${end ? '23:59:59.999' : '00:00:00.000'}Z`);
}

export function destinationText(destination: Record<string, unknown>): string {
  const d = destination as Record<string, string | undefined>;
  return (
    d.phone ??
    d.wallet ??
    d.account_number ??
    (d.business_number ? `${d.business_number} / ${d.account_reference ?? ''}` : undefined) ??
    d.till_number ??
    d.address ??
    d.type ??
    '—'
  );
}

/** A destination as a cell: a wallet with its owner's name, anything else as destinationText words it. */
export function destinationCell(names: PartyNames, destination: Record<string, unknown>): Renderable {
  return destination.type === 'wallet' && typeof destination.wallet === 'string'
    ? walletCell(names, destination.wallet)
    : destinationText(destination);
}

/** The wallets transfers name (source and wallet destinations), whose owners a page shows beside them. */
export function walletIdsOf(transfers: Transfer[]): (string | null)[] {
  return transfers.flatMap((t) => [t.sourceWalletId, t.destinationWalletId]);
}

export const TRANSFER_HEADERS = ['Id', 'Created', 'Amount', 'Rail', 'From', 'Destination', 'Status'];

export function transferRows(
  transfers: ReturnType<typeof presentTransfer>[],
  names: PartyNames,
): Renderable[][] {
  return transfers.map((t) => [
    idLink(SECTION, t.id),
    time(t.created_at),
    html`<span class="num">${t.amount}</span> ${t.currency}`,
    t.rail.replace(/_/g, ' '),
    walletCell(names, t.source),
    destinationCell(names, t.destination as Record<string, unknown>),
    statusBadge(t.status),
  ]);
}

type PresentedTransfer = ReturnType<typeof presentTransfer>;
type TransferEvent = Awaited<ReturnType<typeof listEvents>>['data'][number];
type JournalEntry = Awaited<ReturnType<typeof listJournalEntries>>['data'][number];
type EventDeliveries = Awaited<ReturnType<typeof eventDeliveries>>;
type EvidencePage = Awaited<ReturnType<typeof listEvidence>>;

/** The search form, filled in with what was searched. */
function searchForm(
  q: Record<string, string>,
  criteria: { status: TransferStatus | undefined; reference: string | undefined; phone: string | undefined },
) {
  const { status, reference, phone } = criteria;
  return html`<form method="get" action="${SECTION}" class="search" role="search" aria-label="Search transfers">
  <div><label for="id">Transfer id</label><input id="id" name="id" type="search" placeholder="tr_…" value="${q.id ?? ''}"></div>
  <div><label for="reference">Reference</label><input id="reference" name="reference" type="search" value="${reference ?? ''}"></div>
  <div><label for="phone">Phone</label><input id="phone" name="phone" type="search" placeholder="+254…" value="${phone ?? ''}"></div>
  <div><label for="status">Status</label><select id="status" name="status">
    <option value="">Any</option>
    ${TRANSFER_STATUSES.map((s) => html`<option value="${s}"${s === status ? html` selected` : ''}>${s.replace(/_/g, ' ')}</option>`)}
  </select></div>
  <div><label for="from">Created from</label><input id="from" name="from" type="date" value="${q.from ?? ''}"></div>
  <div><label for="to">Created to</label><input id="to" name="to" type="date" value="${q.to ?? ''}"></div>
  <div><button type="submit">Search</button></div>
</form>`;
}

/** GET /transfers: the search, or (a transfer id) straight to that transfer. */
function transferSearch(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const q = request.query;
    const id = q.id?.trim();
    if (id) {
      if (TRANSFER_ID.test(id)) return reply.redirect(`${SECTION}/${id}`, 303);
      throw validationError('id', `'${id}' is not a transfer id (tr_…).`, 'invalid_format');
    }
    const status = oneOf(TRANSFER_STATUSES, q.status);
    const reference = q.reference?.trim() || undefined;
    const phone = q.phone?.trim() || undefined;
    const page = await searchTransfers(routes.deps, identity.organizationId, {
      limit: CONSOLE_SEARCH_ROWS,
      status,
      reference: reference?.slice(0, 200),
      phone: phone?.slice(0, 32),
      createdGte: dayBound(q.from, 'from', false),
      createdLte: dayBound(q.to, 'to', true),
      startingAfter: idOfKind(q.after, ID_PREFIXES.transfer),
    });
    const presented = page.data.map(presentTransfer);
    const names = await partyNames(routes.deps, identity.organizationId, {
      wallets: walletIdsOf(page.data),
    });
    return routes.render(reply, {
      title: 'Transfers',
      identity,
      section: SECTION,
      body: html`${searchForm(q, { status, reference, phone })}
${table('Transfers, newest first', TRANSFER_HEADERS, transferRows(presented, names), 'No transfer matches.')}
${nextPageLink(SECTION, { status, reference, phone, from: q.from, to: q.to }, page)}`,
    });
  };
}

/** Everything a transfer's page shows: its events (oldest first) with their deliveries, entries, evidence. */
async function transferDetail(routes: ConsoleRoutes, identity: ConsoleIdentity, transferId: string) {
  const { deps } = routes;
  const org = identity.organizationId;
  const transfer = await getTransfer(deps, org, transferId);
  const [events, entries, evidence] = await Promise.all([
    listEvents(deps, org, { limit: TRANSFER_EVENTS_MAX, resourceId: transfer.id }),
    listJournalEntries(deps, org, { limit: PAGE_SIZE_MAX, transferId: transfer.id }),
    can(identity, 'compliance')
      ? listEvidence(deps, org, 'transfer', transfer.id, { limit: PAGE_SIZE_MAX }, getTransfer)
      : Promise.resolve(undefined),
  ]);
  const names = await partyNames(deps, org, {
    wallets: [...walletIdsOf([transfer]), ...entries.data.flatMap((e) => e.postings.map((p) => p.accountId))],
  });
  const chronological = [...events.data].reverse();
  const deliveries = await Promise.all(chronological.map((e) => eventDeliveries(deps, org, e.id)));
  return { transfer, entries: entries.data, evidence, names, chronological, deliveries };
}

/** The transfer's fields: status, amount, parties, references, and how it was authorized. */
function transferFields(t: PresentedTransfer, names: PartyNames) {
  return fields([
    [
      'Status',
      html`${statusBadge(t.status)} ${t.status_reason ?? ''} ${t.failure_code ? html`<code>${t.failure_code}</code>` : ''}`,
    ],
    ['Amount', html`<span class="num">${t.amount}</span> ${t.currency} (fee ${t.fee})`],
    ['Rail', t.rail],
    ['Direction', t.direction],
    ['Source wallet', walletCell(names, t.source)],
    ['Destination', destinationCell(names, t.destination as Record<string, unknown>)],
    ['Rail reference', t.rail_reference],
    ['Ledger state', t.ledger_state],
    ['Created by', t.created_by],
    [
      'Authorization',
      t.authorization
        ? `${t.authorization.decision} (policy v${t.authorization.policy_version}, rule ${t.authorization.rule})`
        : '—',
    ],
    ['Approval', idLink(`${CONSOLE_PREFIX}/approvals`, t.approval)],
  ]);
}

/** The transfer's `transfer.*` events in order, each with its status reason. */
function statusTimeline(chronological: TransferEvent[]) {
  const timeline = chronological.filter((e) => e.type.startsWith('transfer.'));
  return timeline.length === 0
    ? html`<p class="empty">No status events yet.</p>`
    : html`<ol class="timeline">${timeline.map(
        (
          e,
        ) => html`<li>${time(e.createdAt)} <strong>${e.type.replace('transfer.', '').replace(/_/g, ' ')}</strong>
          ${typeof e.data.status_reason === 'string' ? html`<span class="hint">${e.data.status_reason}</span>` : ''}</li>`,
      )}</ol>`;
}

/** The transfer's journal entries, each posting with the wallet's owner where it is a wallet. */
function ledgerEntriesTable(entries: JournalEntry[], names: PartyNames) {
  return table(
    'Journal entries of this transfer, newest first',
    ['Entry', 'Kind', 'Created', 'Postings'],
    entries.map((e) => [
      html`<code>${e.id}</code>`,
      e.kind,
      time(e.createdAt),
      html`<ul class="postings">${e.postings.map(
        (p) =>
          html`<li>${p.side} <span class="num">${formatAmount(p.amountMinor, p.currency)}</span> ${p.currency} · ${p.phase} · ${names.walletOwner(p.accountId) ? walletCell(names, p.accountId) : html`<code>${p.accountId}</code>`}</li>`,
      )}</ul>`,
    ]),
    'No ledger entries.',
  );
}

/** An event's webhook deliveries: each subscription, its status and attempts. */
function deliveryList(deliveries: EventDeliveries) {
  return deliveries.length === 0
    ? 'none'
    : html`<ul class="deliveries">${deliveries.map(
        (d) => html`<li>${idLink(`${CONSOLE_PREFIX}/webhooks`, d.subscriptionId)}
            ${statusBadge(d.status)} ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}${d.lastStatusCode === null ? '' : `, last HTTP ${d.lastStatusCode}`}</li>`,
      )}</ul>`;
}

/** The transfer's events, oldest first, each with its deliveries. */
function eventsTable(chronological: TransferEvent[], deliveries: EventDeliveries[]) {
  return table(
    'Events of this transfer, oldest first, with each delivery',
    ['Event', 'Type', 'Created', 'Deliveries'],
    chronological.map((e, i) => [
      html`<code>${e.id}</code>`,
      e.type,
      time(e.createdAt),
      deliveryList(deliveries[i] ?? []),
    ]),
    'No events.',
  );
}

/** The transfer's evidence records (only for the `compliance` scope: undefined otherwise). */
function evidenceSection(evidence: EvidencePage | undefined) {
  return evidence === undefined
    ? ''
    : html`<h2>Evidence</h2>
${table(
  'Evidence records of this transfer, newest first',
  ['Record', 'Kind', 'Created', 'Decision'],
  evidence.data.map((r) => [
    html`<code>${r.id}</code>`,
    r.kind,
    time(r.createdAt),
    html`<details><summary>data</summary>${jsonBlock(r.data)}</details>`,
  ]),
  'No evidence records.',
)}`;
}

/** GET /transfers/:id: the transfer, its timeline, ledger entries, events with deliveries, and evidence. */
function transferPage(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const detail = await transferDetail(routes, identity, request.params.id ?? '');
    const { transfer, names, chronological } = detail;
    return routes.render(reply, {
      title: `Transfer ${transfer.id}`,
      identity,
      section: SECTION,
      body: html`${transferFields(presentTransfer(transfer), names)}
<h2>Status timeline</h2>
${statusTimeline(chronological)}
<h2>Ledger entries</h2>
${ledgerEntriesTable(detail.entries, names)}
<h2>Events and webhook deliveries</h2>
${eventsTable(chronological, detail.deliveries)}
${evidenceSection(detail.evidence)}`,
    });
  };
}

export function transferPages(routes: ConsoleRoutes): void {
  routes.get('/transfers', 'read', transferSearch(routes));
  routes.get('/transfers/:id', 'read', transferPage(routes));
}
