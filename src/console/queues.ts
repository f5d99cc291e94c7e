/**
 * The console's lists filtered by status, newest first, a page at a time: the open-work queues (review
 * cases, AML alerts, reconciliation exceptions: their open items by default and every item with
 * `?status=all`, each open row with its form) and the approvals (pending by default, or any status).
 */
import type { Deps } from '../app/deps.ts';
import type { IdPrefix } from '../domain/ids.ts';
import { html, type Renderable } from './html.ts';
import { type ListedPage, link, nextPageLink, table } from './layout.ts';
import { noticeOf } from './notices.ts';
import { CONSOLE_LIST_ROWS, type ConsoleRoutes, type Handler, idOfKind } from './routing.ts';

/** A list filtered by status as its page shows it: where it lives, its table, and its filter. */
export interface StatusList<Status> {
  title: string;
  section: string;
  /** The kind of id the list shows (its pages' cursor). */
  idPrefix: IdPrefix;
  headers: string[];
  /** The status the `status` parameter asks for; undefined is every item. */
  statusOf: (value: string | undefined) => Status | undefined;
  /** What stands above the table: the filter, showing the status asked for. */
  filter: (status: Status | undefined) => Renderable;
  /** What the table says when there is nothing to show. */
  empty: (status: Status | undefined) => string;
}

/** Where a queue lives and what it calls its items; its page's sentences are made from these words. */
export interface OpenQueue extends Pick<StatusList<'open'>, 'title' | 'section' | 'idPrefix' | 'headers'> {
  /** The items in full ('review cases') and in short ('cases'), and what a settled one is ('decided'). */
  items: string;
  itemsShort: string;
  settled: string;
}

/** A list's use case: a page of its items, those in `status` when there is one. */
type ListByStatus<T, Status> = (
  deps: Deps,
  organizationId: string,
  request: { limit: number; status: Status | undefined; startingAfter: string | undefined },
) => Promise<ListedPage & { data: T[] }>;

/** The rows of a page's items, which may read more (the names of the parties they concern). */
type Rows<T> = (items: T[], identity: Parameters<Handler>[2]) => Renderable[][] | Promise<Renderable[][]>;

/** The status a queue's `status` parameter asks for: `all` is every item, anything else the open ones. */
export function openStatusFilter(value: string | undefined): 'open' | undefined {
  return value === 'all' ? undefined : 'open';
}

/** GET handler of a list filtered by status: the page of items `list` returns, shown by `rows`. */
export function statusListPage<T, Status extends string>(
  routes: ConsoleRoutes,
  view: StatusList<Status>,
  list: ListByStatus<T, Status>,
  rows: Rows<T>,
): Handler {
  return async (request, reply, identity) => {
    const q = request.query;
    const status = view.statusOf(q.status);
    const page = await list(routes.deps, identity.organizationId, {
      limit: CONSOLE_LIST_ROWS,
      status,
      startingAfter: idOfKind(q.after, view.idPrefix),
    });
    return routes.render(reply, {
      title: view.title,
      identity,
      section: view.section,
      notice: noticeOf(q),
      body: html`${view.filter(status)}
${table(
  `${view.title}, newest first`,
  view.headers,
  await rows(page.data, identity),
  view.empty(status),
)}${nextPageLink(view.section, { status: q.status }, page)}`,
    });
  };
}

/** GET handler of a queue: its open items (or all), with a link to show the others. */
export function openQueuePage<T>(
  routes: ConsoleRoutes,
  queue: OpenQueue,
  list: ListByStatus<T, 'open'>,
  rows: Rows<T>,
): Handler {
  const { section } = queue;
  return statusListPage(
    routes,
    {
      ...queue,
      statusOf: openStatusFilter,
      filter: (status) =>
        html`<p>${status ? link(`${section}?status=all`, `Show ${queue.settled} ${queue.itemsShort} too`) : link(section, `Show open ${queue.itemsShort} only`)}</p>`,
      empty: (status) => (status ? `No open ${queue.items}.` : `No ${queue.items}.`),
    },
    list,
    rows,
  );
}
