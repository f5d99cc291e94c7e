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
import { CONSOLE_PREFIX, idLink, jsonBlock, rowFormOrSettler, statusBadge, time } from '../layout.ts';
import { redirectWithNotice } from '../notices.ts';
import { type OpenQueue, openQueuePage } from '../queues.ts';
import { type ConsoleRoutes, chosenField, field, type Handler, recordOrganizationWrite } from '../routing.ts';

/** The API's limit on a resolution's note. */
export const RESOLUTION_NOTE_CHARS_MAX = 1_000;
const SECTION = `${CONSOLE_PREFIX}/reconciliation`;

type PresentedException = ReturnType<typeof presentException>;

/** An exception's resolution: who resolved it, or (open) the form to resolve it with an action and a note. */
function resolution(routes: ConsoleRoutes, identity: ConsoleIdentity, e: PresentedException) {
  return rowFormOrSettler(
    { open: e.status === 'open', settledBy: e.resolved_by },
    `${SECTION}/${e.id}/resolve`,
    identity,
    routes.formKey(),
    html`<label for="action-${e.id}">Action</label>
          <select id="action-${e.id}" name="action">${RESOLUTION_ACTIONS.map((a) => html`<option value="${a}">${a.replace(/_/g, ' ')}</option>`)}</select>
          <label for="rnote-${e.id}">Note</label>
          <input id="rnote-${e.id}" name="note" type="text" required maxlength="${RESOLUTION_NOTE_CHARS_MAX}">
          <label for="rtr-${e.id}">Transfer <span class="hint">(manual match of an unmatched line)</span></label>
          <input id="rtr-${e.id}" name="transfer" type="text" placeholder="tr_…">
          <button type="submit">Resolve</button>`,
  );
}

/** The exceptions' rows, each with its details and its resolution (or the form). */
function exceptionRows(routes: ConsoleRoutes, identity: ConsoleIdentity, exceptions: PresentedException[]) {
  return exceptions.map((e) => [
    html`<code>${e.id}</code>`,
    e.kind.replace(/_/g, ' '),
    idLink(`${CONSOLE_PREFIX}/transfers`, e.transfer),
    html`<details><summary>details</summary>${jsonBlock(e.details)}</details>`,
    html`${statusBadge(e.status)} ${e.resolution ?? ''} ${e.note ? html`<span class="hint">${e.note}</span>` : ''}`,
    time(e.created_at),
    resolution(routes, identity, e),
  ]);
}

const EXCEPTION_QUEUE: OpenQueue = {
  title: 'Reconciliation exceptions',
  section: SECTION,
  idPrefix: ID_PREFIXES.reconciliationException,
  items: 'exceptions',
  itemsShort: 'exceptions',
  settled: 'resolved',
  headers: ['Exception', 'Kind', 'Transfer', 'Details', 'Status', 'Created', 'Resolve'],
};

/** GET /reconciliation: the open exceptions (or all). */
function exceptionQueue(routes: ConsoleRoutes): Handler {
  return openQueuePage(routes, EXCEPTION_QUEUE, listReconciliationExceptions, (exceptions, identity) =>
    exceptionRows(routes, identity, exceptions.map(presentException)),
  );
}

/** The resolution a form asks for: an action, a note saying why, and (a manual match) the transfer. */
function resolutionOf(body: unknown): {
  action: ResolutionAction;
  note: string;
  transfer: string | undefined;
} {
  const action = chosenField(body, 'action', RESOLUTION_ACTIONS);
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
  return { action, note, transfer };
}

/** POST /reconciliation/:id/resolve: resolves an exception as the API does. */
function resolve(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const { action, note, transfer } = resolutionOf(request.body);
    await recordOrganizationWrite(routes, request, identity, 200, resolveException, presentException, [
      request.params.id ?? '',
      { action, note, transfer },
      consoleActor(identity),
      identity.member.id,
    ]);
    return redirectWithNotice(reply, SECTION, 'exception_resolved');
  };
}

export function reconciliationPages(routes: ConsoleRoutes): void {
  routes.get('/reconciliation', 'compliance', exceptionQueue(routes));
  routes.post('/reconciliation/:id/resolve', 'compliance', resolve(routes));
}
