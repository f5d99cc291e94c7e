/**
 * Test clocks, pure: in the sandbox an organization's clock runs `offsetMs` ahead of the real one, so that
 * product work that happens by the calendar (interest accrual, due dates, arrears) can be tested in seconds,
 * in the manner of Stripe's test clocks. The offset only grows. Production always uses the real clock.
 * Days are UTC calendar days, `YYYY-MM-DD`.
 */

import { DAY_MS } from '../../domain/days.ts';
import { AppError, validationError } from '../../domain/errors.ts';

/** How far one advance may move an organization's clock at most, in days (a year and a day). */
export const TEST_CLOCK_ADVANCE_DAYS_MAX = 366;
/** How far ahead of the real clock an organization's clock may run in all, in days (ten years). */
export const TEST_CLOCK_OFFSET_DAYS_MAX = 3_660;

/** An organization's clock as stored: absent until it is first advanced (offset 0). */
export interface TestClock {
  organizationId: string;
  offsetMs: number;
  /** How many times it was advanced. */
  advances: number;
  advancedAt: Date | null;
}

/** What an advance asks for: an instant to move to, or a number of days to move by. */
export type ClockAdvance = { kind: 'to'; instant: Date } | { kind: 'by_days'; days: number };

/** The organization's now on a clock `offsetMs` ahead of the real `now`. */
export function clockNow(realNow: Date, offsetMs: number): Date {
  return offsetMs === 0 ? realNow : new Date(realNow.getTime() + offsetMs);
}

/** The UTC calendar day an instant falls on. */
export function utcDay(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}

/** The day after `day`. */
export function nextDay(day: string): string {
  return utcDay(new Date(Date.parse(`${day}T00:00:00.000Z`) + DAY_MS));
}

/** Every day after `after` up to and including `through`, in order (none when `through` is not later). */
export function daysAfter(after: string, through: string): string[] {
  const days: string[] = [];
  for (let day = nextDay(after); day <= through; day = nextDay(day)) days.push(day);
  return days;
}

/** Reads an advance from a request body: exactly one of `advance_to` (an instant) or `advance_by_days`. */
export function parseClockAdvance(body: { advance_to?: unknown; advance_by_days?: unknown }): ClockAdvance {
  const hasTo = body.advance_to !== undefined;
  const hasDays = body.advance_by_days !== undefined;
  if (hasTo === hasDays) {
    throw validationError(
      hasTo ? 'advance_by_days' : 'advance_to',
      'Give exactly one of `advance_to` (an instant) or `advance_by_days`.',
      hasTo ? 'conflict' : 'required',
    );
  }
  if (hasDays) {
    const days = body.advance_by_days;
    if (
      typeof days !== 'number' ||
      !Number.isInteger(days) ||
      days < 1 ||
      days > TEST_CLOCK_ADVANCE_DAYS_MAX
    ) {
      throw validationError(
        'advance_by_days',
        `\`advance_by_days\` is a whole number of days from 1 to ${TEST_CLOCK_ADVANCE_DAYS_MAX}.`,
      );
    }
    return { kind: 'by_days', days };
  }
  const text = body.advance_to;
  const instant = typeof text === 'string' ? new Date(text) : new Date(Number.NaN);
  if (Number.isNaN(instant.getTime())) {
    throw validationError('advance_to', '`advance_to` is an RFC 3339 instant, such as 2027-01-01T00:00:00Z.');
  }
  return { kind: 'to', instant };
}

/**
 * The offset an advance leads to from a clock `currentOffsetMs` ahead of the real `realNow`: forward only,
 * at most TEST_CLOCK_ADVANCE_DAYS_MAX days per advance and TEST_CLOCK_OFFSET_DAYS_MAX days ahead in all.
 */
export function advancedOffset(realNow: Date, currentOffsetMs: number, advance: ClockAdvance): number {
  const current = clockNow(realNow, currentOffsetMs).getTime();
  const target = advance.kind === 'to' ? advance.instant.getTime() : current + advance.days * DAY_MS;
  const param = advance.kind === 'to' ? 'advance_to' : 'advance_by_days';
  if (target <= current) {
    throw new AppError({
      status: 422,
      code: 'test_clock_backwards',
      title: 'A test clock only moves forward',
      detail: `The organization's clock already reads ${new Date(current).toISOString()}; advance it to a later instant.`,
      param,
    });
  }
  if (target - current > TEST_CLOCK_ADVANCE_DAYS_MAX * DAY_MS) {
    throw new AppError({
      status: 422,
      code: 'test_clock_advance_too_far',
      title: 'Advance too far',
      detail: `One advance moves the clock at most ${TEST_CLOCK_ADVANCE_DAYS_MAX} days; advance in steps.`,
      param,
    });
  }
  const offset = target - realNow.getTime();
  if (offset > TEST_CLOCK_OFFSET_DAYS_MAX * DAY_MS) {
    throw new AppError({
      status: 422,
      code: 'test_clock_advance_too_far',
      title: 'Advance too far',
      detail: `A test clock runs at most ${TEST_CLOCK_OFFSET_DAYS_MAX} days ahead of the real clock.`,
      param,
    });
  }
  return offset;
}
