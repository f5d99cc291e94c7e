/**
 * The open-work queues (review cases, AML alerts, reconciliation exceptions): each lists its open items by
 * default and every item with `?status=all`, newest first, a page at a time, each open row with its form.
 */
import type { Deps } from '../app/deps.ts';
import type { IdPrefix } from '../domain/ids.ts';
import { html, type Renderable } from './html.ts';
import { type ListedPage, link, nextPageLink, table } from './layout.ts';
import { noticeOf } from './notices.ts';
import { CONSOLE_LIST_ROWS, type ConsoleRoutes, type Handler, idOfKind } from './routing.ts';

/** Where a queue lives and what it calls its items; its page's sentences are made from these words. */
export interface OpenQueue {
  title: string;
  section: string;
  /** The kind of id the queue lists (its pages' cursor). */
  idPrefix: IdPrefix;
  /** The items in full ('review cases') and in short ('cases'), and what a settled one is ('decided'). */
  items: string;
  itemsShort: string;
  settled: string;
  headers: string[];
}

/** A queue's list use case: a page of its items, the open ones when `status` is 'open'. */
type ListQueue<T> = (
  deps: Deps,
  organizationId: string,
  request: { limit: number; status: 'open' | undefined; startingAfter: string | undefined },
) => Promise<ListedPage & { data: T[] }>;

/** The status a queue's `status` parameter asks for: `all` is every item, anything else the open ones. */
export function openStatusFilter(value: string | undefined): 'open' | undefined {
  return value === 'all' ? undefined : 'open';
}

/** GET handler of a queue: the page of items `list` returns, shown by `rows` (which may read more). */
export function openQueuePage<T>(
  routes: ConsoleRoutes,
  queue: OpenQueue,
  list: ListQueue<T>,
  rows: (items: T[], identity: Parameters<Handler>[2]) => Renderable[][] | Promise<Renderable[][]>,
): Handler {
  return async (request, reply, identity) => {
    const q = request.query;
    const status = openStatusFilter(q.status);
    const page = await list(routes.deps, identity.organizationId, {
      limit: CONSOLE_LIST_ROWS,
      status,
      startingAfter: idOfKind(q.after, queue.idPrefix),
    });
    const { section } = queue;
    return routes.render(reply, {
      title: queue.title,
      identity,
      section,
      notice: noticeOf(q),
      body: html`<p>${status ? link(`${section}?status=all`, `Show ${queue.settled} ${queue.itemsShort} too`) : link(section, `Show open ${queue.itemsShort} only`)}</p>
${table(
  `${queue.title}, newest first`,
  queue.headers,
  await rows(page.data, identity),
  status ? `No open ${queue.items}.` : `No ${queue.items}.`,
)}${nextPageLink(section, { status: q.status }, page)}`,
    });
  };
}
