/**
 * Savings products through HTTP on both backends, with the sandbox test clock: a month and then a simulated
 * year of accrual under each day-count convention, every account's balance, interest paid and exact accrued
 * interest equal to an independent exact-rational computation, the ledger healthy after; each day accrued
 * once however many passes run at once; rate changes effective by day, never in the past; a savings account
 * refused as the source of a transfer (rail or wallet), a payment batch or a quote; withdrawals by the product's
 * rules (minimum balance, notice, fixed term's penalty, the owner's wallets only), and two at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../src/domain/days.ts';
import { ACCRUAL_DENOMINATOR, previousDay } from '../src/modules/savings/domain.ts';
import { accrueSavingsThrough } from '../src/modules/savings/useCases/dayWork.ts';
import { runDayWorkerOnce } from '../src/modules/testClock/workers.ts';
import { api, BACKENDS, createCustomer, startTestApp, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';
import { add, frac, referenceSavings } from './support/savingsReference.ts';

/** KES amounts as minor units (exponent 2). */
function minor(amount: string): bigint {
  const [whole = '0', cents = ''] = amount.split('.');
  return BigInt(whole) * 100n + BigInt(cents.padEnd(2, '0'));
}

describe.each(BACKENDS)('savings products on %s', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    await t.close();
  });

  async function organization() {
    const org = await newOrganization(t);
    const owner = await createCustomer(t, org.key);
    return { ...org, owner };
  }

  const productOf = async (key: string, body: Record<string, unknown>) => {
    const created = await api(t, 'POST', '/v1/savings-products', {
      key,
      body: { name: 'Savings', currency: 'KES', day_count: 'actual_365_fixed', access: 'instant', ...body },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.data;
  };
  const openAccount = async (key: string, product: string, owner: string, funding?: string) => {
    const opened = await api(t, 'POST', '/v1/savings-accounts', { key, body: { product, owner } });
    expect(opened.statusCode, opened.body).toBe(201);
    if (funding) {
      const funded = await api(t, 'POST', `/v1/sandbox/wallets/${opened.data.id}/fund`, {
        key,
        body: { amount: funding },
      });
      expect(funded.statusCode, funded.body).toBe(201);
    }
    return opened.data;
  };
  const walletOf = async (key: string, owner: string, funding?: string) => {
    const wallet = await api(t, 'POST', '/v1/wallets', { key, body: { owner, currency: 'KES' } });
    expect(wallet.statusCode, wallet.body).toBe(201);
    if (funding) {
      await api(t, 'POST', `/v1/sandbox/wallets/${wallet.data.id}/fund`, { key, body: { amount: funding } });
    }
    return wallet.data.id as string;
  };
  const today = async (key: string) =>
    (await api(t, 'GET', '/v1/sandbox/clock', { key })).data.today as string;
  const advance = async (key: string, days: number) => {
    const moved = await api(t, 'POST', '/v1/sandbox/clock', { key, body: { advance_by_days: days } });
    expect(moved.statusCode, moved.body).toBe(200);
    return moved.data.today as string;
  };
  const account = async (key: string, id: string) => {
    const read = await api(t, 'GET', `/v1/savings-accounts/${id}`, { key });
    expect(read.statusCode, read.body).toBe(200);
    return read.data;
  };

  /** The account as the reference computes it: accrued from its opening day through the day before today. */
  async function expectAsReference(
    key: string,
    id: string,
    options: { convention: 'actual_365_fixed' | 'actual_360' | 'thirty_360'; rate: number; funded: string },
  ) {
    const now = await today(key);
    const read = await account(key, id);
    const reference = referenceSavings({
      from: read.opened_on,
      through: previousDay(now),
      openingMinor: minor(options.funded),
      convention: options.convention,
      rateOn: () => options.rate,
    });
    expect(read.accrued_through).toBe(previousDay(now));
    expect(minor(read.balance)).toBe(reference.balanceMinor);
    expect(minor(read.interest_paid)).toBe(reference.interestPaidMinor);
    const accrued = add(
      frac(minor(read.accrued_interest.payable)),
      frac(BigInt(read.accrued_interest.residual_numerator), ACCRUAL_DENOMINATOR),
    );
    expect(accrued).toEqual(reference.accrued);
    expect(BigInt(read.accrued_interest.residual_numerator) < ACCRUAL_DENOMINATOR).toBe(true);
    return { read, reference };
  }

  it('accrues a month and then a simulated year exactly, under each convention, the ledger clean after', async () => {
    const org = await organization();
    const cases = [
      { convention: 'actual_365_fixed', rate: 725, funded: '123456.78' },
      { convention: 'actual_360', rate: 1_333, funded: '987.65' },
      { convention: 'thirty_360', rate: 499, funded: '1000000.01' },
    ] as const;
    const accounts: string[] = [];
    for (const c of cases) {
      const product = await productOf(org.key, { day_count: c.convention, annual_rate_bps: c.rate });
      accounts.push((await openAccount(org.key, product.id, org.owner, c.funded)).id);
    }
    const opened = (await account(org.key, accounts[0] as string)).opened_on as string;
    expect(opened).toBe(await today(org.key));

    // A month, past its end: the month's interest is capitalised.
    await advance(org.key, 35);
    for (const [i, c] of cases.entries()) {
      const { reference } = await expectAsReference(org.key, accounts[i] as string, c);
      expect(reference.capitalisations).toBeGreaterThanOrEqual(1);
    }
    const accruals = await api(t, 'GET', `/v1/savings-accounts/${accounts[0]}/accruals?limit=3`, {
      key: org.key,
    });
    expect(accruals.statusCode, accruals.body).toBe(200);
    expect(accruals.data.data[0]).toMatchObject({
      object: 'savings_accrual',
      day: previousDay(await today(org.key)),
      annual_rate_bps: 725,
      day_count_fraction: '1/365',
      denominator: ACCRUAL_DENOMINATOR.toString(),
    });

    // A year more, in two large advances.
    await advance(org.key, 366);
    await advance(org.key, 30);
    for (const [i, c] of cases.entries()) {
      const { read, reference } = await expectAsReference(org.key, accounts[i] as string, c);
      const events = await api(t, 'GET', '/v1/events?type=savings.interest.capitalized&limit=100', {
        key: org.key,
      });
      expect(events.statusCode, events.body).toBe(200);
      const mine = events.data.data.filter(
        (e: { data: { savings_account: string } }) => e.data.savings_account === accounts[i],
      );
      expect(mine).toHaveLength(reference.capitalisations);
      expect(mine[0].data).toMatchObject({
        object: 'savings_interest_capitalization',
        savings_account: accounts[i],
        interest_paid: read.interest_paid,
      });
    }
    await expectLedgerHealthy(t);
  });

  it('accrues each day once: passes at once, and passes again, change nothing more', async () => {
    const org = await organization();
    const product = await productOf(org.key, { annual_rate_bps: 900 });
    const opened = await openAccount(org.key, product.id, org.owner, '50000.00');
    const through = addDays(opened.opened_on, 45);
    await Promise.all([
      accrueSavingsThrough(t.deps, org.organizationId, through),
      accrueSavingsThrough(t.deps, org.organizationId, through),
      runDayWorkerOnce(t.deps),
      runDayWorkerOnce(t.deps),
    ]);
    const once = await account(org.key, opened.id);
    expect(once.accrued_through).toBe(previousDay(through));
    await accrueSavingsThrough(t.deps, org.organizationId, through);
    await runDayWorkerOnce(t.deps);
    expect(await account(org.key, opened.id)).toEqual(once);
    const reference = referenceSavings({
      from: opened.opened_on,
      through: previousDay(through),
      openingMinor: 5_000_000n,
      convention: 'actual_365_fixed',
      rateOn: () => 900,
    });
    expect(minor(once.balance)).toBe(reference.balanceMinor);
    const days = await api(t, 'GET', `/v1/savings-accounts/${opened.id}/accruals?limit=100`, {
      key: org.key,
    });
    expect(days.data.data).toHaveLength(45);
    expect(new Set(days.data.data.map((d: { day: string }) => d.day)).size).toBe(45);
    // The database refuses a second accrual of a day whoever writes it.
    await expect(
      t.db.store.query(
        `INSERT INTO savings_accruals (wallet_id, day, organization_id, balance_minor, annual_rate_bps, day_count_days,
           day_count_basis, parts, accrued_parts_after, booked_minor, capitalized_minor, created_at)
         VALUES ($1, $2, $3, 0, 0, 1, 365, 0, 0, 0, 0, now())`,
        [opened.id, opened.opened_on, org.organizationId],
      ),
    ).rejects.toThrow(/duplicate key|unique/);
    await expectLedgerHealthy(t);
  });

  it('changes a rate from a day on, never in the past, one rate a day', async () => {
    const org = await organization();
    const product = await productOf(org.key, { annual_rate_bps: 1_000 });
    const opened = await openAccount(org.key, product.id, org.owner, '10000.00');
    const now = await today(org.key);
    const from = addDays(now, 10);
    const past = await api(t, 'POST', `/v1/savings-products/${product.id}/rates`, {
      key: org.key,
      body: { annual_rate_bps: 0, effective_from: previousDay(now) },
    });
    expect(past.statusCode).toBe(422);
    expect(past.data).toMatchObject({ code: 'savings_rate_in_past', param: 'effective_from' });
    const changed = await api(t, 'POST', `/v1/savings-products/${product.id}/rates`, {
      key: org.key,
      body: { annual_rate_bps: 0, effective_from: from },
    });
    expect(changed.statusCode, changed.body).toBe(201);
    expect(changed.data.annual_rate_bps).toBe(1_000);
    expect(changed.data.rates).toEqual([
      { effective_from: now, annual_rate_bps: 1_000 },
      { effective_from: from, annual_rate_bps: 0 },
    ]);
    const again = await api(t, 'POST', `/v1/savings-products/${product.id}/rates`, {
      key: org.key,
      body: { annual_rate_bps: 5, effective_from: from },
    });
    expect(again.statusCode).toBe(409);
    expect(again.data.code).toBe('savings_rate_exists');

    await advance(org.key, 20);
    const days = (
      await api(t, 'GET', `/v1/savings-accounts/${opened.id}/accruals?limit=30`, { key: org.key })
    ).data.data as { day: string; annual_rate_bps: number; interest_numerator: string }[];
    for (const day of days) {
      expect(day.annual_rate_bps, day.day).toBe(day.day < from ? 1_000 : 0);
      if (day.day >= from) expect(day.interest_numerator).toBe('0');
    }
    expect(
      (await api(t, 'GET', `/v1/savings-products/${product.id}`, { key: org.key })).data.annual_rate_bps,
    ).toBe(0);
  });

  it('refuses a savings account as the source of a transfer, to a rail or a wallet, a payment batch and a quote', async () => {
    const org = await organization();
    const product = await productOf(org.key, { annual_rate_bps: 100 });
    const savings = await openAccount(org.key, product.id, org.owner, '5000.00');
    const current = await walletOf(org.key, org.owner);
    for (const destination of [{ type: 'mobile_money', network: 'mpesa', phone: '+254712345678' }, current]) {
      const body = { source: savings.id, destination, amount: '100.00', currency: 'KES' };
      const refused = await api(t, 'POST', '/v1/transfers', {
        key: org.key,
        body,
        headers: { 'idempotency-key': `savings-send-${typeof destination}` },
      });
      expect(refused.statusCode, refused.body).toBe(422);
      expect(refused.data).toMatchObject({ code: 'savings_account_cannot_send', param: 'source' });
      const quote = await api(t, 'POST', '/v1/transfers/quote', { key: org.key, body });
      expect(quote.statusCode).toBe(422);
      expect(quote.data.code).toBe('savings_account_cannot_send');
    }
    const batch = await api(t, 'POST', '/v1/payment-batches', {
      key: org.key,
      body: {
        source: savings.id,
        currency: 'KES',
        reference: 'from-savings',
        items: [
          {
            reference: 'a',
            destination: { type: 'mobile_money', network: 'mpesa', phone: '+254712345678' },
            amount: '10.00',
          },
        ],
      },
    });
    expect(batch.statusCode, batch.body).toBe(422);
    expect(batch.data).toMatchObject({ code: 'savings_account_cannot_send', param: 'source' });
    // Money comes in by an ordinary transfer.
    const payer = await walletOf(org.key, org.owner, '300.00');
    const deposit = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: { source: payer, destination: savings.id, amount: '300.00', currency: 'KES' },
    });
    expect(deposit.statusCode, deposit.body).toBe(201);
    expect((await account(org.key, savings.id)).balance).toBe('5300.00');
    // The database refuses such a transfer whoever writes it.
    await expect(
      t.db.store.query(
        `INSERT INTO transfers (id, organization_id, direction, source_wallet_id, destination, amount_minor, currency,
           rail, status, ledger_state, created_at, updated_at)
         VALUES ('tr_savings', $1, 'outbound', $2, '{}'::jsonb, 1, 'KES', 'internal', 'pending', 'pending', now(), now())`,
        [org.organizationId, savings.id],
      ),
    ).rejects.toThrow(/savings account/);
  });

  it('withdraws by the rules: the owner’s wallets only, the minimum balance, and two at once', async () => {
    const org = await organization();
    const product = await productOf(org.key, { annual_rate_bps: 300, minimum_balance: '1000.00' });
    const savings = await openAccount(org.key, product.id, org.owner, '5000.00');
    const mine = await walletOf(org.key, org.owner);
    const stranger = await walletOf(org.key, await createCustomer(t, org.key, 'Someone Else'));
    const withdraw = (body: Record<string, unknown>) =>
      api(t, 'POST', `/v1/savings-accounts/${savings.id}/withdrawals`, { key: org.key, body });

    const elsewhere = await withdraw({ destination: stranger, amount: '10.00' });
    expect(elsewhere.statusCode).toBe(422);
    expect(elsewhere.data).toMatchObject({
      code: 'savings_withdrawal_refused',
      param: 'destination',
      reason: 'destination_not_owner',
    });
    const below = await withdraw({ destination: mine, amount: '4000.01' });
    expect(below.statusCode).toBe(422);
    expect(below.data).toMatchObject({ code: 'savings_withdrawal_refused', reason: 'below_minimum_balance' });
    const tooMuch = await withdraw({ destination: mine, amount: '5000.01' });
    expect(tooMuch.statusCode).toBe(422);
    expect(tooMuch.data.code).toBe('insufficient_funds');

    // Two withdrawals at once that each fit alone but not together: one is refused.
    const both = await Promise.all([
      withdraw({ destination: mine, amount: '3000.00' }),
      withdraw({ destination: mine, amount: '3000.00' }),
    ]);
    expect(both.map((r) => r.statusCode).sort()).toEqual([201, 422]);
    const done = both.find((r) => r.statusCode === 201)?.data;
    expect(done).toMatchObject({
      object: 'savings_withdrawal',
      amount: '3000.00',
      penalty: '0.00',
      destination: mine,
    });
    const events = await api(t, 'GET', '/v1/events?type=savings.withdrawal.completed', { key: org.key });
    expect(events.data.data.map((e: { resource_id: string; data: { id: string } }) => e.data.id)).toEqual([
      done.id,
    ]);
    // Everything may go: the minimum binds only what stays.
    const rest = await withdraw({ destination: mine, amount: '2000.00' });
    expect(rest.statusCode, rest.body).toBe(201);
    expect((await account(org.key, savings.id)).balance).toBe('0.00');
    expect((await api(t, 'GET', `/v1/wallets/${mine}/balance`, { key: org.key })).data.current).toBe(
      '5000.00',
    );
    await expectLedgerHealthy(t);
  });

  it('withdraws from a notice account only under a notice whose period has run, once', async () => {
    const org = await organization();
    const product = await productOf(org.key, { annual_rate_bps: 600, access: 'notice', notice_days: 30 });
    const savings = await openAccount(org.key, product.id, org.owner, '2000.00');
    const mine = await walletOf(org.key, org.owner);
    const withdraw = (body: Record<string, unknown>) =>
      api(t, 'POST', `/v1/savings-accounts/${savings.id}/withdrawals`, { key: org.key, body });

    expect((await withdraw({ destination: mine, amount: '100.00' })).data.reason).toBe('notice_required');
    const given = await api(t, 'POST', `/v1/savings-accounts/${savings.id}/notices`, {
      key: org.key,
      body: { amount: '500.00' },
    });
    expect(given.statusCode, given.body).toBe(201);
    const now = await today(org.key);
    expect(given.data).toMatchObject({ given_on: now, available_on: addDays(now, 30), status: 'open' });
    const early = await withdraw({ destination: mine, amount: '500.00', notice: given.data.id });
    expect(early.statusCode).toBe(422);
    expect(early.data).toMatchObject({ reason: 'notice_period_running', param: 'notice' });

    await advance(org.key, 30);
    const over = await withdraw({ destination: mine, amount: '500.01', notice: given.data.id });
    expect(over.data.reason).toBe('amount_exceeds_notice');
    const paid = await withdraw({ destination: mine, amount: '500.00', notice: given.data.id });
    expect(paid.statusCode, paid.body).toBe(201);
    expect(paid.data.notice).toBe(given.data.id);
    const reused = await withdraw({ destination: mine, amount: '1.00', notice: given.data.id });
    expect(reused.data.reason).toBe('notice_not_open');
    const notices = await api(t, 'GET', `/v1/savings-accounts/${savings.id}/notices`, { key: org.key });
    expect(notices.data.data[0]).toMatchObject({ id: given.data.id, status: 'used' });

    const instant = await productOf(org.key, { annual_rate_bps: 1 });
    const other = await openAccount(org.key, instant.id, org.owner);
    const noNotice = await api(t, 'POST', `/v1/savings-accounts/${other.id}/notices`, {
      key: org.key,
      body: { amount: '1.00' },
    });
    expect(noNotice.statusCode).toBe(422);
    expect(noNotice.data.reason).toBe('notice_not_applicable');
  });

  it('charges a fixed-term account’s early-withdrawal penalty to fee income until it matures', async () => {
    const org = await organization();
    const product = await productOf(org.key, {
      annual_rate_bps: 800,
      access: 'fixed_term',
      term_days: 90,
      early_withdrawal_penalty_bps: 250,
    });
    const savings = await openAccount(org.key, product.id, org.owner, '10000.00');
    expect(savings.matures_on).toBe(addDays(savings.opened_on, 90));
    const mine = await walletOf(org.key, org.owner);
    const early = await api(t, 'POST', `/v1/savings-accounts/${savings.id}/withdrawals`, {
      key: org.key,
      body: { destination: mine, amount: '1000.01' },
    });
    expect(early.statusCode, early.body).toBe(201);
    // 2.5 % of 1000.01 is 25.00025: rounded up to 25.01 (a penalty never rounds down).
    expect(early.data).toMatchObject({ amount: '1000.01', penalty: '25.01' });
    expect((await account(org.key, savings.id)).balance).toBe('8974.98');
    const income = await api(t, 'GET', '/v1/ledger/accounts?kind=fee_income', { key: org.key });
    expect(income.statusCode, income.body).toBe(200);
    expect(income.data.data[0]).toMatchObject({ currency: 'KES' });

    await advance(org.key, 90);
    const matured = await api(t, 'POST', `/v1/savings-accounts/${savings.id}/withdrawals`, {
      key: org.key,
      body: { destination: mine, amount: '1000.00' },
    });
    expect(matured.statusCode, matured.body).toBe(201);
    expect(matured.data.penalty).toBe('0.00');
    await expectLedgerHealthy(t);
  });

  it('checks a product’s terms field by field', async () => {
    const org = await organization();
    for (const [body, param] of [
      [{ access: 'notice' }, 'notice_days'],
      [{ access: 'instant', notice_days: 5 }, 'notice_days'],
      [{ access: 'fixed_term', term_days: 30 }, 'early_withdrawal_penalty_bps'],
      [{ annual_rate_bps: 10_001 }, 'annual_rate_bps'],
      [{ day_count: 'actual_actual' }, 'day_count'],
      [{ minimum_balance: '1.001' }, 'minimum_balance'],
    ] as const) {
      const refused = await api(t, 'POST', '/v1/savings-products', {
        key: org.key,
        body: {
          name: 'P',
          currency: 'KES',
          day_count: 'actual_360',
          access: 'instant',
          annual_rate_bps: 1,
          ...(body as Record<string, unknown>),
        },
      });
      expect(refused.statusCode, JSON.stringify(body)).toBe(400);
      expect(refused.data.param, JSON.stringify(body)).toBe(param);
    }
  });
});
