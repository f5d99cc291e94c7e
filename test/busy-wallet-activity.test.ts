/**
 * A wallet busier than the activity lists hold (more than AML_HISTORY_TRANSFERS_MAX transfers in a window):
 * its AML velocity sum and its policy's windowed count are still exact, so a rule cannot be slipped under by
 * making many small transfers first: whether the process kept the counts from its own batches, or reads them
 * afresh from the database (another movement changed the wallet; canceled transfers do not count), or its clock
 * went back. As time moves on, what leaves a window stops counting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AML_HISTORY_TRANSFERS_MAX } from '../src/domain/decisions/aml.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

/** Transfers made before the rules are tried: past the listed bound. */
const EARLIER_TRANSFERS = AML_HISTORY_TRANSFERS_MAX + 5;
/** Requests sent at once while filling the window. */
const FILL_CONCURRENCY = 25;

describe.each(BACKENDS)('a busy wallet on %s', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(async () => {
    await t.close();
  });

  const pay = (org: TestOrganization, source: string, amount: string, phone = '+254711000444') =>
    api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: { source, destination: mobileMoney(phone), amount, currency: 'KES' },
    });

  /**
   * EARLIER_TRANSFERS transfers of 1.00 to another wallet of the organization, FILL_CONCURRENCY at a time,
   * each accepted.
   */
  async function fill(org: TestOrganization, wallet: string): Promise<void> {
    const sink = await fundedWallet(t, '1.00', 'KES', org.key);
    const move = () =>
      api(t, 'POST', '/v1/transfers', {
        key: org.key,
        body: {
          source: wallet,
          destination: { type: 'wallet', wallet: sink },
          amount: '1.00',
          currency: 'KES',
        },
      });
    for (let made = 0; made < EARLIER_TRANSFERS; made += FILL_CONCURRENCY) {
      const round = Math.min(FILL_CONCURRENCY, EARLIER_TRANSFERS - made);
      const results = await Promise.all(Array.from({ length: round }, move));
      for (const r of results) expect(r.statusCode, r.body).toBe(201);
    }
  }

  /** Payments canceled before the rail took them: their holds released, so the wallet's sums change. */
  async function canceledPayments(org: TestOrganization, wallet: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const made = await pay(org, wallet, '1.00');
      expect(made.statusCode, made.body).toBe(201);
      const canceled = await api(t, 'POST', `/v1/transfers/${made.data.id}/cancel`, { key: org.key });
      expect(canceled.data.status, canceled.body).toBe('canceled');
    }
  }

  async function velocityBlockingAbove(org: TestOrganization, amountMax: string): Promise<string> {
    const rules = (await api(t, 'GET', '/v1/aml/rules', { key: org.key })).data.data as {
      id: string;
      type: string;
      parameters: { currency: string };
    }[];
    const velocity = rules.find((r) => r.type === 'velocity' && r.parameters.currency === 'KES');
    if (!velocity) throw new Error('no default velocity rule');
    const changed = await api(t, 'PATCH', `/v1/aml/rules/${velocity.id}`, {
      key: org.key,
      body: {
        parameters: { currency: 'KES', window_seconds: 3_600, amount_max: amountMax },
        action: 'block',
      },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    return velocity.id;
  }

  async function denyFrom(org: TestOrganization, countAtLeast: number): Promise<void> {
    const policy = await api(t, 'PUT', '/v1/policies', {
      key: org.key,
      body: {
        rules: [
          {
            id: 'busy',
            match: { aggregate: { window_seconds: 86_400, count_at_least: countAtLeast } },
            action: 'deny',
          },
        ],
      },
    });
    expect(policy.statusCode, policy.body).toBe(200);
  }

  /** Runs `steps` with the service's clock at `at(ms)` after now (0 at first), the real clock after. */
  async function withClock(steps: (at: (offsetMs: number) => void) => Promise<void>): Promise<void> {
    const start = Date.now();
    const realNow = t.deps.now;
    let offsetMs = 0;
    t.deps.now = () => new Date(start + offsetMs);
    try {
      await steps((ms) => {
        offsetMs = ms;
      });
    } finally {
      t.deps.now = realNow;
    }
  }

  const lastDecision = async (org: TestOrganization, wallet: string) =>
    (await api(t, 'GET', `/v1/wallets/${wallet}/evidence?limit=1`, { key: org.key })).data.data[0].data;

  it('counts every transfer in the window, not only the listed ones, from the counts the process kept: AML velocity sum and policy count', async () => {
    const org = await newOrganization(t);
    const velocity = await velocityBlockingAbove(org, `${EARLIER_TRANSFERS + 5}.00`);
    const countAtLeast = EARLIER_TRANSFERS + 3;
    await denyFrom(org, countAtLeast);
    const wallet = await fundedWallet(t, '2000.00', 'KES', org.key);
    await fill(org, wallet);

    // EARLIER_TRANSFERS + 6 out within the hour is over the velocity sum; the listed ones alone are not.
    const over = await pay(org, wallet, '6.00');
    expect(over.statusCode, over.body).toBe(422);
    expect(over.data.code).toBe('compliance_blocked');
    expect((await lastDecision(org, wallet)).aml.hits[0]).toMatchObject({
      rule_id: velocity,
      observed: { count: EARLIER_TRANSFERS + 1, total: `${EARLIER_TRANSFERS + 6}.00` },
    });

    // Two more fit under both rules; the next is the policy's count, which the listed ones never reach.
    for (let i = 0; i < countAtLeast - EARLIER_TRANSFERS - 1; i++) {
      const fits = await pay(org, wallet, '1.00');
      expect(fits.statusCode, fits.body).toBe(201);
    }
    const counted = await pay(org, wallet, '1.00');
    expect(counted.statusCode, counted.body).toBe(422);
    expect(counted.data).toMatchObject({ code: 'policy_denied', rule: 'busy' });
    expect((await lastDecision(org, wallet)).authorization).toMatchObject({
      rule: 'busy',
      matched: { window_count: countAtLeast },
    });
    await expectLedgerHealthy(t);
  });

  it('a busy wallet’s counts let go of what leaves the window as time moves on', async () => {
    const org = await newOrganization(t);
    // Payments of 5.00 or more are refused from the third within a minute, counting every payment.
    const policy = await api(t, 'PUT', '/v1/policies', {
      key: org.key,
      body: {
        rules: [
          {
            id: 'minute',
            match: {
              amount: [{ currency: 'KES', gte: '5.00' }],
              aggregate: { window_seconds: 60, count_at_least: 3 },
            },
            action: 'deny',
          },
        ],
      },
    });
    expect(policy.statusCode, policy.body).toBe(200);
    const wallet = await fundedWallet(t, '2000.00', 'KES', org.key);
    await withClock(async (at) => {
      await fill(org, wallet);
      at(30_000);
      expect((await pay(org, wallet, '1.00')).statusCode).toBe(201);
      // A minute and a second after the first payments, only the one 31 s ago is still in the window.
      at(61_000);
      const second = await pay(org, wallet, '5.00');
      expect(second.statusCode, second.body).toBe(201);
      const third = await pay(org, wallet, '5.00');
      expect(third.data).toMatchObject({ code: 'policy_denied', rule: 'minute' });
      expect((await lastDecision(org, wallet)).authorization.matched).toMatchObject({ window_count: 3 });
    });
    await expectLedgerHealthy(t);
  });

  it('reads the counts afresh when another movement changed the wallet, canceled transfers left out: AML velocity', async () => {
    const org = await newOrganization(t);
    const velocity = await velocityBlockingAbove(org, `${EARLIER_TRANSFERS + 8}.00`);
    const wallet = await fundedWallet(t, '2000.00', 'KES', org.key);
    await fill(org, wallet);
    // Three more, canceled: their released holds change the wallet, so the kept counts are not used.
    await canceledPayments(org, wallet, 3);
    // 505 + 6 is under 513 only if the canceled ones are left out; 505 + 6 + 3 is over it only if all 505 count.
    const fits = await pay(org, wallet, '6.00');
    expect(fits.statusCode, fits.body).toBe(201);
    const over = await pay(org, wallet, '3.00');
    expect(over.data.code, over.body).toBe('compliance_blocked');
    expect((await lastDecision(org, wallet)).aml.hits[0]).toMatchObject({
      rule_id: velocity,
      observed: { count: EARLIER_TRANSFERS + 2, total: `${EARLIER_TRANSFERS + 9}.00` },
    });
    await expectLedgerHealthy(t);
  });

  it('reads the counts afresh when another movement changed the wallet, canceled transfers left out: policy count', async () => {
    const org = await newOrganization(t);
    const countAtLeast = EARLIER_TRANSFERS + 3;
    await denyFrom(org, countAtLeast);
    const wallet = await fundedWallet(t, '2000.00', 'KES', org.key);
    await fill(org, wallet);
    await canceledPayments(org, wallet, 2);
    for (let i = 0; i < 2; i++) expect((await pay(org, wallet, '1.00')).statusCode).toBe(201);
    const counted = await pay(org, wallet, '1.00');
    expect(counted.data).toMatchObject({ code: 'policy_denied', rule: 'busy' });
    expect((await lastDecision(org, wallet)).authorization.matched).toMatchObject({
      window_count: countAtLeast,
    });
  });

  it('counts a payment stamped later than the batch’s clock (a clock gone back, another process’s)', async () => {
    const org = await newOrganization(t);
    const countAtLeast = EARLIER_TRANSFERS + 3;
    await denyFrom(org, countAtLeast);
    const wallet = await fundedWallet(t, '2000.00', 'KES', org.key);
    await withClock(async (at) => {
      await fill(org, wallet);
      at(10_000);
      expect((await pay(org, wallet, '1.00')).statusCode).toBe(201);
      // Back five seconds: the payment stamped at +10 s is already committed, and counts.
      at(5_000);
      expect((await pay(org, wallet, '1.00')).statusCode).toBe(201);
      at(20_000);
      const counted = await pay(org, wallet, '1.00');
      expect(counted.data).toMatchObject({ code: 'policy_denied', rule: 'busy' });
      expect((await lastDecision(org, wallet)).authorization.matched).toMatchObject({
        window_count: countAtLeast,
      });
    });
  });
});
