/**
 * Row mappers built from a description of the record they return: each field says how it is read from the
 * row (by one of rows.ts's converters, from the column named after it), and the mapper reads them in the
 * order given. What most repositories otherwise spell out a field at a time.
 *
 * ```ts
 * const addressFromRow = rowMapper<DepositAddress>({
 *   id: String, walletId: String, network: stored, createdAt: toDate, date: column('balance_date', String),
 * });
 * ```
 */

/** A converter of one column's value, as the driver gives it, to a field's. */
export type ColumnRead<V> = (value: unknown) => V;

/**
 * A field read otherwise than from its own column: from another column or from several, which `columns`
 * names when the record's SELECT list is to be built from its fields (columnRows).
 */
export interface RowRead<V> {
  ofRow: (row: Record<string, unknown>) => V;
  columns?: readonly string[];
}

/**
 * How each field of `T` is read: a converter of the column named after the field in snake_case
 * (`walletId` from `wallet_id`), or a `column(…)`, `computedFrom(…)` or `computed(…)` read.
 */
export type RowFields<T> = { [K in keyof T]-?: ColumnRead<T[K]> | RowRead<T[K]> };

/** The field is `name`'s column converted by `read`: for a field not named after its column. */
export function column<V>(name: string, read: ColumnRead<V>): ReadOfColumns<V> {
  return { ofRow: (row) => read(row[name]), columns: [name] };
}

/** The field is computed from the whole row (from several columns, or a column's value with a default). */
export function computed<V>(ofRow: (row: Record<string, unknown>) => V): RowRead<V> {
  return { ofRow };
}

/** The field is computed from the row's `columns`, which a SELECT list built from the fields names in that order. */
export function computedFrom<V>(
  columns: readonly string[],
  ofRow: (row: Record<string, unknown>) => V,
): ReadOfColumns<V> {
  return { ofRow, columns };
}

/**
 * The field is `name`'s column cast to text in the SELECT list (`due_date::text AS due_date`), so a date
 * arrives as its ISO day and a big number as its digits, converted by `read`.
 */
export function castToText<V>(name: string, read: ColumnRead<V>): ReadOfColumns<V> {
  return { ofRow: (row) => read(row[name]), columns: [`${name}::text AS ${name}`] };
}

/**
 * A column's value as the driver gives it, typed as the field's (a status, a currency, an enum's text:
 * values the schema already constrains), with no conversion.
 */
export function stored<T>(value: unknown): T {
  return value as T;
}

/** A text column's value as a string, typed as the field's (a currency, a status): `String(value)`. */
export function text<T extends string>(value: unknown): T {
  return String(value) as T;
}

/** A field's column: its name in snake_case (`createdAt` → `created_at`, `fee2Minor` → `fee2_minor`). */
export function columnOf(field: string): string {
  return field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** The mapper of a row to a `T`, its fields read as `fields` describes, in that order. */
export function rowMapper<T>(fields: RowFields<T>): (row: Record<string, unknown>) => T {
  const reads = Object.entries<ColumnRead<unknown> | RowRead<unknown>>(fields).map(
    ([field, read]): [string, (row: Record<string, unknown>) => unknown] => {
      if (typeof read !== 'function') return [field, read.ofRow];
      const name = columnOf(field);
      return [field, (row) => read(row[name])];
    },
  );
  return (row) => {
    const record: Record<string, unknown> = {};
    for (const [field, read] of reads) record[field] = read(row);
    return record as T;
  };
}

/** A read that names the columns it reads (`column(…)`, `computedFrom(…)`). */
export type ReadOfColumns<V> = RowRead<V> & { columns: readonly string[] };

/**
 * Fields each read from the columns they name (their own, or those `column(…)` or `computedFrom(…)` name):
 * the columns they list are the record's.
 */
export type ColumnFields<T> = { [K in keyof T]-?: ColumnRead<T[K]> | ReadOfColumns<T[K]> };

/**
 * A record's columns, written once: the SELECT list of `fields`' columns in their order (`id, wallet_id, …`),
 * and the mapper of the row that list returns.
 */
export function columnRows<T>(fields: ColumnFields<T>): {
  columns: string;
  fromRow: (row: Record<string, unknown>) => T;
} {
  const columns = Object.entries<ColumnRead<unknown> | ReadOfColumns<unknown>>(fields).flatMap(
    ([field, read]) => (typeof read === 'function' ? [columnOf(field)] : read.columns),
  );
  return { columns: columns.join(', '), fromRow: rowMapper<T>(fields) };
}
