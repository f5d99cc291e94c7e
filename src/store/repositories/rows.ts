import { formatId, ID_RANDOM_BYTES, ID_TIME_CHARS, type IdPrefix } from '../../domain/ids.ts';
import type { AccountSums } from '../../domain/ledger.ts';

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
  const conditions = idRangeConditions(filter, params, `${alias}id`, idPrefix);
  if (filter.createdGte !== undefined) {
    params.push(filter.createdGte);
    conditions.push(`${alias}created_at >= $${params.length}`);
  }
  if (filter.createdLte !== undefined) {
    params.push(filter.createdLte);
    conditions.push(`${alias}created_at <= $${params.length}`);
  }
  return conditions;
}

export function accountSumsFromRow(row: Record<string, unknown>): AccountSums {
  return {
    debitsPending: toBigInt(row.debits_pending),
    debitsPosted: toBigInt(row.debits_posted),
    creditsPending: toBigInt(row.credits_pending),
    creditsPosted: toBigInt(row.credits_posted),
  };
}
