/**
 * API keys (the `admin` scope): the organization's keys by prefix, a new key shown once, and revoking one.
 * A key may act for a member: its scopes then never exceed what the member's roles grant.
 */

import type { FastifyReply } from 'fastify';
import type { ConsoleIdentity } from '../../app/console/session.ts';
import { createOrganizationKey, organizationKeys, revokeOrganizationKey } from '../../app/console/views.ts';
import { listMembers } from '../../app/members.ts';
import { SCOPES, type Scope } from '../../domain/apiKeys.ts';
import { validationError } from '../../domain/errors.ts';
import { ID_PREFIXES, idPattern } from '../../domain/ids.ts';
import { PAGE_SIZE_MAX } from '../../domain/pagination.ts';
import { html } from '../html.ts';
import { CONSOLE_PREFIX, csrfField, statusBadge, table, time } from '../layout.ts';
import { noticeOf, withNotice } from '../notices.ts';
import type { ConsoleRoutes, FormBody } from '../plugin.ts';
import { field } from '../plugin.ts';

const SECTION = `${CONSOLE_PREFIX}/api-keys`;

export function apiKeyPages(routes: ConsoleRoutes): void {
  const { deps } = routes;

  const keysPage = async (
    reply: FastifyReply,
    identity: ConsoleIdentity,
    query: unknown,
    created?: { key: string; id: string },
  ) => {
    const [keys, members] = await Promise.all([
      organizationKeys(deps, identity.organizationId),
      listMembers(deps, identity.organizationId, { limit: PAGE_SIZE_MAX, status: 'active' }),
    ]);
    const emailOf = new Map(members.data.map((m) => [m.id, m.email]));
    return routes.render(reply, {
      title: 'API keys',
      identity,
      section: SECTION,
      notice: noticeOf(query),
      body: html`${
        created
          ? html`<div class="secret" role="status"><h2>New key ${created.id}</h2>
  <p>Shown once: copy it now. Only its first characters are kept in clear.</p>
  <p><code class="reveal" id="new-key">${created.key}</code></p></div>`
          : ''
      }
<h2>Create a key</h2>
<form method="post" action="${SECTION}" class="stack narrow">
  ${csrfField(identity.token)}<input type="hidden" name="_form" value="${routes.formKey()}">
  <fieldset><legend>Scopes</legend>
    ${SCOPES.map(
      (s) =>
        html`<label class="check"><input type="checkbox" name="scopes" value="${s}"${s === 'read' || s === 'write' ? html` checked` : ''}> ${s}</label>`,
    )}
  </fieldset>
  <label for="member">Acts for member <span class="hint">(optional: its scopes are then capped by their roles)</span></label>
  <select id="member" name="member"><option value="">No member (a server key)</option>
    ${members.data.map((m) => html`<option value="${m.email}">${m.email} (${m.roles.join(', ')})</option>`)}
  </select>
  <button type="submit">Create key</button>
</form>
<h2>Keys</h2>
${table(
  'The organization’s API keys, oldest first',
  ['Key', 'Prefix', 'Scopes', 'Acts for', 'Created', 'Status', ''],
  keys.map((k) => [
    html`<code>${k.id}</code>`,
    html`<code>${k.displayPrefix}…</code>`,
    k.scopes.join(', '),
    k.memberId ? (emailOf.get(k.memberId) ?? html`<code>${k.memberId}</code>`) : '—',
    time(k.createdAt),
    k.revokedAt ? html`${statusBadge('revoked')} ${time(k.revokedAt)}` : statusBadge('active'),
    k.revokedAt
      ? ''
      : html`<form method="post" action="${SECTION}/${k.id}/revoke">${csrfField(identity.token)}
          <button type="submit" class="danger" data-confirm="Revoke ${k.displayPrefix}…? Requests with it are refused from now on.">Revoke</button></form>`,
  ]),
  'No keys.',
)}`,
    });
  };

  routes.get('/api-keys', 'admin', (request, reply, identity) => keysPage(reply, identity, request.query));

  routes.post('/api-keys', 'admin', async (request, reply, identity) => {
    const raw = (request.body as FormBody | undefined)?.scopes;
    const scopes = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((s) =>
      (SCOPES as readonly string[]).includes(s),
    ) as Scope[];
    if (scopes.length === 0) throw validationError('scopes', 'Choose at least one scope.', 'missing');
    const issued = await createOrganizationKey(deps, identity.organizationName, {
      scopes,
      memberEmail: field(request.body, 'member'),
    });
    // Shown on this answer only: the key is stored as a hash.
    return keysPage(reply, identity, {}, { key: issued.key, id: issued.record.id });
  });

  routes.post('/api-keys/:id/revoke', 'admin', async (request, reply, identity) => {
    const id = request.params.id ?? '';
    if (!new RegExp(idPattern(ID_PREFIXES.apiKey)).test(id)) {
      throw validationError('id', `'${id}' is not an API key id (key_…).`, 'invalid_format');
    }
    await revokeOrganizationKey(deps, identity.organizationId, id);
    return reply.redirect(withNotice(SECTION, 'key_revoked'), 303);
  });
}
