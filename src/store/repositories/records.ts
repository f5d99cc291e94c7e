/**
 * Reads shared by the tables of one record type per row, built from the table's description: an
 * organization's record by id or a record by its unique keys, one column of a row by its keys, its records
 * newest first a page at a time, and a worker queue's due records.
 */
import type { IdPrefix } from '../../domain/ids.ts';
import type { Queryable } from '../store.ts';
import { type ColumnFields, type ColumnRead, column, columnOf, columnRows } from './rowMappers.ts';
import {
  claimDueRows,
  forUpdateClause,
  type KeysetFilter,
  listNewestFirst,
  listNewestFirstWhere,
} from './rows.ts';

/** A table as its repository reads it: its name, the columns it selects, its ids' prefix and its row mapper. */
export interface RecordTable<T> {
  name: string;
  columns: string;
  prefix: IdPrefix;
  fromRow: (row: Record<string, unknown>) => T;
}

/**
 * A table whose columns are its record's fields' (columnRows), described once by its name and fields: what
 * the finders read (a table found by its key columns rather than listed by id needs no prefix).
 */
export function rowTable<T>(
  name: string,
  fields: ColumnFields<T>,
): Pick<RecordTable<T>, 'name' | 'columns' | 'fromRow'> {
  return { name, ...columnRows(fields) };
}

/** A table of records found and listed by their ids (rowTable, with its ids' prefix). */
export function recordTable<T>(name: string, prefix: IdPrefix, fields: ColumnFields<T>): RecordTable<T> {
  return { ...rowTable(name, fields), prefix };
}

/**
 * A table listed newest first: with its ids' prefix, so a created range narrows the ids too, or without
 * one for a table whose ids have several prefixes (its created range is left to created_at alone).
 */
export type ListedTable<T> = Pick<RecordTable<T>, 'name' | 'columns' | 'fromRow'> & { prefix?: IdPrefix };

/** Equality filters of a list, as `[column, value]`; a value left undefined filters nothing. */
export type EqualityFilters = readonly (readonly [string, unknown])[];

/**
 * Finds an organization's record by id, or by another column unique in the organization (`keyColumn`, a
 * number's when `Key` says so); `forUpdate` locks its row until the transaction ends.
 */
export function organizationRecordFinder<T, Key extends string | number = string>(
  table: Pick<RecordTable<T>, 'name' | 'columns' | 'fromRow'>,
  keyColumn = 'id',
) {
  return async (
    db: Queryable,
    organizationId: string,
    key: Key,
    options: { forUpdate?: boolean } = {},
  ): Promise<T | undefined> => {
    const [row] = await db.query(
      `SELECT ${table.columns} FROM ${table.name} WHERE organization_id = $1 AND ${keyColumn} = $2${forUpdateClause(options.forUpdate)}`,
      [organizationId, key],
    );
    return row && table.fromRow(row);
  };
}

/** Lists all of an organization's records, in `orderBy` order: for a table that holds few per organization. */
export function allOrganizationRecordsLister<T>(
  table: Pick<RecordTable<T>, 'name' | 'columns' | 'fromRow'>,
  orderBy: string,
) {
  return async (db: Queryable, organizationId: string): Promise<T[]> => {
    const rows = await db.query(
      `SELECT ${table.columns} FROM ${table.name} WHERE organization_id = $1 ORDER BY ${orderBy}`,
      [organizationId],
    );
    return rows.map(table.fromRow);
  };
}

/** Each key column equal to its key, the keys being the statement's first parameters in the columns' order. */
function keyConditions(keyColumns: readonly string[]): string[] {
  return keyColumns.map((column, i) => `${column} = $${i + 1}`);
}

/**
 * Finds the one record whose `keyColumns` equal the keys given, in that order: a key unique in the table (an
 * id, a callback token, an address on a network, the organization of a one-per-organization row). Options
 * after the keys may ask for its row locked (`forUpdate`) until the transaction ends.
 */
export function recordFinderBy<T, const KeyColumns extends readonly string[]>(
  table: Pick<RecordTable<T>, 'name' | 'columns' | 'fromRow'>,
  ...keyColumns: KeyColumns
) {
  type Keys = { [I in keyof KeyColumns]: string };
  const where = keyConditions(keyColumns).join(' AND ');
  return async (
    db: Queryable,
    ...args: [...keys: Keys] | [...keys: Keys, options: { forUpdate?: boolean }]
  ): Promise<T | undefined> => {
    const keys = args.slice(0, keyColumns.length);
    const options = args[keyColumns.length] as { forUpdate?: boolean } | undefined;
    const [row] = await db.query(
      `SELECT ${table.columns} FROM ${table.name} WHERE ${where}${forUpdateClause(options?.forUpdate)}`,
      keys,
    );
    return row && table.fromRow(row);
  };
}

/**
 * Reads one column of the one row whose `keyColumns` equal the keys given (as recordFinderBy finds it),
 * converted by `read`: undefined when there is no such row or its value is null.
 */
export function columnFinderBy<V, const KeyColumns extends readonly string[]>(
  tableName: string,
  valueColumn: string,
  read: ColumnRead<V>,
  ...keyColumns: KeyColumns
) {
  const find = recordFinderBy(
    rowTable<{ value: V | null }>(tableName, {
      value: column(valueColumn, (v) => (v === null || v === undefined ? null : read(v))),
    }),
    ...keyColumns,
  );
  return async (db: Queryable, ...keys: { [I in keyof KeyColumns]: string }): Promise<V | undefined> =>
    (await find(db, ...keys))?.value ?? undefined;
}

/**
 * Lists an organization's records newest first, a page at a time (listNewestFirst), narrowed by the
 * equality filters `equal` reads from the list's filter, then by any conditions `more` adds (each value
 * pushed to `params`, its condition naming it by its number).
 */
export function newestFirstLister<T, F extends KeysetFilter = KeysetFilter>(
  table: ListedTable<T>,
  equal: (filter: F) => EqualityFilters = () => [],
  more?: (filter: F, params: unknown[]) => string[],
) {
  return async (db: Queryable, organizationId: string, filter: F, rowsMax: number): Promise<T[]> => {
    const rows = await listNewestFirst(db, {
      table: table.name,
      columns: table.columns,
      prefix: table.prefix,
      organizationId,
      filter,
      equal: equal(filter),
      moreConditions: more && ((params) => more(filter, params)),
      rowsMax,
    });
    return rows.map(table.fromRow);
  };
}

/**
 * Lists records newest first, a page at a time, whose `keyColumns` equal the keys given (in that order,
 * $1, $2, …) and which meet the fixed `conditions`, then the page's keyset (listNewestFirstWhere): a list
 * narrowed by more than the organization, or to rows not deleted.
 */
export function newestFirstListerBy<T, const KeyColumns extends readonly string[]>(
  table: RecordTable<T>,
  keyColumns: KeyColumns,
  conditions: readonly string[] = [],
) {
  const where = [...keyConditions(keyColumns), ...conditions];
  return async (
    db: Queryable,
    ...args: [...keys: { [I in keyof KeyColumns]: string }, filter: KeysetFilter, rowsMax: number]
  ): Promise<T[]> => {
    const rows = await listNewestFirstWhere(db, {
      table: table.name,
      columns: table.columns,
      prefix: table.prefix,
      where,
      params: args.slice(0, keyColumns.length),
      filter: args[keyColumns.length] as KeysetFilter,
      rowsMax: args[keyColumns.length + 1] as number,
    });
    return rows.map(table.fromRow);
  };
}

/** Claims a worker queue's due records (claimDueRows): skipped by any other worker until this transaction ends. */
export function dueRecordsClaimer<T>(table: Pick<RecordTable<T>, 'name' | 'columns' | 'fromRow'>) {
  return async (db: Queryable, now: Date, rowsMax: number, excludedIds: readonly string[]): Promise<T[]> => {
    const rows = await claimDueRows(db, {
      table: table.name,
      columns: table.columns,
      now,
      rowsMax,
      excludedIds,
    });
    return rows.map(table.fromRow);
  };
}

/**
 * Reads a page of the rows whose sealed data another master key than `keyId` wraps (`keyColumn` names the
 * row's key), in id order and locked for the rewrap that follows: what re-sealing after a key change walks.
 */
export function notWrappedByReader<T>(
  table: Pick<RecordTable<T>, 'name' | 'columns' | 'fromRow'>,
  keyColumn: string,
) {
  return async (db: Queryable, keyId: string, rowsMax: number): Promise<T[]> => {
    const rows = await db.query(
      `SELECT ${table.columns} FROM ${table.name} WHERE ${keyColumn} <> $1 ORDER BY id LIMIT $2 FOR UPDATE`,
      [keyId, rowsMax],
    );
    return rows.map(table.fromRow);
  };
}

/**
 * Equality filters read from a list filter's fields, each on the column named after it in snake_case
 * (`transferId` on `transfer_id`), in the order given.
 */
export function byFields<F extends KeysetFilter>(...fields: readonly (keyof F & string)[]) {
  const columns = fields.map((field) => [field, columnOf(field)] as const);
  return (filter: F): EqualityFilters => columns.map(([field, column]) => [column, filter[field]]);
}

/** A list narrowed to one status of its records. */
export type StatusFilter<S> = KeysetFilter & { status?: S | undefined };
export const byStatus = <S>(filter: StatusFilter<S>): EqualityFilters => [['status', filter.status]];

/** A list of wallets' records narrowed to one status, one wallet, or both. */
export type StatusAndWalletFilter<S> = StatusFilter<S> & { walletId?: string | undefined };
export const byStatusAndWallet = <S>(filter: StatusAndWalletFilter<S>): EqualityFilters => [
  ['status', filter.status],
  ['wallet_id', filter.walletId],
];
