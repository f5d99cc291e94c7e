/** The member's own account: who they are, their roles, and their console password. */
import { changePassword, hasPassword } from '../../app/console/session.ts';
import { CONSOLE_PASSWORD_CHARS_MAX, CONSOLE_PASSWORD_CHARS_MIN } from '../../domain/console.ts';
import { html } from '../html.ts';
import { CONSOLE_PREFIX, csrfField, fields } from '../layout.ts';
import { noticeOf, redirectWithNotice } from '../notices.ts';
import { type ConsoleRoutes, field } from '../routing.ts';

export function accountPages(routes: ConsoleRoutes): void {
  routes.get('/account', 'read', async (request, reply, identity) => {
    const passwordSet = await hasPassword(routes.deps, identity.member.id);
    return routes.render(reply, {
      title: 'Account',
      identity,
      notice: noticeOf(request.query),
      body: html`${fields([
        ['Email', identity.member.email],
        ['Name', identity.member.name],
        ['Organization', identity.organizationName],
        ['Roles', identity.member.roles.join(', ')],
        ['Scopes', identity.scopes.join(', ')],
        ['Signed in with', identity.method === 'link' ? 'a one-time link' : 'password'],
      ])}
<h2>${passwordSet ? 'Change your password' : 'Set a password'}</h2>
<form method="post" action="${CONSOLE_PREFIX}/account/password" class="stack narrow">
  ${csrfField(identity.token)}
  <input type="text" name="username" autocomplete="username" value="${identity.member.email}" hidden>
  ${
    passwordSet
      ? html`<label for="current">Current password</label>
  <input id="current" name="current" type="password" autocomplete="current-password" required>`
      : ''
  }
  <label for="password">New password <span class="hint">(${CONSOLE_PASSWORD_CHARS_MIN} to ${CONSOLE_PASSWORD_CHARS_MAX} characters)</span></label>
  <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${CONSOLE_PASSWORD_CHARS_MIN}" maxlength="${CONSOLE_PASSWORD_CHARS_MAX}">
  <label for="confirmation">New password again</label>
  <input id="confirmation" name="confirmation" type="password" autocomplete="new-password" required minlength="${CONSOLE_PASSWORD_CHARS_MIN}" maxlength="${CONSOLE_PASSWORD_CHARS_MAX}">
  <button type="submit">Save password</button>
</form>`,
    });
  });

  routes.post('/account/password', 'read', async (request, reply, identity) => {
    await changePassword(routes.deps, identity, {
      current: field(request.body, 'current'),
      password: field(request.body, 'password') ?? '',
      confirmation: field(request.body, 'confirmation') ?? '',
    });
    return redirectWithNotice(reply, `${CONSOLE_PREFIX}/account`, 'password_set');
  });
}
