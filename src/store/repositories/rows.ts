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

/** Appends the shared keyset and created-range conditions, returning SQL fragments and their params. */
export function keysetConditions(filter: KeysetFilter, params: unknown[], alias = ''): string[] {
  const conditions: string[] = [];
  if (filter.startingAfter !== undefined) {
    params.push(filter.startingAfter);
    conditions.push(`${alias}id < $${params.length}`);
  }
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
