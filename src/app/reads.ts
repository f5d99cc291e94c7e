/**
 * The reads most capabilities make of an organization's records, built from their repository's reads: one
 * by id (404 when the organization has no such record), the same with its row locked, and a newest-first page.
 */
import { resourceMissing } from '../domain/errors.ts';
import { type Page, type PageRequest, toPage } from '../domain/pagination.ts';
import type { Queryable } from '../store/store.ts';
import type { Deps } from './deps.ts';

/** A repository's read of one of an organization's records by id. */
type FindById<T> = (db: Queryable, organizationId: string, id: string) => Promise<T | undefined>;

/** A repository's read of one record by id that can lock its row for the reading transaction. */
type FindLockable<T> = (
  db: Queryable,
  organizationId: string,
  id: string,
  options: { forUpdate?: boolean },
) => Promise<T | undefined>;

/** A repository's read of up to `rowsMax` of an organization's records that pass a filter, newest first. */
type ListRows<F, T> = (db: Queryable, organizationId: string, filter: F, rowsMax: number) => Promise<T[]>;

/**
 * The read over `find` on `db` (a transaction, or the pool): the record with this id, or 404
 * `resource_missing` naming it `what`, and `param` when given (the input that named the id).
 */
export function requireById<T>(find: FindById<T>, what: string) {
  return async (db: Queryable, organizationId: string, id: string, param?: string): Promise<T> => {
    const record = await find(db, organizationId, id);
    if (!record) throw resourceMissing(what, id, param);
    return record;
  };
}

/** The get use case over `find`: the record with this id, or 404 `resource_missing` naming it `what`. */
export function getById<T>(find: FindById<T>, what: string) {
  const read = requireById(find, what);
  return (deps: Deps, organizationId: string, id: string): Promise<T> => read(deps.store, organizationId, id);
}

/** The locked read over `find`: the record with this id, its row locked until `tx` ends, or 404 naming it `what`. */
export function lockById<T>(find: FindLockable<T>, what: string) {
  return async (tx: Queryable, organizationId: string, id: string): Promise<T> => {
    const record = await find(tx, organizationId, id, { forUpdate: true });
    if (!record) throw resourceMissing(what, id);
    return record;
  };
}

/** The list use case over `list`: a page of `request.limit` records (one more is read to tell if more follow). */
export function listPage<F, T>(list: ListRows<F, T>) {
  return async (deps: Deps, organizationId: string, request: PageRequest & F): Promise<Page<T>> =>
    toPage(await list(deps.store, organizationId, request, request.limit + 1), request.limit);
}
