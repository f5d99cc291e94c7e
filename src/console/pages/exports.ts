/**
 * Exports: start one, follow its progress (the page refreshes a progress bar from a small JSON status
 * route when scripts run), download the finished file. The same scopes as the API: `read`, and
 * `compliance` for evidence and reconciliation exceptions.
 */

import type { ConsoleIdentity } from '../../app/console/session.ts';
import { grantsScope } from '../../domain/access.ts';
import { AppError } from '../../domain/errors.ts';
import {
  createExport,
  EXPORT_FORMATS,
  EXPORT_TYPES,
  type ExportType,
  getExport,
  listOrganizationExports,
  OPERATOR_EXPORT_TYPES,
  openExportFile,
  presentExport,
} from '../../modules/exports/index.ts';
import { html } from '../html.ts';
import { CONSOLE_PREFIX, statusBadge, table, time, writeFormFields } from '../layout.ts';
import { noticeOf, redirectWithNotice } from '../notices.ts';
import {
  CONSOLE_LIST_ROWS,
  type ConsoleRoutes,
  chosenField,
  field,
  type Handler,
  recordOrganizationWrite,
} from '../routing.ts';
import { dayBound } from './transfers.ts';

const SECTION = `${CONSOLE_PREFIX}/exports`;
const CONTENT_TYPES = { csv: 'text/csv; charset=utf-8', jsonl: 'application/x-ndjson' } as const;

function forbiddenType(type: ExportType): AppError {
  return new AppError({
    status: 403,
    code: 'insufficient_permissions',
    title: 'Forbidden',
    detail: `Exporting ${type} needs the 'compliance' scope.`,
    param: 'type',
  });
}

function progress(e: ReturnType<typeof presentExport>) {
  const max = e.rows_estimated ?? 0;
  return html`<span class="progress" data-export="${e.id}" data-status="${e.status}">
    ${statusBadge(e.status)}
    ${
      e.status === 'ready' || e.status === 'failed' || e.status === 'expired'
        ? ''
        : html`<progress max="${Math.max(max, 1)}" value="${Math.min(e.rows_written, Math.max(max, 1))}" aria-label="Export ${e.id} progress"></progress>`
    }
    <span class="rows">${e.rows_written}${max ? ` of ${max}` : ''} rows</span></span>`;
}

/** The form starting an export, offering the operator types only to the `compliance` scope. */
function startExportForm(routes: ConsoleRoutes, identity: ConsoleIdentity) {
  const compliance = grantsScope(identity.scopes, 'compliance');
  return html`<form method="post" action="${SECTION}" class="search">
  ${writeFormFields(identity, routes.formKey())}
  <div><label for="etype">Type</label><select id="etype" name="type">
    ${EXPORT_TYPES.filter((t) => compliance || !OPERATOR_EXPORT_TYPES.includes(t)).map((t) => html`<option value="${t}">${t.replace(/_/g, ' ')}</option>`)}
  </select></div>
  <div><label for="eformat">Format</label><select id="eformat" name="format">${EXPORT_FORMATS.map((f) => html`<option>${f}</option>`)}</select></div>
  <div><label for="efrom">From (UTC day)</label><input id="efrom" name="from" type="date"></div>
  <div><label for="eto">To (UTC day)</label><input id="eto" name="to" type="date"></div>
  <div><button type="submit">Start export</button></div>
</form>`;
}

/** The exports with their progress, and each finished one's download. */
function exportsTable(exports: ReturnType<typeof presentExport>[]) {
  return table(
    'Exports, newest first',
    ['Export', 'Type', 'Format', 'Progress', 'Created', 'File'],
    exports.map((e) => [
      html`<code>${e.id}</code>`,
      e.type.replace(/_/g, ' '),
      e.format,
      progress(e),
      time(e.created_at),
      html`<span data-download="${e.id}">${
        e.status === 'ready'
          ? html`<a href="${SECTION}/${e.id}/download" download>Download</a> <span class="hint">sha256 <code>${(e.sha256 ?? '').slice(0, 12)}…</code></span>`
          : (e.error ?? '—')
      }</span>`,
    ]),
    'No exports yet.',
  );
}

/** GET /exports: the form to start one, and the exports so far. */
function exportsPage(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const page = await listOrganizationExports(routes.deps, identity.organizationId, {
      limit: CONSOLE_LIST_ROWS,
    });
    return routes.render(reply, {
      title: 'Exports',
      identity,
      section: SECTION,
      notice: noticeOf(request.query),
      body: html`<h2>Start an export</h2>
${startExportForm(routes, identity)}
<h2>Exports</h2>
${exportsTable(page.data.map(presentExport))}`,
    });
  };
}

/** The export a form asks for: its type (refused without `compliance` for the operator types) and format. */
function exportRequestOf(body: unknown, identity: ConsoleIdentity) {
  const type = chosenField(body, 'type', EXPORT_TYPES);
  const format = chosenField(body, 'format', EXPORT_FORMATS);
  if (OPERATOR_EXPORT_TYPES.includes(type) && !grantsScope(identity.scopes, 'compliance')) {
    throw forbiddenType(type);
  }
  return { type, format };
}

/** POST /exports: starts an export, optionally for a range of UTC days. */
function startExport(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const { type, format } = exportRequestOf(request.body, identity);
    const from = dayBound(field(request.body, 'from'), 'from', false);
    const to = dayBound(field(request.body, 'to'), 'to', true);
    await recordOrganizationWrite(routes, request, identity, 202, createExport, presentExport, [
      { type, format, from: from?.toISOString(), to: to?.toISOString() },
      identity.member.id,
    ]);
    return redirectWithNotice(reply, SECTION, 'export_started');
  };
}

/** GET /exports/:id/status: what the page's script polls while an export runs. */
function exportStatus(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const e = presentExport(await getExport(routes.deps, identity.organizationId, request.params.id ?? ''));
    return reply.type('application/json; charset=utf-8').send({
      id: e.id,
      status: e.status,
      rows_written: e.rows_written,
      rows_estimated: e.rows_estimated,
      download: e.status === 'ready' ? `${SECTION}/${e.id}/download` : null,
      error: e.error,
    });
  };
}

/** GET /exports/:id/download: the finished file, with its SHA-256. */
function downloadExport(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const { job, stream } = await openExportFile(
      routes.deps,
      identity.organizationId,
      request.params.id ?? '',
    );
    if (OPERATOR_EXPORT_TYPES.includes(job.type) && !grantsScope(identity.scopes, 'compliance')) {
      stream.destroy();
      throw forbiddenType(job.type);
    }
    return reply
      .type(CONTENT_TYPES[job.format])
      .header('content-disposition', `attachment; filename="${job.fileName ?? `${job.id}.${job.format}`}"`)
      .header('x-content-sha256', job.sha256 ?? '')
      .send(stream);
  };
}

export function exportPages(routes: ConsoleRoutes): void {
  routes.get('/exports', 'read', exportsPage(routes));
  routes.post('/exports', 'read', startExport(routes));
  routes.get('/exports/:id/status', 'read', exportStatus(routes));
  routes.get('/exports/:id/download', 'read', downloadExport(routes));
}
