/**
 * The Fireblocks simulator's GET /v1/transactions, paged as the SDK's getTransactions publishes: filters
 * `status`, `after`/`before` (createdAt, ms), `sourceType`, `destType`, `destId`, `assets`; `orderBy`
 * (`createdAt`, `lastUpdated`), `sort` (`ASC`, `DESC`), `limit` (1–500, 200 unless given); the cursors of a
 * page's `next-page` and `prev-page` response headers, sent back as `next` or `prev`. A cursor carries the
 * query it came from (filters and order) and the item it continues after; filters beside it are ignored.
 */
import { type Answer, type FireblocksState, type FireblocksTransaction, fireblocksError } from './state.ts';

/** GET /v1/transactions's default and largest page (Fireblocks' reference: up to 500). */
const TRANSACTION_PAGE_DEFAULT = 200;
const TRANSACTION_PAGE_MAX = 500;
/** The query parameters that are not part of what a cursor keeps. */
const PAGING_PARAMETERS = ['next', 'prev', 'limit'];

const invalid = (message: string): Answer => fireblocksError(400, 1400, message);

interface Order {
  field: 'createdAt' | 'lastUpdated';
  ascending: boolean;
}

interface Cursor {
  /** The query the first page was asked with, paging parameters left out. */
  query: string;
  direction: 'next' | 'prev';
  /** The item the page continues from: its order field's value and id. */
  key: number;
  id: string;
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(text: string): Cursor | undefined {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<Cursor>;
    if (
      typeof value.query !== 'string' ||
      (value.direction !== 'next' && value.direction !== 'prev') ||
      typeof value.key !== 'number' ||
      typeof value.id !== 'string'
    )
      return undefined;
    return value as Cursor;
  } catch {
    return undefined;
  }
}

function orderOf(query: URLSearchParams): Order | undefined {
  const field = query.get('orderBy') ?? 'createdAt';
  const sort = query.get('sort') ?? 'DESC';
  if ((field !== 'createdAt' && field !== 'lastUpdated') || (sort !== 'ASC' && sort !== 'DESC'))
    return undefined;
  return { field, ascending: sort === 'ASC' };
}

function matcher(query: URLSearchParams): (transaction: FireblocksTransaction) => boolean {
  const after = Number(query.get('after') ?? 0);
  const before = Number(query.get('before') ?? Number.MAX_SAFE_INTEGER);
  const assets = query.get('assets')?.split(',');
  return (transaction) =>
    (query.get('status') ?? transaction.status) === transaction.status &&
    transaction.createdAt > after &&
    transaction.createdAt < before &&
    (query.get('sourceType') ?? transaction.source.type) === transaction.source.type &&
    (query.get('destType') ?? transaction.destination.type) === transaction.destination.type &&
    (query.get('destId') ?? transaction.destination.id) === transaction.destination.id &&
    (assets === undefined || assets.includes(transaction.assetId));
}

/** GET /v1/transactions: one page of the matching transactions in the asked order, with its cursors. */
export function listTransactions(state: FireblocksState, request: URLSearchParams): Answer {
  const limit = Number(request.get('limit') ?? TRANSACTION_PAGE_DEFAULT);
  if (!Number.isInteger(limit) || limit < 1 || limit > TRANSACTION_PAGE_MAX)
    return invalid('limit has an invalid value');
  if (request.has('next') && request.has('prev')) return invalid('next and prev cannot both be given');
  const direction = request.has('prev') ? 'prev' : 'next';
  const cursorText = request.get(direction);
  const cursor = cursorText === null ? undefined : decodeCursor(cursorText);
  if (cursorText !== null && cursor?.direction !== direction)
    return invalid(`${direction} has an invalid value`);
  const query = cursor ? new URLSearchParams(cursor.query) : new URLSearchParams(request);
  for (const name of PAGING_PARAMETERS) query.delete(name);
  const order = orderOf(query);
  if (!order) return invalid('orderBy or sort has an invalid value');
  const position = (t: { key: number; id: string }, u: { key: number; id: string }) => {
    const compared = t.key - u.key || (t.id < u.id ? -1 : t.id > u.id ? 1 : 0);
    return order.ascending ? compared : -compared;
  };
  const keyed = (t: FireblocksTransaction) => ({ key: t[order.field], id: t.id });
  const sorted = [...state.transactions.values()]
    .map((stored) => stored.transaction)
    .filter(matcher(query))
    .sort((a, b) => position(keyed(a), keyed(b)));
  let start = 0;
  if (cursor?.direction === 'next') {
    start = sorted.findIndex((t) => position(keyed(t), cursor) > 0);
    if (start < 0) start = sorted.length;
  } else if (cursor?.direction === 'prev') {
    const end = sorted.findIndex((t) => position(keyed(t), cursor) >= 0);
    start = Math.max((end < 0 ? sorted.length : end) - limit, 0);
  }
  const page = sorted.slice(start, start + limit);
  const headers: Record<string, string> = {};
  const first = page[0];
  const last = page.at(-1);
  const kept = query.toString();
  if (last && start + page.length < sorted.length)
    headers['next-page'] = encodeCursor({ query: kept, direction: 'next', ...keyed(last) });
  if (first && start > 0)
    headers['prev-page'] = encodeCursor({ query: kept, direction: 'prev', ...keyed(first) });
  return { status: 200, body: page, headers };
}
