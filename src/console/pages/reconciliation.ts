/** Reconciliation exceptions and their resolution (the `compliance` scope, as in the API). */
import { type ConsoleIdentity, consoleActor } from '../../app/console/session.ts';
import { validationError } from '../../domain/errors.ts';
import { ID_PREFIXES, idPattern } from '../../domain/ids.ts';
import {
  listReconciliationExceptions,
  presentException,
  RESOLUTION_ACTIONS,
  type ResolutionAction,
  resolveException,
} from '../../modules/treasury/index.ts';
import { html } from '../html.ts';
import {
  CONSOLE_PREFIX,
  csrfField,
  jsonBlock,
  link,
  nextPageLink,
  statusBadge,
  table,
  time,
} from '../layout.ts';
import { noticeOf, withNotice } from '../notices.ts';
import { type ConsoleRoutes, field, type Handler, settle } from '../routing.ts';
import { CONSOLE_LIST_ROWS } from './customers.ts';

/** The API's limit on a resolution's note. */
export const RESOLUTION_NOTE_CHARS_MAX = 1_000;
const SECTION = `${CONSOLE_PREFIX}/reconciliation`;

type PresentedException = ReturnType<typeof presentException>;

/** An exception's resolution: who resolved it, or (open) the form to resolve it with an action and a note. */
function resolution(routes: ConsoleRoutes, identity: ConsoleIdentity, e: PresentedException) {
  return e.status !== 'open'
    ? html`by <code>${e.resolved_by ?? '—'}</code>`
    : html`<form method="post" action="${SECTION}/${e.id}/resolve" class="row-form">
          ${csrfField(identity.token)}<input type="hidden" name="_form" value="${routes.formKey()}">
          <label for="action-${e.id}">Action</label>
          <select id="action-${e.id}" name="action">${RESOLUTION_ACTIONS.map((a) => html`<option value="${a}">${a.replace(/_/g, ' ')}</option>`)}</select>
          <label for="rnote-${e.id}">Note</label>
          <input id="rnote-${e.id}" name="note" type="text" required maxlength="${RESOLUTION_NOTE_CHARS_MAX}">
          <label for="rtr-${e.id}">Transfer <span class="hint">(manual match of an unmatched line)</span></label>
          <input id="rtr-${e.id}" name="transfer" type="text" placeholder="tr_…">
          <button type="submit">Resolve</button>
        </form>`;
}

/** The exceptions' rows, each with its details and its resolution (or the form). */
function exceptionRows(routes: ConsoleRoutes, identity: ConsoleIdentity, exceptions: PresentedException[]) {
  return exceptions.map((e) => [
    html`<code>${e.id}</code>`,
    e.kind.replace(/_/g, ' '),
    e.transfer ? link(`${CONSOLE_PREFIX}/transfers/${e.transfer}`, html`<code>${e.transfer}</code>`) : '—',
    html`<details><summary>details</summary>${jsonBlock(e.details)}</details>`,
    html`${statusBadge(e.status)} ${e.resolution ?? ''} ${e.note ? html`<span class="hint">${e.note}</span>` : ''}`,
    time(e.created_at),
    resolution(routes, identity, e),
  ]);
}

/** GET /reconciliation: the open exceptions (or all). */
function exceptionQueue(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const q = request.query;
    const status = q.status === 'all' ? undefined : ('open' as const);
    const page = await listReconciliationExceptions(routes.deps, identity.organizationId, {
      limit: CONSOLE_LIST_ROWS,
      status,
      startingAfter:
        q.after && new RegExp(idPattern(ID_PREFIXES.reconciliationException)).test(q.after)
          ? q.after
          : undefined,
    });
    return routes.render(reply, {
      title: 'Reconciliation exceptions',
      identity,
      section: SECTION,
      notice: noticeOf(q),
      body: html`<p>${status ? link(`${SECTION}?status=all`, 'Show resolved exceptions too') : link(SECTION, 'Show open exceptions only')}</p>
${table(
  'Reconciliation exceptions, newest first',
  ['Exception', 'Kind', 'Transfer', 'Details', 'Status', 'Created', 'Resolve'],
  exceptionRows(routes, identity, page.data.map(presentException)),
  status ? 'No open exceptions.' : 'No exceptions.',
)}${nextPageLink(SECTION, { status: q.status }, page.hasMore ? page.data.at(-1)?.id : undefined)}`,
    });
  };
}

/** The resolution a form asks for: an action, a note saying why, and (a manual match) the transfer. */
function resolutionOf(body: unknown): {
  action: ResolutionAction;
  note: string;
  transfer: string | undefined;
} {
  const action = field(body, 'action');
  if (!(RESOLUTION_ACTIONS as readonly string[]).includes(action ?? '')) {
    throw validationError('action', `Choose one of ${RESOLUTION_ACTIONS.join(', ')}.`, 'invalid_value');
  }
  const note = field(body, 'note')?.trim() ?? '';
  if (note.length === 0 || [...note].length > RESOLUTION_NOTE_CHARS_MAX) {
    throw validationError(
      'note',
      `A note of 1 to ${RESOLUTION_NOTE_CHARS_MAX} characters says why.`,
      'out_of_range',
    );
  }
  const transfer = field(body, 'transfer')?.trim() || undefined;
  if (transfer !== undefined && !new RegExp(idPattern(ID_PREFIXES.transfer)).test(transfer)) {
    throw validationError('transfer', `'${transfer}' is not a transfer id (tr_…).`, 'invalid_format');
  }
  return { action: action as ResolutionAction, note, transfer };
}

/** POST /reconciliation/:id/resolve: resolves an exception as the API does. */
function resolve(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const { action, note, transfer } = resolutionOf(request.body);
    settle(
      await routes.write(request, identity, async (tx) => ({
        status: 200,
        body: presentException(
          await resolveException(
            tx,
            routes.deps,
            identity.organizationId,
            request.params.id ?? '',
            { action, note, transfer },
            consoleActor(identity),
            identity.member.id,
          ),
        ),
      })),
    );
    return reply.redirect(withNotice(SECTION, 'exception_resolved'), 303);
  };
}

export function reconciliationPages(routes: ConsoleRoutes): void {
  routes.get('/reconciliation', 'compliance', exceptionQueue(routes));
  routes.post('/reconciliation/:id/resolve', 'compliance', resolve(routes));
}
