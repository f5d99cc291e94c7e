/**
 * UTC days as the service counts them: a day is `YYYY-MM-DD` in UTC, from its midnight to the next. The
 * safeguarding check, statements, reconciliation, retention and products' day work all count in these.
 */
import { validationError } from './errors.ts';

/** Milliseconds in a UTC day. */
export const DAY_MS = 86_400_000;

/** A date as the API writes it. */
const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** The UTC day a time falls on. */
export function dayOf(time: Date): string {
  return time.toISOString().slice(0, 10);
}

export function addDays(day: string, days: number): string {
  return dayOf(new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS));
}

/** The first instant after the day: the ledger is read as of this time (entries created before it). */
export function endOfDay(day: string): Date {
  return new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS);
}

/** A calendar day as given on the wire, checked: `YYYY-MM-DD` naming a real date. */
export function parseDay(value: string, param: string): string {
  if (!DATE_PATTERN.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw validationError(param, `${param} must be a date, YYYY-MM-DD`, 'invalid_format');
  }
  // Date.parse rolls 2026-02-30 over to March; a date that does not round-trip is not a date.
  if (dayOf(new Date(`${value}T00:00:00Z`)) !== value) {
    throw validationError(param, `${param} must be a date, YYYY-MM-DD`, 'invalid_format');
  }
  return value;
}

/** RFC 3339 with its offset, to the millisecond at most (every entry is stamped to the millisecond). */
const INSTANT_PATTERN = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,3})?([Zz]|[+-]\d{2}:\d{2})$/;

/** Which end of a day a date names: `from` its first instant, `to` and `as_of` the first instant after it. */
export type DayEnd = 'start' | 'end';

/**
 * A bound as given on the wire: a date (`YYYY-MM-DD`, a UTC day, its start or its end as `end` says) or an
 * instant (RFC 3339 with its offset, to the millisecond).
 */
export function parseInstant(value: string, param: string, dayEnd: DayEnd): Date {
  if (DATE_PATTERN.test(value)) {
    const day = parseDay(value, param);
    return dayEnd === 'start' ? new Date(`${day}T00:00:00Z`) : endOfDay(day);
  }
  const time = INSTANT_PATTERN.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(time)) {
    throw validationError(
      param,
      `${param} must be a date (YYYY-MM-DD) or a time (RFC 3339 with its offset, to the millisecond)`,
      'invalid_format',
    );
  }
  // Date.parse rolls 2026-02-30T… over to March; the date part must name a real day.
  parseDay(value.slice(0, 10), param);
  return new Date(time);
}
