/**
 * Reading the fields of Daraja's callback bodies (callbacks.ts, accountBalance.ts, c2b.ts): required objects
 * and strings, ResultCode in either type, amounts in shillings, and the {Key|Name, Value} lists results carry. Pure; a body that lacks
 * what is asked throws MalformedCallbackError.
 */

import { MalformedCallbackError } from '../../../../rails/partner.ts';
import { KES_MINOR_PER_SHILLING } from './protocol.ts';

export function objectField(
  parent: Record<string, unknown>,
  key: string,
  what: string,
): Record<string, unknown> {
  const value = parent[key];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new MalformedCallbackError(`${what} has no ${key} object`);
  }
  return value as Record<string, unknown>;
}

export function requiredString(parent: Record<string, unknown>, key: string, what: string): string {
  const value = parent[key];
  if (typeof value !== 'string' || value === '') throw new MalformedCallbackError(`${what} has no ${key}`);
  return value;
}

/** ResultCode is a number in results (0, 2040) but may be a string ("0", "SFC_IC0003"). */
export function resultCodeOf(parent: Record<string, unknown>, what: string): string {
  const value = parent.ResultCode;
  if (typeof value === 'number' && Number.isInteger(value)) return String(value);
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  throw new MalformedCallbackError(`${what} has no ResultCode`);
}

/** Daraja's lists of {Key|Name, Value} (a lone item may come as an object): a map of the values. */
export function keyValues(
  container: unknown,
  listKey: string,
  nameKey: 'Key' | 'Name',
  what: string,
): Map<string, unknown> {
  const list = (container as Record<string, unknown> | undefined)?.[listKey];
  const items = Array.isArray(list) ? list : typeof list === 'object' && list !== null ? [list] : undefined;
  if (!items) throw new MalformedCallbackError(`${what} has no ${listKey} list`);
  const values = new Map<string, unknown>();
  for (const item of items) {
    const name = (item as Record<string, unknown> | null)?.[nameKey];
    if (typeof name !== 'string')
      throw new MalformedCallbackError(`${what} has a ${listKey} without a ${nameKey}`);
    values.set(name, (item as Record<string, unknown>).Value);
  }
  return values;
}

/** Daraja amounts are shillings (10, 10.00, "10.00"); in minor units, exactly, or malformed. */
export function amountMinorOf(value: unknown, what: string): bigint {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!match?.[1]) throw new MalformedCallbackError(`${what} is not an amount`);
  return BigInt(match[1]) * KES_MINOR_PER_SHILLING + BigInt((match[2] ?? '').padEnd(2, '0'));
}
