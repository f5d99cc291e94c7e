/** The console's page shell and the small components its pages share. */
import type { ConsoleIdentity } from '../app/console/session.ts';
import type { PartyNames } from '../app/console/views.ts';
import { grantsScope, type Scope } from '../domain/access.ts';
import { csrfTokenOf } from '../domain/console.ts';
import { html, type Renderable, type SafeHtml } from './html.ts';

export const CONSOLE_PREFIX = '/console';

export interface NavItem {
  href: string;
  label: string;
  /** The scope the page needs, as its API route does. */
  scope: Scope;
}

/** The pages in the order the navigation lists them. */
export const NAV_ITEMS: NavItem[] = [
  { href: `${CONSOLE_PREFIX}`, label: 'Home', scope: 'read' },
  { href: `${CONSOLE_PREFIX}/transfers`, label: 'Transfers', scope: 'read' },
  { href: `${CONSOLE_PREFIX}/customers`, label: 'Customers', scope: 'read' },
  { href: `${CONSOLE_PREFIX}/wallets`, label: 'Wallets', scope: 'read' },
  { href: `${CONSOLE_PREFIX}/approvals`, label: 'Approvals', scope: 'read' },
  { href: `${CONSOLE_PREFIX}/reviews`, label: 'Review cases', scope: 'compliance' },
  { href: `${CONSOLE_PREFIX}/alerts`, label: 'AML alerts', scope: 'compliance' },
  { href: `${CONSOLE_PREFIX}/reconciliation`, label: 'Reconciliation', scope: 'compliance' },
  { href: `${CONSOLE_PREFIX}/batches`, label: 'Payment batches', scope: 'read' },
  { href: `${CONSOLE_PREFIX}/webhooks`, label: 'Webhooks', scope: 'read' },
  { href: `${CONSOLE_PREFIX}/api-keys`, label: 'API keys', scope: 'admin' },
  { href: `${CONSOLE_PREFIX}/exports`, label: 'Exports', scope: 'read' },
  { href: `${CONSOLE_PREFIX}/launch-gates`, label: 'Launch gates', scope: 'read' },
  { href: `${CONSOLE_PREFIX}/rail-partners`, label: 'Rail partners', scope: 'admin' },
];

export interface PageOptions {
  title: string;
  identity?: ConsoleIdentity | undefined;
  /** The navigation item this page belongs to. */
  section?: string | undefined;
  notice?: string | undefined;
  error?: string | undefined;
  environment: string;
  body: Renderable;
}

export function can(identity: ConsoleIdentity, scope: Scope): boolean {
  return grantsScope(identity.scopes, scope);
}

/** The hidden field every form of a signed-in page carries. */
export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${csrfTokenOf(token)}">`;
}

/** The hidden fields every write form carries: the CSRF token and the form's once-only key. */
export function writeFormFields(identity: ConsoleIdentity, formKey: string): SafeHtml {
  return html`${csrfField(identity.token)}<input type="hidden" name="_form" value="${formKey}">`;
}

/** An open item's form in its table row (its fields and buttons posting to `action`), or once settled, who settled it. */
export function rowFormOrSettler(
  item: { open: boolean; settledBy: string | null },
  action: string,
  identity: ConsoleIdentity,
  formKey: string,
  controls: SafeHtml,
) {
  return !item.open
    ? html`by <code>${item.settledBy ?? '—'}</code>`
    : html`<form method="post" action="${action}" class="row-form">
          ${writeFormFields(identity, formKey)}
          ${controls}
        </form>`;
}

export function page(options: PageOptions): SafeHtml {
  const { identity } = options;
  const nav = identity
    ? html`<nav class="side" aria-label="Main"><ul>${NAV_ITEMS.filter((item) =>
        can(identity, item.scope),
      ).map(
        (item) =>
          html`<li><a href="${item.href}"${item.href === options.section ? html` aria-current="page"` : ''}>${item.label}</a></li>`,
      )}</ul></nav>`
    : '';
  const account = identity
    ? html`<div class="account">
        <span class="who">${identity.member.name ?? identity.member.email}
          <span class="roles">(${identity.member.roles.join(', ')})</span></span>
        <a href="${CONSOLE_PREFIX}/account">Account</a>
        <form method="post" action="${CONSOLE_PREFIX}/sign-out" class="inline">
          ${csrfField(identity.token)}<button type="submit" class="link">Sign out</button>
        </form>
      </div>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Mkoba console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${CONSOLE_PREFIX}/static/console.css">
<link rel="stylesheet" href="${CONSOLE_PREFIX}/static/uPlot.min.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <span class="brand">Mkoba console</span>
  ${identity ? html`<span class="org">${identity.organizationName}</span>` : ''}
  <span class="env env-${options.environment}">${options.environment}</span>
  ${account}
</header>
<div class="shell">
${nav}
<main id="main" tabindex="-1">
<h1>${options.title}</h1>
${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ''}
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
${options.body}
</main>
</div>
<script src="${CONSOLE_PREFIX}/static/uPlot.iife.min.js" defer></script>
<script src="${CONSOLE_PREFIX}/static/console.js" defer></script>
</body>
</html>`;
}

/** A table with a caption (read by screen readers), header cells with scope, and a line when empty. */
export function table(caption: string, headers: string[], rows: Renderable[][], empty = 'Nothing here yet.') {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<div class="table-wrap"><table>
<caption>${caption}</caption>
<thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>${rows.map((row) => html`<tr>${row.map((cell) => html`<td>${cell}</td>`)}</tr>`)}</tbody>
</table></div>`;
}

/** A definition list of a resource's fields. */
export function fields(entries: [string, Renderable][]) {
  return html`<dl class="fields">${entries.map(([k, v]) => html`<dt>${k}</dt><dd>${v ?? '—'}</dd>`)}</dl>`;
}

export function statusBadge(status: string) {
  return html`<span class="badge status-${status.replace(/[^a-z_]/g, '')}">${status.replace(/_/g, ' ')}</span>`;
}

export function time(value: string | Date | null | undefined) {
  if (value === null || value === undefined) return html`—`;
  const iso = typeof value === 'string' ? value : value.toISOString();
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}

export function link(href: string, text: Renderable) {
  return html`<a href="${href}">${text}</a>`;
}

/** A record's id, as code, linked to its page under `section` (`${CONSOLE_PREFIX}/transfers`); — when none. */
export function idLink(section: string, id: string | null | undefined) {
  return id ? link(`${section}/${id}`, html`<code>${id}</code>`) : '—';
}

/** A customer's name linked to its page, with its id beside it; the id alone when no name is known. */
export function customerCell(names: PartyNames, id: string | null | undefined) {
  if (!id) return html`—`;
  const customer = names.customer(id);
  return customer
    ? html`${link(`${CONSOLE_PREFIX}/customers/${id}`, customer.name)} <code class="hint">${id}</code>`
    : idLink(`${CONSOLE_PREFIX}/customers`, id);
}

/** A wallet's id linked to its page, with its owner's name beside it (linked to the owner's page). */
export function walletCell(names: PartyNames, id: string | null | undefined) {
  if (!id) return html`—`;
  const owner = names.walletOwner(id);
  const wallet = idLink(`${CONSOLE_PREFIX}/wallets`, id);
  return owner
    ? html`${wallet} <span class="hint">${link(`${CONSOLE_PREFIX}/customers/${owner.id}`, owner.name)}</span>`
    : wallet;
}

/** A page of a list as the use cases return it: enough to link the next one. */
export interface ListedPage {
  data: readonly { id: string }[];
  hasMore: boolean;
}

/** "Older →" when there is another page: keyset pagination, as the API's `starting_after`. */
export function nextPageLink(path: string, query: Record<string, string | undefined>, page: ListedPage) {
  const lastId = page.hasMore ? page.data.at(-1)?.id : undefined;
  if (lastId === undefined) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query))
    if (v !== undefined && v !== '' && k !== 'after') params.set(k, v);
  params.set('after', lastId);
  return html`<p class="pager"><a href="${path}?${params.toString()}" rel="next">Older</a></p>`;
}

/** Shown in place of a form the member's roles do not allow. */
export function roleNote(identity: ConsoleIdentity, scope: Scope, what: string) {
  return html`<p class="role-note">Your roles (${identity.member.roles.join(', ')}) let you see this but not ${what}: that needs the <code>${scope}</code> scope.</p>`;
}

export function jsonBlock(value: unknown) {
  return html`<pre class="json">${JSON.stringify(value, null, 2)}</pre>`;
}
