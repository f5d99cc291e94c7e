/** Review cases (clear or reject) and AML alerts (resolve with a disposition): the `compliance` scope. */
import { AML_ALERT_NOTE_LENGTH_MAX, listAlerts, resolveAmlAlert } from '../../app/aml/alerts.ts';
import { type ConsoleIdentity, consoleActor } from '../../app/console/session.ts';
import { type PartyNames, partyNames } from '../../app/console/views.ts';
import { decideReview, listReviews } from '../../app/reviews.ts';
import { AML_DISPOSITIONS, type AmlDisposition } from '../../domain/amlAlerts.ts';
import { validationError } from '../../domain/errors.ts';
import { ID_PREFIXES, idPattern } from '../../domain/ids.ts';
import { REVIEW_NOTE_LENGTH_MAX, type ReviewDecision } from '../../domain/reviews.ts';
import { presentAmlAlert, presentReview } from '../../http/compliancePresenters.ts';
import { html } from '../html.ts';
import {
  CONSOLE_PREFIX,
  csrfField,
  customerCell,
  jsonBlock,
  link,
  nextPageLink,
  statusBadge,
  table,
  time,
} from '../layout.ts';
import { noticeOf, withNotice } from '../notices.ts';
import { type ConsoleRoutes, field, type Handler, settle } from '../routing.ts';
import { optionalNote } from './approvals.ts';
import { CONSOLE_LIST_ROWS } from './customers.ts';

function transferLink(id: string | null) {
  return id ? link(`${CONSOLE_PREFIX}/transfers/${id}`, html`<code>${id}</code>`) : '—';
}

/** Whom a case or alert is about: the customer by name (or the wallet's owner), and the wallet. */
function partyCell(names: PartyNames, customerId: string | null, walletId: string | null) {
  const customer = customerId ?? names.walletOwner(walletId)?.id;
  return html`${customerCell(names, customer)}${walletId ? html`<br>${link(`${CONSOLE_PREFIX}/wallets/${walletId}`, html`<code>${walletId}</code>`)}` : ''}`;
}

function openFilter(value: string | undefined): 'open' | undefined {
  return value === 'all' ? undefined : 'open';
}

type Review = Awaited<ReturnType<typeof listReviews>>['data'][number];
type AmlAlert = Awaited<ReturnType<typeof listAlerts>>['data'][number];
type PresentedAlert = ReturnType<typeof presentAmlAlert>;

/** A case's decision: who decided it, or (open) the form to clear or reject it with a note. */
function reviewDecision(routes: ConsoleRoutes, identity: ConsoleIdentity, r: Review) {
  return r.status !== 'open'
    ? html`by <code>${r.decidedBy ?? '—'}</code>`
    : html`<form method="post" action="${CONSOLE_PREFIX}/reviews/${r.id}/decide" class="row-form">
          ${csrfField(identity.token)}<input type="hidden" name="_form" value="${routes.formKey()}">
          <label for="note-${r.id}">Note</label>
          <input id="note-${r.id}" name="note" type="text" maxlength="${REVIEW_NOTE_LENGTH_MAX}">
          <button type="submit" name="decision" value="clear">Clear</button>
          <button type="submit" name="decision" value="reject" class="danger" data-confirm="Reject this case? The transfer is rejected.">Reject</button>
        </form>`;
}

/** The review cases' rows, each with its findings and its decision (or the form to decide it). */
function reviewRows(routes: ConsoleRoutes, identity: ConsoleIdentity, reviews: Review[], names: PartyNames) {
  return reviews.map((r) => [
    html`<code>${r.id}</code>`,
    r.kind,
    partyCell(names, r.customerId, r.walletId),
    transferLink(r.transferId),
    html`<details><summary>findings</summary>${jsonBlock(presentReview(r).findings)}</details>`,
    html`${statusBadge(r.status)} ${r.note ? html`<span class="hint">${r.note}</span>` : ''}`,
    time(r.createdAt),
    reviewDecision(routes, identity, r),
  ]);
}

/** GET /reviews: the open review cases (or all). */
function reviewQueue(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const q = request.query;
    const status = openFilter(q.status);
    const page = await listReviews(routes.deps, identity.organizationId, {
      limit: CONSOLE_LIST_ROWS,
      status,
      startingAfter: q.after && new RegExp(idPattern(ID_PREFIXES.review)).test(q.after) ? q.after : undefined,
    });
    const names = await partyNames(routes.deps, identity.organizationId, {
      customers: page.data.map((r) => r.customerId),
      wallets: page.data.map((r) => r.walletId),
    });
    return routes.render(reply, {
      title: 'Review cases',
      identity,
      section: `${CONSOLE_PREFIX}/reviews`,
      notice: noticeOf(q),
      body: html`<p>${status ? link(`${CONSOLE_PREFIX}/reviews?status=all`, 'Show decided cases too') : link(`${CONSOLE_PREFIX}/reviews`, 'Show open cases only')}</p>
${table(
  'Review cases, newest first',
  ['Case', 'Kind', 'Customer', 'Transfer', 'Findings', 'Status', 'Created', 'Decide'],
  reviewRows(routes, identity, page.data, names),
  status ? 'No open review cases.' : 'No review cases.',
)}${nextPageLink(`${CONSOLE_PREFIX}/reviews`, { status: q.status }, page.hasMore ? page.data.at(-1)?.id : undefined)}`,
    });
  };
}

/** POST /reviews/:id/decide: clears or rejects a case with an optional note. */
function decideCase(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const decision = field(request.body, 'decision');
    if (decision !== 'clear' && decision !== 'reject') {
      throw validationError('decision', 'Choose clear or reject.', 'invalid_value');
    }
    const note = optionalNote(field(request.body, 'note'), 'note', REVIEW_NOTE_LENGTH_MAX);
    settle(
      await routes.write(request, identity, async (tx) => ({
        status: 200,
        body: presentReview(
          await decideReview(
            tx,
            routes.deps,
            identity.organizationId,
            request.params.id ?? '',
            decision as ReviewDecision,
            { note },
            consoleActor(identity),
          ),
        ),
      })),
    );
    return reply.redirect(withNotice(`${CONSOLE_PREFIX}/reviews`, 'review_decided'), 303);
  };
}

/** An alert's resolution: who resolved it, or (open) the form to resolve it with a disposition. */
function alertResolution(routes: ConsoleRoutes, identity: ConsoleIdentity, a: PresentedAlert) {
  return a.status !== 'open'
    ? html`by <code>${a.resolved_by ?? '—'}</code>`
    : html`<form method="post" action="${CONSOLE_PREFIX}/alerts/${a.id}/resolve" class="row-form">
          ${csrfField(identity.token)}<input type="hidden" name="_form" value="${routes.formKey()}">
          <label for="disp-${a.id}">Disposition</label>
          <select id="disp-${a.id}" name="disposition">${AML_DISPOSITIONS.map((d) => html`<option value="${d}">${d.replace(/_/g, ' ')}</option>`)}</select>
          <label for="anote-${a.id}">Note</label>
          <input id="anote-${a.id}" name="note" type="text" maxlength="${AML_ALERT_NOTE_LENGTH_MAX}">
          <button type="submit">Resolve</button>
        </form>`;
}

/** The alerts' rows, each with its rule, action and reason, and its resolution (or the form). */
function alertRows(routes: ConsoleRoutes, identity: ConsoleIdentity, alerts: AmlAlert[], names: PartyNames) {
  return alerts
    .map((alert) => [alert, presentAmlAlert(alert)] as const)
    .map(([alert, a]) => [
      html`<code>${a.id}</code>`,
      a.rule_type,
      a.action,
      partyCell(names, alert.customerId, alert.walletId),
      transferLink(a.transfer),
      a.reason,
      html`${statusBadge(a.status)} ${a.disposition ?? ''}`,
      time(a.created_at),
      alertResolution(routes, identity, a),
    ]);
}

/** GET /alerts: the open AML alerts (or all). */
function alertQueue(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const q = request.query;
    const status = openFilter(q.status);
    const page = await listAlerts(routes.deps, identity.organizationId, {
      limit: CONSOLE_LIST_ROWS,
      status,
      startingAfter:
        q.after && new RegExp(idPattern(ID_PREFIXES.amlAlert)).test(q.after) ? q.after : undefined,
    });
    const names = await partyNames(routes.deps, identity.organizationId, {
      customers: page.data.map((a) => a.customerId),
      wallets: page.data.map((a) => a.walletId),
    });
    return routes.render(reply, {
      title: 'AML alerts',
      identity,
      section: `${CONSOLE_PREFIX}/alerts`,
      notice: noticeOf(q),
      body: html`<p>${status ? link(`${CONSOLE_PREFIX}/alerts?status=all`, 'Show resolved alerts too') : link(`${CONSOLE_PREFIX}/alerts`, 'Show open alerts only')}</p>
${table(
  'AML alerts, newest first',
  ['Alert', 'Rule', 'Action', 'Customer', 'Transfer', 'Reason', 'Status', 'Created', 'Resolve'],
  alertRows(routes, identity, page.data, names),
  status ? 'No open AML alerts.' : 'No AML alerts.',
)}${nextPageLink(`${CONSOLE_PREFIX}/alerts`, { status: q.status }, page.hasMore ? page.data.at(-1)?.id : undefined)}`,
    });
  };
}

/** POST /alerts/:id/resolve: resolves an alert with a disposition and an optional note. */
function resolveAlert(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const disposition = field(request.body, 'disposition');
    if (!(AML_DISPOSITIONS as readonly string[]).includes(disposition ?? '')) {
      throw validationError('disposition', `Choose one of ${AML_DISPOSITIONS.join(', ')}.`, 'invalid_value');
    }
    const note = optionalNote(field(request.body, 'note'), 'note', AML_ALERT_NOTE_LENGTH_MAX);
    settle(
      await routes.write(request, identity, async (tx) => ({
        status: 200,
        body: presentAmlAlert(
          await resolveAmlAlert(
            tx,
            routes.deps,
            identity.organizationId,
            request.params.id ?? '',
            { disposition: disposition as AmlDisposition, note },
            consoleActor(identity),
          ),
        ),
      })),
    );
    return reply.redirect(withNotice(`${CONSOLE_PREFIX}/alerts`, 'alert_resolved'), 303);
  };
}

export function compliancePages(routes: ConsoleRoutes): void {
  routes.get('/reviews', 'compliance', reviewQueue(routes));
  routes.post('/reviews/:id/decide', 'compliance', decideCase(routes));
  routes.get('/alerts', 'compliance', alertQueue(routes));
  routes.post('/alerts/:id/resolve', 'compliance', resolveAlert(routes));
}
