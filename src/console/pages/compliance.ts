/** Review cases (clear or reject) and AML alerts (resolve with a disposition): the `compliance` scope. */

import { type ConsoleIdentity, consoleActor } from '../../app/console/session.ts';
import { type PartyNames, partyNames } from '../../app/console/views.ts';
import { AML_DISPOSITIONS } from '../../domain/amlAlerts.ts';
import { validationError } from '../../domain/errors.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { REVIEW_NOTE_LENGTH_MAX, type ReviewDecision } from '../../domain/reviews.ts';
import {
  AML_ALERT_NOTE_LENGTH_MAX,
  decideReview,
  listAlerts,
  listReviews,
  presentAmlAlert,
  presentReview,
  resolveAmlAlert,
} from '../../modules/compliance/index.ts';
import { html } from '../html.ts';
import {
  CONSOLE_PREFIX,
  customerCell,
  idLink,
  jsonBlock,
  rowFormOrSettler,
  statusBadge,
  time,
} from '../layout.ts';
import { redirectWithNotice } from '../notices.ts';
import { type OpenQueue, openQueuePage } from '../queues.ts';
import {
  type ConsoleRoutes,
  chosenField,
  field,
  type Handler,
  optionalNote,
  recordOrganizationWrite,
} from '../routing.ts';

/** Whom a case or alert is about: the customer by name (or the wallet's owner), and the wallet. */
function partyCell(names: PartyNames, customerId: string | null, walletId: string | null) {
  const customer = customerId ?? names.walletOwner(walletId)?.id;
  return html`${customerCell(names, customer)}${walletId ? html`<br>${idLink(`${CONSOLE_PREFIX}/wallets`, walletId)}` : ''}`;
}

type Review = Awaited<ReturnType<typeof listReviews>>['data'][number];
type AmlAlert = Awaited<ReturnType<typeof listAlerts>>['data'][number];
type PresentedAlert = ReturnType<typeof presentAmlAlert>;

/** A case's decision: who decided it, or (open) the form to clear or reject it with a note. */
function reviewDecision(routes: ConsoleRoutes, identity: ConsoleIdentity, r: Review) {
  return rowFormOrSettler(
    { open: r.status === 'open', settledBy: r.decidedBy },
    `${CONSOLE_PREFIX}/reviews/${r.id}/decide`,
    identity,
    routes.formKey(),
    html`<label for="note-${r.id}">Note</label>
          <input id="note-${r.id}" name="note" type="text" maxlength="${REVIEW_NOTE_LENGTH_MAX}">
          <button type="submit" name="decision" value="clear">Clear</button>
          <button type="submit" name="decision" value="reject" class="danger" data-confirm="Reject this case? The transfer is rejected.">Reject</button>`,
  );
}

/** The review cases' rows, each with its findings and its decision (or the form to decide it). */
function reviewRows(routes: ConsoleRoutes, identity: ConsoleIdentity, reviews: Review[], names: PartyNames) {
  return reviews.map((r) => [
    html`<code>${r.id}</code>`,
    r.kind,
    partyCell(names, r.customerId, r.walletId),
    idLink(`${CONSOLE_PREFIX}/transfers`, r.transferId),
    html`<details><summary>findings</summary>${jsonBlock(presentReview(r).findings)}</details>`,
    html`${statusBadge(r.status)} ${r.note ? html`<span class="hint">${r.note}</span>` : ''}`,
    time(r.createdAt),
    reviewDecision(routes, identity, r),
  ]);
}

const REVIEW_QUEUE: OpenQueue = {
  title: 'Review cases',
  section: `${CONSOLE_PREFIX}/reviews`,
  idPrefix: ID_PREFIXES.review,
  items: 'review cases',
  itemsShort: 'cases',
  settled: 'decided',
  headers: ['Case', 'Kind', 'Customer', 'Transfer', 'Findings', 'Status', 'Created', 'Decide'],
};

/** The names beside the customers and wallets that cases or alerts are about. */
function namesOfParties(
  routes: ConsoleRoutes,
  identity: ConsoleIdentity,
  items: readonly { customerId: string | null; walletId: string | null }[],
) {
  return partyNames(routes.deps, identity.organizationId, {
    customers: items.map((i) => i.customerId),
    wallets: items.map((i) => i.walletId),
  });
}

/** GET /reviews: the open review cases (or all). */
function reviewQueue(routes: ConsoleRoutes): Handler {
  return openQueuePage(routes, REVIEW_QUEUE, listReviews, async (reviews, identity) =>
    reviewRows(routes, identity, reviews, await namesOfParties(routes, identity, reviews)),
  );
}

/** POST /reviews/:id/decide: clears or rejects a case with an optional note. */
function decideCase(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const decision = field(request.body, 'decision');
    if (decision !== 'clear' && decision !== 'reject') {
      throw validationError('decision', 'Choose clear or reject.', 'invalid_value');
    }
    const note = optionalNote(field(request.body, 'note'), 'note', REVIEW_NOTE_LENGTH_MAX);
    await recordOrganizationWrite(routes, request, identity, 200, decideReview, presentReview, [
      request.params.id ?? '',
      decision as ReviewDecision,
      { note },
      consoleActor(identity),
    ]);
    return redirectWithNotice(reply, REVIEW_QUEUE.section, 'review_decided');
  };
}

/** An alert's resolution: who resolved it, or (open) the form to resolve it with a disposition. */
function alertResolution(routes: ConsoleRoutes, identity: ConsoleIdentity, a: PresentedAlert) {
  return rowFormOrSettler(
    { open: a.status === 'open', settledBy: a.resolved_by },
    `${CONSOLE_PREFIX}/alerts/${a.id}/resolve`,
    identity,
    routes.formKey(),
    html`<label for="disp-${a.id}">Disposition</label>
          <select id="disp-${a.id}" name="disposition">${AML_DISPOSITIONS.map((d) => html`<option value="${d}">${d.replace(/_/g, ' ')}</option>`)}</select>
          <label for="anote-${a.id}">Note</label>
          <input id="anote-${a.id}" name="note" type="text" maxlength="${AML_ALERT_NOTE_LENGTH_MAX}">
          <button type="submit">Resolve</button>`,
  );
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
      idLink(`${CONSOLE_PREFIX}/transfers`, a.transfer),
      a.reason,
      html`${statusBadge(a.status)} ${a.disposition ?? ''}`,
      time(a.created_at),
      alertResolution(routes, identity, a),
    ]);
}

const ALERT_QUEUE: OpenQueue = {
  title: 'AML alerts',
  section: `${CONSOLE_PREFIX}/alerts`,
  idPrefix: ID_PREFIXES.amlAlert,
  items: 'AML alerts',
  itemsShort: 'alerts',
  settled: 'resolved',
  headers: ['Alert', 'Rule', 'Action', 'Customer', 'Transfer', 'Reason', 'Status', 'Created', 'Resolve'],
};

/** GET /alerts: the open AML alerts (or all). */
function alertQueue(routes: ConsoleRoutes): Handler {
  return openQueuePage(routes, ALERT_QUEUE, listAlerts, async (alerts, identity) =>
    alertRows(routes, identity, alerts, await namesOfParties(routes, identity, alerts)),
  );
}

/** POST /alerts/:id/resolve: resolves an alert with a disposition and an optional note. */
function resolveAlert(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const disposition = chosenField(request.body, 'disposition', AML_DISPOSITIONS);
    const note = optionalNote(field(request.body, 'note'), 'note', AML_ALERT_NOTE_LENGTH_MAX);
    await recordOrganizationWrite(routes, request, identity, 200, resolveAmlAlert, presentAmlAlert, [
      request.params.id ?? '',
      { disposition, note },
      consoleActor(identity),
    ]);
    return redirectWithNotice(reply, ALERT_QUEUE.section, 'alert_resolved');
  };
}

export function compliancePages(routes: ConsoleRoutes): void {
  routes.get('/reviews', 'compliance', reviewQueue(routes));
  routes.post('/reviews/:id/decide', 'compliance', decideCase(routes));
  routes.get('/alerts', 'compliance', alertQueue(routes));
  routes.post('/alerts/:id/resolve', 'compliance', resolveAlert(routes));
}
