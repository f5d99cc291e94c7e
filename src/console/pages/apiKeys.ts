/**
 * API keys (the `admin` scope): the organization's keys by prefix with who created each, a new key for the
 * signed-in admin themself (shown once, scopes at most their roles'), and revoking any key. Keys for other
 * members and server keys beyond `read`/`write` come only from the operator's CLI on the server.
 */

import type { FastifyReply } from 'fastify';
import type { ConsoleIdentity } from '../../app/console/session.ts';
import { createOrganizationKey, organizationKeys, revokeOrganizationKey } from '../../app/console/views.ts';
import { SCOPES } from '../../domain/access.ts';
import { validationError } from '../../domain/errors.ts';
import { ID_PREFIXES, idPattern } from '../../domain/ids.ts';
import { PAGE_SIZE_MAX } from '../../domain/pagination.ts';
import { API_KEY_DESCRIPTION_CHARS_MAX } from '../../modules/apiKeys/index.ts';
import { listMembers } from '../../modules/authorization/index.ts';
import { html } from '../html.ts';
import { CONSOLE_PREFIX, csrfField, statusBadge, table, time } from '../layout.ts';
import { noticeOf, redirectWithNotice } from '../notices.ts';
import type { ConsoleRoutes, FormBody, Handler } from '../routing.ts';
import { field } from '../routing.ts';

const SECTION = `${CONSOLE_PREFIX}/api-keys`;

type OrganizationKey = Awaited<ReturnType<typeof organizationKeys>>[number];

/** A key just created: its secret (shown once) and, when it waits for approval, its change. */
interface CreatedKey {
  key: string;
  id: string;
  change?: { id: string; approval: string | null };
}

/** The new key, shown once, and why it does not work yet when it waits for another member's approval. */
function createdKeyNotice(created: CreatedKey) {
  return html`<div class="secret" role="status"><h2>New key ${created.id}</h2>
  <p>Shown once: copy it now. Only its first characters are kept in clear.</p>${
    created.change
      ? html`
  <p id="key-pending">It works only once another member approves it: your organization’s policy asks for approval of keys beyond read and write (change <code>${created.change.id}</code>${created.change.approval ? html`, approval <a href="${CONSOLE_PREFIX}/approvals/${created.change.approval}"><code>${created.change.approval}</code></a>` : ''}). Rejected, expired or canceled, it never works.</p>`
      : ''
  }
  <p><code class="reveal" id="new-key">${created.key}</code></p></div>`;
}

/** The form creating a key for the signed-in admin, offering at most the scopes their roles grant. */
function createKeyForm(routes: ConsoleRoutes, identity: ConsoleIdentity) {
  return html`<form method="post" action="${SECTION}" class="stack narrow">
  ${csrfField(identity.token)}<input type="hidden" name="_form" value="${routes.formKey()}">
  <fieldset><legend>Scopes</legend>
    ${SCOPES.filter((s) => identity.scopes.includes(s)).map(
      (s) =>
        html`<label class="check"><input type="checkbox" name="scopes" value="${s}"${s === 'read' || s === 'write' ? html` checked` : ''}> ${s}</label>`,
    )}
  </fieldset>
  <label for="description">Description <span class="hint">(optional)</span></label>
  <input id="description" name="description" maxlength="${String(API_KEY_DESCRIPTION_CHARS_MAX)}">
  <button type="submit">Create key</button>
</form>`;
}

/** The organization's keys, each with whom it acts for, who created it, and a revoke button while live. */
function keysTable(keys: OrganizationKey[], emailOf: Map<string, string>, identity: ConsoleIdentity) {
  // `created_by`: a member's id (shown as their email), `operator:<user>`, `seed` or `unrecorded`.
  const creatorOf = (createdBy: string) =>
    emailOf.get(createdBy) ??
    (createdBy.startsWith('operator:') ? createdBy : html`<code>${createdBy}</code>`);
  return table(
    'The organization’s API keys, oldest first',
    ['Key', 'Prefix', 'Scopes', 'Acts for', 'Created by', 'Created', 'Status', ''],
    keys.map((k) => [
      html`<code>${k.id}</code>`,
      html`<code>${k.displayPrefix}…</code>`,
      k.scopes.join(', '),
      k.memberId ? (emailOf.get(k.memberId) ?? html`<code>${k.memberId}</code>`) : 'no member (server key)',
      creatorOf(k.createdBy),
      time(k.createdAt),
      k.revokedAt ? html`${statusBadge('revoked')} ${time(k.revokedAt)}` : statusBadge('active'),
      k.revokedAt
        ? ''
        : html`<form method="post" action="${SECTION}/${k.id}/revoke">${csrfField(identity.token)}
          <button type="submit" class="danger" data-confirm="Revoke ${k.displayPrefix}…? Requests with it are refused from now on.">Revoke</button></form>`,
    ]),
    'No keys.',
  );
}

/** The keys page; with `created`, the key just made, shown on this answer only. */
async function renderKeysPage(
  routes: ConsoleRoutes,
  reply: FastifyReply,
  identity: ConsoleIdentity,
  query: unknown,
  created?: CreatedKey,
) {
  const [keys, members] = await Promise.all([
    organizationKeys(routes.deps, identity.organizationId),
    listMembers(routes.deps, identity.organizationId, { limit: PAGE_SIZE_MAX, status: 'active' }),
  ]);
  const emailOf = new Map(members.data.map((m) => [m.id, m.email]));
  return routes.render(reply, {
    title: 'API keys',
    identity,
    section: SECTION,
    notice: noticeOf(query),
    body: html`${created ? createdKeyNotice(created) : ''}
<h2>Create a key for yourself</h2>
<p>The key acts for you (${identity.member.email}): its scopes are at most what your roles grant, and it loses any your roles lose. A key with more than read and write waits for another member’s approval where your organization’s policy asks for it. Keys for other members, and server keys, are issued by the operator on the server (<code>mkoba keys create</code>).</p>
${createKeyForm(routes, identity)}
<h2>Keys</h2>
${keysTable(keys, emailOf, identity)}`,
  });
}

/** GET /api-keys: the keys and the form to create one. */
function keysPage(routes: ConsoleRoutes): Handler {
  return (request, reply, identity) => renderKeysPage(routes, reply, identity, request.query);
}

/** POST /api-keys: creates a key for the signed-in admin and shows it once. */
function createKey(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const raw = (request.body as FormBody | undefined)?.scopes;
    const scopes = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
    if (scopes.length === 0) throw validationError('scopes', 'Choose at least one scope.', 'missing');
    // A `member` field (an old form, or a crafted one) naming anyone else is refused by the use case.
    const outcome = await createOrganizationKey(routes.deps, identity, {
      scopes,
      memberEmail: field(request.body, 'member'),
      description: field(request.body, 'description'),
    });
    // Shown on this answer only: the key is stored as a hash (a waiting one, sealed in its change).
    if (outcome.status === 'pending') {
      const keyId = String(outcome.change.payload.key_id);
      return renderKeysPage(
        routes,
        reply,
        identity,
        {},
        {
          key: outcome.key,
          id: keyId,
          change: { id: outcome.change.id, approval: outcome.change.approvalId },
        },
      );
    }
    return renderKeysPage(routes, reply, identity, {}, { key: outcome.key, id: outcome.record.id });
  };
}

/** POST /api-keys/:id/revoke: revokes any of the organization's keys. */
function revokeKey(routes: ConsoleRoutes): Handler {
  return async (request, reply, identity) => {
    const id = request.params.id ?? '';
    if (!new RegExp(idPattern(ID_PREFIXES.apiKey)).test(id)) {
      throw validationError('id', `'${id}' is not an API key id (key_…).`, 'invalid_format');
    }
    await revokeOrganizationKey(routes.deps, identity, id);
    return redirectWithNotice(reply, SECTION, 'key_revoked');
  };
}

export function apiKeyPages(routes: ConsoleRoutes): void {
  routes.get('/api-keys', 'admin', keysPage(routes));
  routes.post('/api-keys', 'admin', createKey(routes));
  routes.post('/api-keys/:id/revoke', 'admin', revokeKey(routes));
}
