/**
 * Storage pieces shared by the repositories: conversions of driver values, keyset and created-range
 * conditions, newest-first and oldest-first page reads, range counts and claims of due rows.
 */
import { formatId, ID_RANDOM_BYTES, ID_TIME_CHARS, type IdPrefix } from '../../domain/ids.ts';
import type { FeeDecision } from '../../domain/transferRecord.ts';
import type { AccountSums } from '../../modules/ledger/domain/ledger.ts';
import type { Queryable } from '../store.ts';
import { type ColumnFields, rowMapper } from './rowMappers.ts';

/** Conversions from driver values: int8 arrives as a string (pg) or a number/bigint (PGlite). */
export function toBigInt(value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' || typeof value === 'string') return BigInt(value);
  throw new TypeError(`expected an integer column, got ${typeof value}`);
}

export function toDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

export function toJsonObject<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

/** An int8 column whose values stay within a number's exact range (a count, a sequence), as a number. */
export const int8AsNumber = (v: unknown): number => Number(toBigInt(v));

/** A `date` column read as `YYYY-MM-DD` (the SELECTs cast it to text). */
export const toDay = (v: unknown): string => String(v).slice(0, 10);

/** A boolean column: true only when the driver gives `true` (so `null` reads as false). */
export const isTrue = (v: unknown): boolean => v === true;

/** Nullable columns: `null` (or a column the row lacks) stays `null`, anything else is converted. */
export const nullableText = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
export const nullableDate = (v: unknown): Date | null => (v === null || v === undefined ? null : toDate(v));
export const nullableBigInt = (v: unknown): bigint | null =>
  v === null || v === undefined ? null : toBigInt(v);
export const nullableNumber = (v: unknown): number | null =>
  v === null || v === undefined ? null : Number(v);
export const nullableBoolean = (v: unknown): boolean | null =>
  v === null || v === undefined ? null : v === true;
export const nullableJsonObject = <T>(v: unknown): T | null =>
  v === null || v === undefined ? null : toJsonObject<T>(v);
/** A `date` column read as `YYYY-MM-DD` (the SELECTs cast it to text). */
export const nullableDay = (v: unknown): string | null =>
  v === null || v === undefined ? null : String(v).slice(0, 10);

/**
 * One array per named field of `records`, in the order named: the parameters of an `unnest($n::type[], …)`
 * that writes or matches many rows in one statement. A field the driver needs converted is mapped by its caller.
 */
export function fieldArrays<T, K extends keyof T>(records: readonly T[], ...fields: readonly K[]): T[K][][] {
  return fields.map((field) => records.map((record) => record[field]));
}

/** The row lock a read takes when its caller will write the row in the same transaction. */
export const forUpdateClause = (forUpdate: boolean | undefined): string => (forUpdate ? ' FOR UPDATE' : '');

/** Keyset pagination over ids that sort by creation: newest first. */
export interface KeysetFilter {
  startingAfter?: string | undefined;
  createdGte?: Date | undefined;
  createdLte?: Date | undefined;
}

/**
 * How far an id's time may lie from its row's created_at. Both come from the same clock in the same use
 * case, but not from the same reading: a transfer's id is made when its request arrives and created_at when
 * the ledger writer's batch begins, an event's id after the locks its transaction waited for, and after the
 * clock steps back the id generator holds its last millisecond. An hour covers all of these with room; the
 * cost of the margin is at most an hour of rows read past a created bound.
 */
export const ID_TIME_SKEW_MS_MAX = 3_600_000;
/** The largest time 10 base32 characters hold. */
const ID_TIME_MS_MAX = 2 ** (5 * ID_TIME_CHARS) - 1;
const LOWEST_RANDOM = new Uint8Array(ID_RANDOM_BYTES);
const HIGHEST_RANDOM = new Uint8Array(ID_RANDOM_BYTES).fill(0xff);

/**
 * Id bounds that enclose every row created inside [createdGte, createdLte], widened by ID_TIME_SKEW_MS_MAX:
 * they let the (organization_id, id) indexes serve created ranges. They only narrow the scan; the created_at
 * conditions stay and decide. A bound that would include every possible id is left out.
 */
export function idBoundsOfCreated(
  prefix: IdPrefix,
  filter: Pick<KeysetFilter, 'createdGte' | 'createdLte'>,
): { idGte?: string; idLte?: string } {
  const bounds: { idGte?: string; idLte?: string } = {};
  if (filter.createdGte !== undefined) {
    const ms = filter.createdGte.getTime() - ID_TIME_SKEW_MS_MAX;
    if (ms > 0) bounds.idGte = formatId(prefix, Math.min(ms, ID_TIME_MS_MAX), LOWEST_RANDOM);
  }
  if (filter.createdLte !== undefined) {
    const ms = filter.createdLte.getTime() + ID_TIME_SKEW_MS_MAX;
    if (ms < ID_TIME_MS_MAX) bounds.idLte = formatId(prefix, Math.max(ms, 0), HIGHEST_RANDOM);
  }
  return bounds;
}

/**
 * The id conditions of a page: the cursor, and with the table's id prefix the created bounds as id bounds
 * (idBoundsOfCreated). `column` is the id column they apply to.
 */
export function idRangeConditions(
  filter: KeysetFilter,
  params: unknown[],
  column: string,
  idPrefix?: IdPrefix,
): string[] {
  const conditions: string[] = [];
  const add = (operator: string, value: string) => {
    params.push(value);
    conditions.push(`${column} ${operator} $${params.length}`);
  };
  if (filter.startingAfter !== undefined) add('<', filter.startingAfter);
  if (idPrefix !== undefined) {
    const { idGte, idLte } = idBoundsOfCreated(idPrefix, filter);
    if (idGte !== undefined) add('>=', idGte);
    if (idLte !== undefined) add('<=', idLte);
  }
  return conditions;
}

/**
 * Appends the shared keyset and created-range conditions, returning SQL fragments and their params. With
 * the table's id prefix, created bounds are also given as id bounds, so an index on (organization_id, id)
 * reads only the range instead of every newer or older row; without one (a table whose ids have more than
 * one prefix) the created_at conditions are left to filter alone.
 */
export function keysetConditions(
  filter: KeysetFilter,
  params: unknown[],
  alias = '',
  idPrefix?: IdPrefix,
): string[] {
  return [
    ...idRangeConditions(filter, params, `${alias}id`, idPrefix),
    ...createdAtConditions(filter, params, alias),
  ];
}

/** The created_at conditions of a created range (either end may be open), their values added to `params`. */
export function createdAtConditions(
  range: Pick<KeysetFilter, 'createdGte' | 'createdLte'>,
  params: unknown[],
  alias = '',
): string[] {
  const conditions: string[] = [];
  if (range.createdGte !== undefined) {
    params.push(range.createdGte);
    conditions.push(`${alias}created_at >= $${params.length}`);
  }
  if (range.createdLte !== undefined) {
    params.push(range.createdLte);
    conditions.push(`${alias}created_at <= $${params.length}`);
  }
  return conditions;
}

/** An account's four sums, as the ledger's accounts and wallets' balance reads select them. */
export const ACCOUNT_SUMS_FIELDS: ColumnFields<AccountSums> = {
  debitsPending: toBigInt,
  debitsPosted: toBigInt,
  creditsPending: toBigInt,
  creditsPosted: toBigInt,
};

export const accountSumsFromRow = rowMapper(ACCOUNT_SUMS_FIELDS);

/** The fee decided for a transfer (fee_minor, fee_schedule_version, fee_rule), or null on rows made before fees. */
export function feeDecisionFromRow(row: Record<string, unknown>): FeeDecision | null {
  return row.fee_schedule_version === null || row.fee_schedule_version === undefined
    ? null
    : {
        feeMinor: toBigInt(row.fee_minor),
        scheduleVersion: Number(row.fee_schedule_version),
        rule: nullableText(row.fee_rule),
      };
}

/** A page of an organization's rows newest first: what narrows it, before its SQL is written. */
export interface NewestFirstQuery {
  /** The table's id prefix, so created bounds narrow the ids too; none for a table of several prefixes. */
  prefix?: IdPrefix | undefined;
  organizationId: string;
  filter: KeysetFilter;
  /** `[column, value]`: `column = value` for each value that is set. */
  equal: readonly (readonly [string, unknown])[];
  /** Conditions other than equality, after the equalities; each adds its values to `params`. */
  moreConditions?: ((params: unknown[]) => string[]) | undefined;
  /** The table's alias with its dot (`e.`) for the organization and keyset columns, in a read that joins. */
  alias?: string | undefined;
}

/**
 * The WHERE conditions of a newest-first page and their params: the organization ($1), its keyset
 * conditions, the equality filters that are set, then any further conditions.
 */
export function newestFirstConditions(query: NewestFirstQuery): { conditions: string[]; params: unknown[] } {
  const params: unknown[] = [query.organizationId];
  const alias = query.alias ?? '';
  const conditions = [
    `${alias}organization_id = $1`,
    ...keysetConditions(query.filter, params, alias, query.prefix),
  ];
  for (const [column, value] of query.equal) {
    if (value === undefined) continue;
    params.push(value);
    conditions.push(`${column} = $${params.length}`);
  }
  if (query.moreConditions !== undefined) conditions.push(...query.moreConditions(params));
  return { conditions, params };
}

/**
 * A newest-first page of a table's rows for an organization (newestFirstConditions), served by an
 * (organization_id, …, id) index.
 */
export async function listNewestFirst(
  db: Queryable,
  query: NewestFirstQuery & { table: string; columns: string; rowsMax: number },
): Promise<Record<string, unknown>[]> {
  const { conditions, params } = newestFirstConditions(query);
  return selectNewestFirst(db, query, conditions, params);
}

/**
 * A newest-first page of a table's rows under fixed conditions (`where`, whose values `params` holds), then
 * the keyset conditions of `filter`: for a list narrowed otherwise than by the organization and equalities.
 */
export async function listNewestFirstWhere(
  db: Queryable,
  query: {
    table: string;
    columns: string;
    prefix: IdPrefix;
    where: readonly string[];
    params: readonly unknown[];
    filter: KeysetFilter;
    rowsMax: number;
  },
): Promise<Record<string, unknown>[]> {
  const params = [...query.params];
  const conditions = [...query.where, ...keysetConditions(query.filter, params, '', query.prefix)];
  return selectNewestFirst(db, query, conditions, params);
}

async function selectNewestFirst(
  db: Queryable,
  query: { table: string; columns: string; rowsMax: number },
  conditions: readonly string[],
  params: unknown[],
): Promise<Record<string, unknown>[]> {
  params.push(query.rowsMax);
  return db.query(
    `SELECT ${query.columns} FROM ${query.table} WHERE ${conditions.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
}

/** The created range an export covers; either end may be open. */
export interface CreatedRange {
  from?: Date | undefined;
  to?: Date | undefined;
}

/**
 * An organization's rows of a table oldest first after `afterId`, created within the range: the export's
 * page read, served by (organization_id, id) with the range's id bounds, so each page reads about a page.
 */
export async function readAscending(
  db: Queryable,
  query: {
    table: string;
    columns: string;
    prefix: IdPrefix;
    organizationId: string;
    afterId: string | undefined;
    range: CreatedRange;
    rowsMax: number;
  },
): Promise<Record<string, unknown>[]> {
  const params: unknown[] = [query.organizationId];
  const conditions = ['organization_id = $1'];
  const created = { createdGte: query.range.from, createdLte: query.range.to };
  const bounds = idBoundsOfCreated(query.prefix, created);
  const lower = query.afterId !== undefined && (bounds.idGte === undefined || query.afterId >= bounds.idGte);
  if (lower) {
    params.push(query.afterId);
    conditions.push(`id > $${params.length}`);
  } else if (bounds.idGte !== undefined) {
    params.push(bounds.idGte);
    conditions.push(`id >= $${params.length}`);
  }
  if (bounds.idLte !== undefined) {
    params.push(bounds.idLte);
    conditions.push(`id <= $${params.length}`);
  }
  conditions.push(...createdAtConditions(created, params));
  params.push(query.rowsMax);
  return db.query(
    `SELECT ${query.columns} FROM ${query.table} WHERE ${conditions.join(' AND ')} ORDER BY id LIMIT $${params.length}`,
    params,
  );
}

/** How many of an organization's rows a range holds, for an export's progress (an estimate while it runs). */
export async function countInRange(
  db: Queryable,
  query: { table: string; prefix: IdPrefix; organizationId: string; range: CreatedRange },
): Promise<number> {
  const params: unknown[] = [query.organizationId];
  const conditions = [
    'organization_id = $1',
    ...createdAtConditions({ createdGte: query.range.from, createdLte: query.range.to }, params),
  ];
  const [row] = await db.query(
    `SELECT count(*)::int AS n FROM ${query.table} WHERE ${conditions.join(' AND ')}`,
    params,
  );
  return Number(row?.n ?? 0);
}

/**
 * A worker queue's due rows (`next_check_at` at or before `now`, oldest first), claimed: locked, and skipped
 * by any other worker until this transaction ends. `excludedIds` are those this pass has already seen.
 */
export async function claimDueRows(
  db: Queryable,
  query: { table: string; columns: string; now: Date; rowsMax: number; excludedIds: readonly string[] },
): Promise<Record<string, unknown>[]> {
  return db.query(
    `SELECT ${query.columns} FROM ${query.table}
      WHERE next_check_at IS NOT NULL AND next_check_at <= $1 AND NOT (id = ANY($3::text[]))
      ORDER BY next_check_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [query.now, query.rowsMax, query.excludedIds],
  );
}
