/**
 * The sandbox test clock through HTTP, on both backends: an organization's clock reads real time until it is
 * advanced, then runs that far ahead; it only moves forward (the API and the database both refuse going
 * back); an advance is idempotent per key, two at once both apply one after the other, it is announced by
 * `test_clock.advanced`, and it runs the organization's day work for each day it crossed before answering
 * (a failure there is a 503 that the same request finishes). Production has no test clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DayWork } from '../src/app/deps.ts';
import { DAY_MS } from '../src/domain/days.ts';
import { daysAfter, TEST_CLOCK_ADVANCE_DAYS_MAX, utcDay } from '../src/modules/testClock/domain.ts';
import { organizationNow } from '../src/modules/testClock/useCases/testClock.ts';
import { runDayWorkerOnce } from '../src/modules/testClock/workers.ts';
import { api, BACKENDS, newOrganizationKey, startTestApp, type TestApp } from './support/harness.ts';
import { newOrganization } from './support/organizations.ts';

/** Day work that records the days it was asked to do, doing each once, or fails while `failing` is set. */
function recordingDayWork(): DayWork & { done: Map<string, string[]>; failing: boolean } {
  const done = new Map<string, string[]>();
  const work = {
    name: 'recording',
    done,
    failing: false,
    async organizations(_deps: unknown, after: string | undefined, limit: number) {
      return [...done.keys()]
        .sort()
        .filter((id) => after === undefined || id > after)
        .slice(0, limit);
    },
    async catchUp(_deps: unknown, organizationId: string, throughDay: string) {
      if (work.failing) throw new Error('the day work failed');
      const days = done.get(organizationId) ?? [];
      const last = days.at(-1) ?? utcDay(new Date());
      done.set(organizationId, [...days, ...daysAfter(last, throughDay)]);
    },
  };
  return work;
}

describe.each(BACKENDS)('test clock on %s', (backend) => {
  let t: TestApp;
  const work = recordingDayWork();

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    // The app reads its day work from these deps at each advance.
    t.deps.dayWork = [...t.deps.dayWork, work];
  });
  afterAll(async () => {
    await t.close();
  });

  const advance = (key: string, body: unknown, idempotencyKey?: string) =>
    api(t, 'POST', '/v1/sandbox/clock', {
      key,
      body,
      ...(idempotencyKey ? { headers: { 'idempotency-key': idempotencyKey } } : {}),
    });

  it('reads the real clock until advanced, then runs that far ahead, doing each crossed day once', async () => {
    const key = await newOrganizationKey(t);
    const before = await api(t, 'GET', '/v1/sandbox/clock', { key });
    expect(before.statusCode, before.body).toBe(200);
    expect(before.data).toMatchObject({ object: 'test_clock', offset_ms: 0, advances: 0, advanced_at: null });
    expect(Math.abs(Date.parse(before.data.now) - Date.now())).toBeLessThan(60_000);

    const moved = await advance(key, { advance_by_days: 30 });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.data.advances).toBe(1);
    expect(moved.data.offset_ms).toBe(30 * DAY_MS);
    const expectedNow = Date.parse(before.data.now) + 30 * DAY_MS;
    expect(Math.abs(Date.parse(moved.data.now) - expectedNow)).toBeLessThan(60_000);

    const announced = (await api(t, 'GET', '/v1/events?type=test_clock.advanced', { key })).data.data[0].data;
    expect(announced).toMatchObject({ object: 'test_clock', advances: 1, offset_ms: 30 * DAY_MS });
    expect(Date.parse(announced.previous_now)).toBeLessThan(Date.parse(moved.data.now));

    const to = new Date(Date.parse(moved.data.now) + 10 * DAY_MS).toISOString();
    const second = await advance(key, { advance_to: to });
    expect(second.statusCode, second.body).toBe(200);
    expect(second.data.now).toBe(to);
    expect(second.data.today).toBe(to.slice(0, 10));

    // Every day between the real today and the clock's today was done, in order, each once.
    const [[, days] = []] = [...work.done].filter(([, d]) => d.at(-1) === to.slice(0, 10));
    expect(days).toEqual(daysAfter(utcDay(new Date(Date.parse(before.data.now))), to.slice(0, 10)));
    expect(new Set(days).size).toBe(days?.length);
  });

  it('never goes back, nor too far, and takes exactly one of its two forms', async () => {
    const key = await newOrganizationKey(t);
    await advance(key, { advance_by_days: 5 });
    const back = await advance(key, { advance_to: new Date().toISOString() });
    expect(back.statusCode).toBe(422);
    expect(back.data).toMatchObject({ code: 'test_clock_backwards', param: 'advance_to' });
    const far = await advance(key, {
      advance_to: new Date(Date.now() + (5 + TEST_CLOCK_ADVANCE_DAYS_MAX + 2) * DAY_MS).toISOString(),
    });
    expect(far.statusCode).toBe(422);
    expect(far.data).toMatchObject({ code: 'test_clock_advance_too_far', param: 'advance_to' });
    for (const [body, param] of [
      [{}, 'advance_to'],
      [
        { advance_to: new Date(Date.now() + 9 * DAY_MS).toISOString(), advance_by_days: 1 },
        'advance_by_days',
      ],
      [{ advance_by_days: 0 }, 'advance_by_days'],
      [{ advance_by_days: TEST_CLOCK_ADVANCE_DAYS_MAX + 1 }, 'advance_by_days'],
      [{ advance_by_days: 1.5 }, 'advance_by_days'],
      [{ advance_to: 'tomorrow' }, 'advance_to'],
    ] as const) {
      const refused = await advance(key, body);
      expect(refused.statusCode, JSON.stringify(body)).toBe(400);
      expect(refused.data.code).toBe('validation_error');
      expect(refused.data.param, JSON.stringify(body)).toBe(param);
    }
    expect((await api(t, 'GET', '/v1/sandbox/clock', { key })).data.advances).toBe(1);
    // The database refuses a clock going back too, whoever writes it.
    await expect(t.db.store.query('UPDATE test_clocks SET offset_ms = offset_ms - 1')).rejects.toThrow(
      /never goes back/,
    );
  });

  it('advances once per Idempotency-Key, and two advances at once both apply, one after the other', async () => {
    const key = await newOrganizationKey(t);
    const first = await advance(key, { advance_by_days: 3 }, 'clock-once');
    const replay = await advance(key, { advance_by_days: 3 }, 'clock-once');
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    const both = await Promise.all([
      advance(key, { advance_by_days: 2 }),
      advance(key, { advance_by_days: 2 }),
    ]);
    for (const response of both) expect(response.statusCode, response.body).toBe(200);
    const clock = (await api(t, 'GET', '/v1/sandbox/clock', { key })).data;
    expect(clock.advances).toBe(3);
    expect(clock.offset_ms).toBe(7 * DAY_MS);
    const events = (await api(t, 'GET', '/v1/events?type=test_clock.advanced', { key })).data.data;
    expect(events).toHaveLength(3);
  });

  it('answers 503 when the crossed days could not be done, and the same request finishes them', async () => {
    const key = await newOrganizationKey(t);
    work.failing = true;
    let failed: Awaited<ReturnType<typeof advance>>;
    try {
      failed = await advance(key, { advance_by_days: 4 }, 'clock-catch-up');
    } finally {
      work.failing = false;
    }
    expect(failed.statusCode).toBe(503);
    expect(failed.data.code).toBe('test_clock_catch_up_incomplete');
    const retried = await advance(key, { advance_by_days: 4 }, 'clock-catch-up');
    expect(retried.statusCode).toBe(200);
    expect(retried.data.advances).toBe(1);
    const today = retried.data.today as string;
    expect([...work.done.values()].some((days) => days.at(-1) === today)).toBe(true);
  });

  it('the day worker brings each organization up to its own today, and a second pass does nothing', async () => {
    const { key, organizationId } = await newOrganization(t);
    await advance(key, { advance_by_days: 2 });
    const today = utcDay(await organizationNow(t.db.store, t.deps, organizationId));
    // As if its work had stopped three days before its today.
    const stopped = utcDay(new Date(Date.parse(`${today}T00:00:00Z`) - 3 * DAY_MS));
    work.done.set(organizationId, [stopped]);
    const pass = await runDayWorkerOnce(t.deps, [work]);
    expect(pass.failures).toEqual([]);
    expect(work.done.get(organizationId)).toEqual([stopped, ...daysAfter(stopped, today)]);
    await runDayWorkerOnce(t.deps, [work]);
    expect(work.done.get(organizationId)).toHaveLength(4);
  });

  it('is the organization’s own: others keep the real clock, and the use cases read it', async () => {
    const key = await newOrganizationKey(t);
    await advance(key, { advance_by_days: 100 });
    const other = await api(t, 'GET', '/v1/sandbox/clock', { key: t.key });
    expect(other.data.offset_ms).toBe(0);
    const now = await organizationNow(t.db.store, t.deps, t.organizationId);
    expect(Math.abs(now.getTime() - Date.now())).toBeLessThan(60_000);
  });
});

describe.each(BACKENDS)('test clock in production on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend, 'production');
  });
  afterAll(async () => {
    await t.close();
  });

  it('does not exist: the real clock is the only one', async () => {
    const response = await api(t, 'POST', '/v1/sandbox/clock', { body: { advance_by_days: 1 } });
    expect(response.statusCode).toBe(404);
    expect((await api(t, 'GET', '/v1/sandbox/clock')).statusCode).toBe(404);
    const now = await organizationNow(t.db.store, t.deps, t.organizationId);
    expect(Math.abs(now.getTime() - Date.now())).toBeLessThan(60_000);
  });
});
