/**
 * Safeguarding through HTTP: trust accounts configured by admins, closing balances reported by operators,
 * and the daily check comparing customer money (read from the ledger as of the end of the day) with them:
 * ok, shortfall (an exception and an event), excess, missing balance (judged again when the figure comes),
 * corrections, a re-run that changes nothing, organizations kept apart, and bad input as problems.
 *
 * Money is moved with the clock set back (entries stamped on the day checked) or at the real time (after
 * that day ends); the check runs with the clock at noon of the next day. Ids always come from the real
 * clock, so entries are never stamped later than the real time.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addDays, dayOf } from '../src/domain/days.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { runSafeguardingChecks } from '../src/modules/treasury/useCases/safeguarding.ts';
import {
  type ApiResponse,
  api,
  BACKENDS,
  complianceKey,
  startTestApp,
  type TestApp,
} from './support/harness.ts';
import { balanceOf, drainRails, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

const CHECKS_MAX = 10_000;
const UNKNOWN_TRUST_ACCOUNT = `ta_${'0'.repeat(26)}`;

describe.each(BACKENDS)('safeguarding on %s', (backend) => {
  let t: TestApp;
  const realNow = () => new Date();
  /** The day the money moves on (yesterday, UTC) and the day the check runs (today). */
  let day: string;
  let today: string;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    today = dayOf(new Date());
    day = addDays(today, -1);
  });
  afterEach(() => {
    t.deps.now = realNow;
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await t.close();
  });

  /** Runs `fn` with the clock at `time` on `onDay`. */
  async function at<T>(onDay: string, time: string, fn: () => Promise<T>): Promise<T> {
    t.deps.now = () => new Date(`${onDay}T${time}Z`);
    try {
      return await fn();
    } finally {
      t.deps.now = realNow;
    }
  }

  /** The daily check as it runs at noon today: every closed day of the look-back without a report. */
  const runCheck = () => at(today, '12:00:00', () => runSafeguardingChecks(t.deps, CHECKS_MAX));

  async function trustAccount(org: TestOrganization, body: Record<string, unknown> = {}) {
    const created = await api(t, 'POST', '/v1/trust-accounts', {
      key: org.key,
      body: {
        currency: 'KES',
        bank: 'Equity Bank',
        account_reference: `TRUST-${org.name}`,
        active_from: day,
        ...body,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.data.id as string;
  }

  /** A wallet funded on the day checked: its ledger account and entry stamped then. */
  const fundedOnDay = (org: TestOrganization, amount: string, currency = 'KES') =>
    at(day, '10:00:00', () => fundedWallet(t, amount, currency, org.key));

  const reportBalance = (org: TestOrganization, body: Record<string, unknown>) =>
    api(t, 'POST', '/v1/safeguarding/balances', { key: org.key, body: { date: day, ...body } });

  async function reports(org: TestOrganization, query = ''): Promise<any[]> {
    const listed = await api(t, 'GET', `/v1/safeguarding/reports${query}`, { key: org.key });
    expect(listed.statusCode, listed.body).toBe(200);
    return listed.data.data;
  }

  async function reportOfDay(org: TestOrganization, currency = 'KES') {
    const found = (await reports(org, `?currency=${currency}`)).filter((r) => r.date === day);
    expect(found).toHaveLength(1);
    return found[0];
  }

  const eventsOf = async (org: TestOrganization, type: string) =>
    (await api(t, 'GET', `/v1/events?type=${type}`, { key: org.key })).data.data as any[];

  function expectProblem(response: ApiResponse, status: number, code: string, param?: string) {
    expect(response.statusCode, response.body).toBe(status);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.data).toMatchObject({ status, code, type: `urn:mkoba:error:${code}` });
    if (param !== undefined) expect(response.data.param).toBe(param);
  }

  it('ok: customer money as of the end of the day equals the trust balance', async () => {
    const org = await newOrganization(t);
    const account = await trustAccount(org);
    const wallet = await fundedOnDay(org, '1000.00');
    const other = await fundedOnDay(org, '0');
    await at(day, '11:00:00', async () => {
      // Between customers: the sum does not change.
      const moved = await api(t, 'POST', '/v1/transfers', {
        key: org.key,
        body: { source: wallet, destination: other, amount: '250.00', currency: 'KES', rail: 'internal' },
      });
      expect(moved.statusCode, moved.body).toBe(201);
      // Held on the day for a payout: still the customer's money until it settles.
      const payout = await api(t, 'POST', '/v1/transfers', {
        key: org.key,
        body: {
          source: wallet,
          destination: mobileMoney('+254711000801'),
          amount: '100.00',
          currency: 'KES',
        },
      });
      expect(payout.statusCode, payout.body).toBe(201);
    });
    // After the day ended, the payout settles and more money arrives: neither counts for that day.
    await drainRails(t);
    await fundedWallet(t, '500.00', 'KES', org.key);
    expect((await balanceOf(t, wallet, org.key)).current).toBe('650.00');
    const balance = await reportBalance(org, { trust_account: account, closing_balance: '1000.00' });
    expect(balance.statusCode, balance.body).toBe(201);
    expect(balance.data).toMatchObject({
      object: 'safeguarding_balance',
      trust_account: account,
      currency: 'KES',
      date: day,
      closing_balance: '1000.00',
      status: 'current',
      replaces: null,
    });

    expect(await runCheck()).toBeGreaterThanOrEqual(1);
    const report = await reportOfDay(org);
    expect(report).toMatchObject({
      object: 'safeguarding_report',
      currency: 'KES',
      date: day,
      status: 'ok',
      customer_money: '1000.00',
      trust_balance: '1000.00',
      difference: '0.00',
      trust_balances: [{ trust_account: account, balance: balance.data.id, closing_balance: '1000.00' }],
      exception: null,
      as_of: `${today}T00:00:00.000Z`,
    });
    // Only days from the account's active_from on are checked.
    expect((await reports(org)).map((r) => r.date)).toEqual([day]);
    const fetched = await api(t, 'GET', `/v1/safeguarding/reports/${report.id}`, { key: org.key });
    expect(fetched.data).toEqual(report);
    expect(await eventsOf(org, 'safeguarding.shortfall')).toEqual([]);
    const checks = await api(t, 'GET', '/v1/evidence?kind=safeguarding.check', { key: org.key });
    expect(checks.data.data[0].data).toMatchObject({ report_id: report.id, status: 'ok' });
    await expectLedgerHealthy(t);
  });

  it('shortfall: an exception and an event, once; running the check again changes nothing', async () => {
    const org = await newOrganization(t);
    const account = await trustAccount(org);
    await fundedOnDay(org, '1000.00');
    expect((await reportBalance(org, { trust_account: account, closing_balance: '900.00' })).statusCode).toBe(
      201,
    );
    await runCheck();
    const report = await reportOfDay(org);
    expect(report).toMatchObject({
      status: 'shortfall',
      customer_money: '1000.00',
      trust_balance: '900.00',
      difference: '-100.00',
    });
    const exceptions = await api(t, 'GET', '/v1/reconciliation/exceptions?kind=safeguarding_shortfall', {
      key: org.key,
    });
    expect(exceptions.data.data).toHaveLength(1);
    const exception = exceptions.data.data[0];
    expect(exception).toMatchObject({
      id: report.exception,
      kind: 'safeguarding_shortfall',
      status: 'open',
      transfer: null,
      details: {
        report_id: report.id,
        currency: 'KES',
        date: day,
        customer_money_minor: '100000',
        trust_balance_minor: '90000',
        shortfall_minor: '10000',
      },
    });
    const events = await eventsOf(org, 'safeguarding.shortfall');
    expect(events).toHaveLength(1);
    expect(events[0].data).toEqual({
      report_id: report.id,
      currency: 'KES',
      date: day,
      status: 'shortfall',
      customer_money: '1000.00',
      trust_balance: '900.00',
      difference: '-100.00',
      shortfall: '100.00',
      exception_id: exception.id,
      as_of: `${today}T00:00:00.000Z`,
    });

    // Again, and again later the same day: every report exists, so nothing is checked or written.
    expect(await runCheck()).toBe(0);
    expect(await at(today, '23:00:00', () => runSafeguardingChecks(t.deps, CHECKS_MAX))).toBe(0);
    expect(await reports(org)).toEqual([report]);
    expect(await eventsOf(org, 'safeguarding.shortfall')).toHaveLength(1);
    const again = await api(t, 'GET', '/v1/reconciliation/exceptions?kind=safeguarding_shortfall', {
      key: org.key,
    });
    expect(again.data.data).toHaveLength(1);

    // An operator accepts it once the shortfall is made good: no transfer to name.
    const resolved = await api(t, 'POST', `/v1/reconciliation/exceptions/${exception.id}/resolve`, {
      key: org.key,
      body: { action: 'manual_match', note: 'Topped up from the operating account on the next morning.' },
    });
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect(resolved.data).toMatchObject({ status: 'resolved', resolution: 'manual_match', transfer: null });
    const writeOff = await api(t, 'POST', `/v1/reconciliation/exceptions/${exception.id}/resolve`, {
      key: org.key,
      body: { action: 'write_off', note: 'again' },
    });
    expect(writeOff.statusCode).toBe(409);
  });

  it('excess: more in trust than customers hold', async () => {
    const org = await newOrganization(t);
    const account = await trustAccount(org);
    await fundedOnDay(org, '1000.00');
    await reportBalance(org, { trust_account: account, closing_balance: '1200.00' });
    await runCheck();
    expect(await reportOfDay(org)).toMatchObject({
      status: 'excess',
      customer_money: '1000.00',
      trust_balance: '1200.00',
      difference: '200.00',
      exception: null,
    });
    expect(await eventsOf(org, 'safeguarding.shortfall')).toEqual([]);
  });

  it('missing balance, then the figure arrives late, is corrected, and each time the day is judged again', async () => {
    const org = await newOrganization(t);
    const account = await trustAccount(org);
    await fundedOnDay(org, '1000.00');
    await runCheck();
    const missing = await reportOfDay(org);
    expect(missing).toMatchObject({
      status: 'missing_balance',
      customer_money: '1000.00',
      trust_balance: null,
      difference: null,
      trust_balances: [{ trust_account: account, balance: null, closing_balance: null }],
      exception: null,
    });

    // The statement arrives: the report becomes a shortfall, with its exception and event.
    const first = await reportBalance(org, { trust_account: account, closing_balance: '800.00' });
    expect(first.statusCode, first.body).toBe(201);
    const short = await reportOfDay(org);
    expect(short).toMatchObject({ id: missing.id, status: 'shortfall', difference: '-200.00' });
    expect(short.exception).toMatch(/^recx_/);
    expect(await eventsOf(org, 'safeguarding.shortfall')).toHaveLength(1);

    // The same figure again changes nothing; another figure is a conflict until it names what it corrects.
    const same = await reportBalance(org, { trust_account: account, closing_balance: '800.00' });
    expect(same.statusCode).toBe(200);
    expect(same.data.id).toBe(first.data.id);
    expectProblem(
      await reportBalance(org, { trust_account: account, closing_balance: '1000.00' }),
      409,
      'safeguarding_balance_conflict',
      'closing_balance',
    );
    expectProblem(
      await reportBalance(org, {
        trust_account: account,
        closing_balance: '1000.00',
        replaces: `sgb_${'0'.repeat(26)}`,
        note: 'typo',
      }),
      409,
      'safeguarding_balance_conflict',
      'replaces',
    );
    expectProblem(
      await reportBalance(org, {
        trust_account: account,
        closing_balance: '1000.00',
        replaces: first.data.id,
      }),
      400,
      'validation_error',
      'note',
    );
    const corrected = await reportBalance(org, {
      trust_account: account,
      closing_balance: '1000.00',
      replaces: first.data.id,
      note: 'The statement was misread: 1,000.00.',
    });
    expect(corrected.statusCode, corrected.body).toBe(201);
    expect(corrected.data).toMatchObject({
      replaces: first.data.id,
      status: 'current',
      closing_balance: '1000.00',
    });
    const ok = await reportOfDay(org);
    // The verdict follows the figure; the exception the shortfall opened stays open for a person.
    expect(ok).toMatchObject({
      id: missing.id,
      status: 'ok',
      difference: '0.00',
      exception: short.exception,
    });
    expect(ok.trust_balances).toEqual([
      { trust_account: account, balance: corrected.data.id, closing_balance: '1000.00' },
    ]);
    const exception = await api(t, 'GET', `/v1/reconciliation/exceptions/${short.exception}`, {
      key: org.key,
    });
    expect(exception.data.status).toBe('open');
    expect(await eventsOf(org, 'safeguarding.shortfall')).toHaveLength(1);

    const balances = await api(t, 'GET', `/v1/safeguarding/balances?trust_account=${account}`, {
      key: org.key,
    });
    expect(balances.data.data.map((b: any) => [b.id, b.status])).toEqual([
      [corrected.data.id, 'current'],
      [first.data.id, 'superseded'],
    ]);
    const evidence = await api(t, 'GET', '/v1/evidence?kind=safeguarding.balance', { key: org.key });
    expect(evidence.data.data.map((e: any) => e.data.action)).toEqual(['correct', 'report']);
    expect(evidence.data.data[0].data).toMatchObject({
      previous_closing_balance_minor: '80000',
      closing_balance_minor: '100000',
      note: 'The statement was misread: 1,000.00.',
    });
  });

  it('covers every currency the organization holds money in, and its trust accounts together', async () => {
    const org = await newOrganization(t);
    const first = await trustAccount(org, { bank: 'Equity Bank' });
    const second = await trustAccount(org, { bank: 'KCB' });
    await fundedOnDay(org, '1000.00');
    await fundedOnDay(org, '50.00', 'USD');
    // A currency with no wallet on the day and no trust account is not checked.
    await fundedWallet(t, '10.00', 'UGX', org.key);
    await reportBalance(org, { trust_account: first, closing_balance: '600.00' });
    await runCheck();
    // One of two accounts reported: still missing.
    expect((await reportOfDay(org)).status).toBe('missing_balance');
    await reportBalance(org, { trust_account: second, closing_balance: '400.00' });
    expect(await reportOfDay(org)).toMatchObject({ status: 'ok', trust_balance: '1000.00' });
    // USD wallets but no USD trust account: nothing holds that money in trust.
    expect(await reportOfDay(org, 'USD')).toMatchObject({
      status: 'shortfall',
      customer_money: '50.00',
      trust_balance: '0.00',
      difference: '-50.00',
      trust_balances: [],
    });
    expect((await reports(org)).map((r) => r.currency).sort()).toEqual(['KES', 'USD']);

    // Filters and pages.
    expect((await reports(org, '?status=shortfall')).map((r) => r.currency)).toEqual(['USD']);
    expect(await reports(org, `?date[gte]=${today}`)).toEqual([]);
    expect(await reports(org, `?date[gte]=${day}&date[lte]=${day}`)).toHaveLength(2);
    const page = await api(t, 'GET', '/v1/safeguarding/reports?limit=1', { key: org.key });
    expect(page.data).toMatchObject({ has_more: true, next_cursor: page.data.data[0].id });
    const next = await api(
      t,
      'GET',
      `/v1/safeguarding/reports?limit=1&starting_after=${page.data.next_cursor}`,
      {
        key: org.key,
      },
    );
    expect(next.data.has_more).toBe(false);
    expect(next.data.data[0].id).not.toBe(page.data.data[0].id);
  });

  it('keeps organizations apart', async () => {
    const a = await newOrganization(t);
    const b = await newOrganization(t);
    const accountA = await trustAccount(a);
    const accountB = await trustAccount(b);
    await fundedOnDay(a, '700.00');
    await fundedOnDay(b, '300.00');
    await reportBalance(a, { trust_account: accountA, closing_balance: '600.00' });
    await reportBalance(b, { trust_account: accountB, closing_balance: '300.00' });
    await runCheck();
    // Each counts its own customers' money only.
    expect(await reportOfDay(a)).toMatchObject({ status: 'shortfall', customer_money: '700.00' });
    expect(await reportOfDay(b)).toMatchObject({ status: 'ok', customer_money: '300.00' });
    const reportA = await reportOfDay(a);
    expect((await eventsOf(b, 'safeguarding.shortfall')).length).toBe(0);
    expect((await api(t, 'GET', `/v1/safeguarding/reports/${reportA.id}`, { key: b.key })).statusCode).toBe(
      404,
    );
    expect((await api(t, 'GET', `/v1/trust-accounts/${accountA}`, { key: b.key })).statusCode).toBe(404);
    expectProblem(
      await reportBalance(b, { trust_account: accountA, closing_balance: '1.00' }),
      404,
      'resource_missing',
      'trust_account',
    );
    const listed = await api(t, 'GET', '/v1/trust-accounts', { key: b.key });
    expect(listed.data.data.map((x: any) => x.id)).toEqual([accountB]);
    const balances = await api(t, 'GET', '/v1/safeguarding/balances', { key: b.key });
    expect(balances.data.data.every((x: any) => x.trust_account === accountB)).toBe(true);
    const exceptions = await api(t, 'GET', '/v1/reconciliation/exceptions?kind=safeguarding_shortfall', {
      key: b.key,
    });
    expect(exceptions.data.data).toEqual([]);
    // An organization without trust accounts is not checked.
    const sandbox = await complianceKey(t);
    expect((await api(t, 'GET', '/v1/safeguarding/reports', { key: sandbox })).data.data).toEqual([]);
  });

  it('trust accounts: configured by admins, as evidence, and closed once', async () => {
    const org = await newOrganization(t);
    const created = await api(t, 'POST', '/v1/trust-accounts', {
      key: org.key,
      body: { currency: 'KES', bank: 'NCBA', account_reference: '1002003004' },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.data).toMatchObject({
      object: 'trust_account',
      currency: 'KES',
      bank: 'NCBA',
      account_reference: '1002003004',
      status: 'active',
      active_from: today,
      closed_on: null,
    });
    expectProblem(
      await api(t, 'POST', '/v1/trust-accounts', {
        key: org.key,
        body: { currency: 'KES', bank: 'NCBA', account_reference: '1002003004' },
      }),
      409,
      'trust_account_exists',
      'account_reference',
    );
    const closed = await api(t, 'PATCH', `/v1/trust-accounts/${created.data.id}`, {
      key: org.key,
      body: { status: 'closed' },
    });
    expect(closed.statusCode, closed.body).toBe(200);
    expect(closed.data).toMatchObject({ status: 'closed', closed_on: today });
    expectProblem(
      await api(t, 'PATCH', `/v1/trust-accounts/${created.data.id}`, {
        key: org.key,
        body: { status: 'closed' },
      }),
      409,
      'invalid_state_transition',
    );
    // Closed today: today's figure no longer counts.
    expectProblem(
      await reportBalance(org, { trust_account: created.data.id, date: today, closing_balance: '0.00' }),
      400,
      'validation_error',
      'date',
    );
    // The reference is free again once the account is closed.
    const reopened = await api(t, 'POST', '/v1/trust-accounts', {
      key: org.key,
      body: { currency: 'KES', bank: 'NCBA', account_reference: '1002003004' },
    });
    expect(reopened.statusCode).toBe(201);
    const evidence = await api(t, 'GET', '/v1/evidence?kind=trust_account.update', { key: org.key });
    expect(evidence.data.data.map((e: any) => e.data.action)).toEqual(['create', 'close', 'create']);
    const active = await api(t, 'GET', '/v1/trust-accounts?status=active', { key: org.key });
    expect(active.data.data.map((a: any) => a.id)).toEqual([reopened.data.id]);
  });

  it('bad input is a problem naming the field; scopes are enforced', async () => {
    const org = await newOrganization(t);
    const account = await trustAccount(org);
    const post = (body: unknown) => api(t, 'POST', '/v1/trust-accounts', { key: org.key, body });
    const valid = { currency: 'KES', bank: 'Equity Bank', account_reference: 'X-1' };
    expectProblem(await post({ ...valid, currency: 'XYZ' }), 400, 'validation_error', 'currency');
    expectProblem(await post({ currency: 'KES', account_reference: 'X-1' }), 400, 'validation_error', 'bank');
    expectProblem(await post({ ...valid, bank: '' }), 400, 'validation_error', 'bank');
    expectProblem(
      await post({ ...valid, active_from: '2026-02-30' }),
      400,
      'validation_error',
      'active_from',
    );
    expectProblem(await post({ ...valid, iban: 'x' }), 400, 'validation_error', 'iban');

    const cases: [Record<string, unknown>, string, string][] = [
      [{ trust_account: account, date: '2026-13-01', closing_balance: '1.00' }, 'date', 'invalid_format'],
      [{ trust_account: account, date: addDays(today, 1), closing_balance: '1.00' }, 'date', 'out_of_range'],
      [{ trust_account: account, date: addDays(day, -1), closing_balance: '1.00' }, 'date', 'out_of_range'],
      [{ trust_account: account, date: day, closing_balance: '12.345' }, 'closing_balance', 'too_precise'],
      [
        { trust_account: account, date: day, closing_balance: '1,000.00' },
        'closing_balance',
        'invalid_format',
      ],
      [{ trust_account: account, date: day, closing_balance: 12 }, 'closing_balance', 'invalid_type'],
      [{ trust_account: 'ta_nope', date: day, closing_balance: '1.00' }, 'trust_account', 'invalid_format'],
      [{ date: day, closing_balance: '1.00' }, 'trust_account', 'missing'],
    ];
    for (const [body, param, code] of cases) {
      const response = await api(t, 'POST', '/v1/safeguarding/balances', { key: org.key, body });
      expectProblem(response, 400, 'validation_error', param);
      expect(response.data.errors[0]).toMatchObject({ param, code });
    }
    expectProblem(
      await reportBalance(org, { trust_account: UNKNOWN_TRUST_ACCOUNT, closing_balance: '1.00' }),
      404,
      'resource_missing',
      'trust_account',
    );

    for (const [query, param] of [
      ['status=bogus', 'status'],
      ['currency=XYZ', 'currency'],
      ['date[gte]=2026-13-01', 'date[gte]'],
      ['date[lte]=yesterday', 'date[lte]'],
      [`starting_after=${account}`, 'starting_after'],
    ]) {
      expectProblem(
        await api(t, 'GET', `/v1/safeguarding/reports?${query}`, { key: org.key }),
        400,
        'validation_error',
        param,
      );
    }
    expectProblem(
      await api(t, 'GET', '/v1/safeguarding/reports/sgr_nope', { key: org.key }),
      400,
      'validation_error',
      'id',
    );

    // Trust accounts are the admins'; balances and reports the operators'.
    const operator = (await issueApiKey(t.deps, { organizationName: org.name, scopes: ['compliance'] })).key;
    const reader = (await issueApiKey(t.deps, { organizationName: org.name, scopes: ['read', 'write'] })).key;
    expectProblem(
      await api(t, 'POST', '/v1/trust-accounts', { key: operator, body: valid }),
      403,
      'insufficient_permissions',
    );
    expect((await api(t, 'GET', '/v1/safeguarding/reports', { key: operator })).statusCode).toBe(200);
    expectProblem(
      await api(t, 'GET', '/v1/safeguarding/reports', { key: reader }),
      403,
      'insufficient_permissions',
    );
    expectProblem(
      await api(t, 'POST', '/v1/safeguarding/balances', {
        key: reader,
        body: { trust_account: account, date: day, closing_balance: '1.00' },
      }),
      403,
      'insufficient_permissions',
    );
  });
});
