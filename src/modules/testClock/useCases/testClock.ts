/**
 * Test clocks: an organization's now. In the sandbox an organization's clock can be advanced
 * (`POST /v1/sandbox/clock`), and everything its products do by the calendar (accrual, due dates, arrears)
 * reads the organization's now through here; production always reads the real clock. Advancing runs the
 * organization's day work for every day it crossed before it answers, so the caller sees the month it
 * skipped already accrued and collected.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvent } from '../../../app/events.ts';
import type { Queryable } from '../../../store/store.ts';
import { advancedOffset, clockNow, parseClockAdvance, type TestClock, utcDay } from '../domain.ts';
import { findTestClock, lockTestClock, saveTestClock, testClockOffsets } from '../repository.ts';

/** The organization's now: the real clock, moved by its test clock in the sandbox. */
export async function organizationNow(db: Queryable, deps: Deps, organizationId: string): Promise<Date> {
  if (deps.environment !== 'sandbox') return deps.now();
  return clockNow(deps.now(), (await findTestClock(db, organizationId)).offsetMs);
}

/** Each organization's now (one read for all of them), for workers that go through many organizations. */
export async function organizationsNow(
  db: Queryable,
  deps: Deps,
  organizationIds: readonly string[],
): Promise<Map<string, Date>> {
  const realNow = deps.now();
  const offsets = deps.environment === 'sandbox' ? await testClockOffsets(db, organizationIds) : new Map();
  return new Map(organizationIds.map((id) => [id, clockNow(realNow, offsets.get(id) ?? 0)]));
}

/** A clock as the API shows it. */
export interface TestClockView {
  clock: TestClock;
  now: Date;
}

export async function getTestClock(deps: Deps, organizationId: string): Promise<TestClockView> {
  const clock = await findTestClock(deps.store, organizationId);
  return { clock, now: clockNow(deps.now(), clock.offsetMs) };
}

export function testClockJson(view: TestClockView): Record<string, unknown> {
  return {
    object: 'test_clock',
    now: view.now.toISOString(),
    today: utcDay(view.now),
    offset_ms: view.clock.offsetMs,
    advances: view.clock.advances,
    advanced_at: view.clock.advancedAt?.toISOString() ?? null,
  };
}

/**
 * Moves the organization's clock forward (in the caller's transaction, with the `test_clock.advanced`
 * event); `catchUpAfterAdvance` (dayWork.ts) then runs the days it crossed.
 */
export async function advanceTestClock(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  body: { advance_to?: unknown; advance_by_days?: unknown },
): Promise<{ view: TestClockView; previousNow: Date }> {
  const advance = parseClockAdvance(body);
  const current = await lockTestClock(tx, organizationId);
  const realNow = deps.now();
  const offsetMs = advancedOffset(realNow, current.offsetMs, advance);
  const clock = {
    organizationId,
    offsetMs,
    advances: current.advances + 1,
    advancedAt: realNow,
  };
  await saveTestClock(tx, clock, realNow);
  const view: TestClockView = { clock, now: clockNow(realNow, offsetMs) };
  const previousNow = clockNow(realNow, current.offsetMs);
  await recordEvent(tx, deps, realNow, {
    organizationId,
    type: 'test_clock.advanced',
    resourceId: null,
    data: { ...testClockJson(view), previous_now: previousNow.toISOString() },
  });
  return { view, previousNow };
}
