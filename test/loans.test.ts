/**
 * Lending through HTTP with the sandbox test clock, on both backends: a loan over a simulated year repaid
 * automatically on its due dates (balances exact to the unit); a missed instalment going into arrears with
 * days past due, buckets and penalty, then a partial repayment allocated penalty first, then a write-off;
 * decisions by the policy and its approval; and the races (two disbursements, a manual repayment against the
 * due date's collection). The ledger verifies clean after each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAmount, parseAmount } from '../src/domain/money.ts';
import { verifyLedger } from '../src/modules/ledger/useCases/verify.ts';
import { arrearsOn, penaltyOwed } from '../src/modules/lending/domain/balances.ts';
import type { Instalment, LoanTerms } from '../src/modules/lending/domain/loans.ts';
import { computeSchedule } from '../src/modules/lending/domain/schedule.ts';
import { daysAfter } from '../src/modules/testClock/domain.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

const KES = (minor: bigint) => formatAmount(minor, 'KES');
const minor = (text: string) => parseAmount(text, 'KES', 'amount');

const TERMS = {
  currency: 'KES',
  interest_rate_bps: 2400,
  term_months: 12,
  amortisation: 'declining_balance',
  origination_fee_bps: 100,
  grace_period_months: 1,
  penalty_rate_bps: 3650,
  min_principal: '100.00',
  max_principal: '50000.00',
};

function termsOf(body: typeof TERMS): LoanTerms {
  return {
    currency: 'KES',
    interestRateBps: body.interest_rate_bps,
    termMonths: body.term_months,
    amortisation: body.amortisation as LoanTerms['amortisation'],
    originationFeeBps: body.origination_fee_bps,
    gracePeriodMonths: body.grace_period_months,
    penaltyRateBps: body.penalty_rate_bps,
  };
}

describe.each(BACKENDS)('lending on %s', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    await t.close();
  });

  async function productFor(org: TestOrganization, body: typeof TERMS = TERMS): Promise<string> {
    const created = await api(t, 'POST', '/v1/loan-products', {
      key: org.key,
      body: { name: 'Biashara', ...body },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.data.id;
  }

  async function disbursedLoan(org: TestOrganization, principal: string, funding: string, body = TERMS) {
    const product = await productFor(org, body);
    const wallet = await fundedWallet(t, funding, 'KES', org.key);
    const applied = await api(t, 'POST', '/v1/loans', { key: org.key, body: { product, wallet, principal } });
    expect(applied.statusCode, applied.body).toBe(201);
    expect(applied.data).toMatchObject({
      status: 'approved',
      decision: { decision: 'allow', rule: 'default' },
    });
    const disbursed = await api(t, 'POST', `/v1/loans/${applied.data.id}/disburse`, { key: org.key });
    expect(disbursed.statusCode, disbursed.body).toBe(200);
    return { loan: disbursed.data, wallet, product };
  }

  const advance = (org: TestOrganization, days: number) =>
    api(t, 'POST', '/v1/sandbox/clock', { key: org.key, body: { advance_by_days: days } });
  const loanOf = async (org: TestOrganization, id: string) =>
    (await api(t, 'GET', `/v1/loans/${id}`, { key: org.key })).data;
  const accountNet = async (org: TestOrganization, kind: string) => {
    const page = await api(t, 'GET', `/v1/ledger/accounts?kind=${kind}&currency=KES`, { key: org.key });
    return page.data.data[0]?.net_posted ?? '0.00';
  };
  /** Moves everything but `keep` out of the wallet, as a borrower spending the loan would. */
  async function spendAllBut(org: TestOrganization, wallet: string, keep: bigint) {
    const available = minor((await balanceOf(t, wallet, org.key)).available);
    const sink = await fundedWallet(t, '0', 'KES', org.key);
    const spent = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: {
        source: wallet,
        destination: { type: 'wallet', wallet: sink },
        amount: KES(available - keep),
        currency: 'KES',
      },
    });
    expect(spent.statusCode, spent.body).toBe(201);
  }

  it('a declining-balance loan over a simulated year, repaid on its due dates, ends paid off to the unit', async () => {
    const org = await newOrganization(t);
    const { loan, wallet } = await disbursedLoan(org, '12000.00', '5000.00');
    const expected = computeSchedule(termsOf(TERMS), minor('12000.00'), loan.disbursed_on);
    expect(loan.schedule).toEqual(
      expected.map((i) =>
        expect.objectContaining({
          number: i.number,
          due_date: i.dueDate,
          principal: KES(i.principalMinor),
          interest: KES(i.interestMinor),
          fee: KES(i.feeMinor),
          status: 'upcoming',
        }),
      ),
    );
    expect(loan.schedule[0].principal).toBe('0.00'); // the grace month pays interest only
    expect(loan.schedule[0].fee).toBe('120.00');
    expect((await balanceOf(t, wallet, org.key)).available).toBe('17000.00');
    expect(await accountNet(org, 'loan_receivable')).toBe('-12000.00');

    const half = await advance(org, 200);
    expect(half.statusCode, half.body).toBe(200);
    const midway = await loanOf(org, loan.id);
    expect(midway).toMatchObject({ status: 'active', arrears: { days_past_due: 0, bucket: 'current' } });
    const paidSoFar = expected.filter((i) => i.dueDate <= half.data.today);
    expect(midway.schedule.filter((i: { status: string }) => i.status === 'paid')).toHaveLength(
      paidSoFar.length,
    );

    expect((await advance(org, 170)).statusCode).toBe(200);
    const ended = await loanOf(org, loan.id);
    const sum = (f: (i: (typeof expected)[number]) => bigint) => expected.reduce((s, i) => s + f(i), 0n);
    const interest = sum((i) => i.interestMinor);
    const total = sum((i) => i.principalMinor + i.interestMinor + i.feeMinor);
    expect(ended).toMatchObject({
      status: 'paid_off',
      paid: { principal: '12000.00', interest: KES(interest), fee: '120.00', penalty: '0.00' },
      outstanding: { total: '0.00' },
      arrears: { penalty_accrued: '0.00' },
    });
    expect((await balanceOf(t, wallet, org.key)).available).toBe(KES(minor('17000.00') - total));
    expect(await accountNet(org, 'loan_receivable')).toBe('0.00');
    expect(await accountNet(org, 'loan_interest_income')).toBe(KES(interest));
    expect(await accountNet(org, 'loan_fee_income')).toBe('120.00');

    const repayments = (await api(t, 'GET', `/v1/loans/${loan.id}/repayments?limit=100`, { key: org.key }))
      .data.data;
    expect(repayments).toHaveLength(12);
    expect(repayments.every((r: { source: string }) => r.source === 'automatic')).toBe(true);
    expect(repayments.map((r: { day: string }) => r.day).sort()).toEqual(expected.map((i) => i.dueDate));
    const types = (await api(t, 'GET', '/v1/events?limit=100', { key: org.key })).data.data
      .map((e: { type: string }) => e.type)
      .filter((type: string) => type.startsWith('loan.'));
    expect(types.filter((type: string) => type === 'loan.repayment_received')).toHaveLength(12);
    for (const type of ['loan.applied', 'loan.approved', 'loan.disbursed', 'loan.paid_off']) {
      expect(types).toContain(type);
    }
    expect(types).not.toContain('loan.overdue');
    await expectLedgerHealthy(t);
    // ledger verify ties the lending accounts to the loans: a repayment record the ledger lacks is named.
    await t.db.store.query('ALTER TABLE loan_repayments DISABLE TRIGGER loan_repayments_append_only');
    try {
      await t.db.store.query(
        'UPDATE loan_repayments SET interest_minor = interest_minor + 1, amount_minor = amount_minor + 1 WHERE id = $1',
        [repayments[0].id],
      );
      expect((await verifyLedger(t.deps.store)).map((v) => v.invariant)).toEqual([
        'loan_accounts_match_loans',
      ]);
    } finally {
      await t.db.store.query(
        'UPDATE loan_repayments SET interest_minor = interest_minor - 1, amount_minor = amount_minor - 1 WHERE id = $1',
        [repayments[0].id],
      );
      await t.db.store.query('ALTER TABLE loan_repayments ENABLE TRIGGER loan_repayments_append_only');
    }
    await expectLedgerHealthy(t);
  });

  it('a missed instalment goes into arrears, accrues penalty by the day, is repaid penalty first, and is written off', async () => {
    const org = await newOrganization(t);
    const flat = { ...TERMS, amortisation: 'flat', grace_period_months: 0 };
    const { loan, wallet } = await disbursedLoan(org, '6000.00', '0', flat);
    await spendAllBut(org, wallet, 0n);
    const schedule: Instalment[] = computeSchedule(termsOf(flat), minor('6000.00'), loan.disbursed_on).map(
      (i) => ({
        ...i,
        principalPaidMinor: 0n,
        interestPaidMinor: 0n,
        feePaidMinor: 0n,
      }),
    );
    const first = schedule[0] as Instalment;

    const late = await advance(org, 45);
    expect(late.statusCode, late.body).toBe(200);
    const today = late.data.today;
    // Nothing was collected: the penalty is the exact running total of each overdue day's principal and interest.
    const basis = daysAfter(loan.disbursed_on, today).reduce(
      (s, d) => s + arrearsOn(schedule, d).penaltyBaseMinor,
      0n,
    );
    const penalty = penaltyOwed(basis, flat.penalty_rate_bps);
    expect(penalty > 0n).toBe(true);
    const dpd = arrearsOn(schedule, today).daysPastDue;
    expect(dpd).toBeGreaterThanOrEqual(14);
    const inArrears = await loanOf(org, loan.id);
    expect(inArrears).toMatchObject({
      status: 'active',
      arrears: {
        days_past_due: dpd,
        bucket: 'dpd_1_30',
        overdue: KES(first.principalMinor + first.interestMinor + first.feeMinor),
        penalty_accrued: KES(penalty),
      },
      outstanding: { penalty: KES(penalty) },
    });
    expect(inArrears.schedule[0].status).toBe('overdue');

    expect((await advance(org, 30)).statusCode).toBe(200);
    const worse = await loanOf(org, loan.id);
    expect(worse.arrears).toMatchObject({ days_past_due: dpd + 30, bucket: 'dpd_31_60' });
    const overdue = (await api(t, 'GET', '/v1/events?type=loan.overdue', { key: org.key })).data.data;
    expect(overdue.map((e: { data: { arrears_bucket: string } }) => e.data.arrears_bucket)).toEqual([
      'dpd_31_60',
      'dpd_1_30',
    ]);

    // A partial repayment pays the penalty, then the first instalment's fee, interest, principal.
    const penaltyNow = minor(worse.outstanding.penalty);
    const part = penaltyNow + first.feeMinor + first.interestMinor + 100n;
    await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, { key: org.key, body: { amount: KES(part) } });
    const repaid = await api(t, 'POST', `/v1/loans/${loan.id}/repayments`, {
      key: org.key,
      body: { amount: KES(part) },
      headers: { 'idempotency-key': `repay-${loan.id}` },
    });
    expect(repaid.statusCode, repaid.body).toBe(201);
    expect(repaid.data).toMatchObject({
      source: 'manual',
      amount: KES(part),
      allocation: {
        penalty: KES(penaltyNow),
        fee: KES(first.feeMinor),
        interest: KES(first.interestMinor),
        principal: '1.00',
      },
    });
    const replay = await api(t, 'POST', `/v1/loans/${loan.id}/repayments`, {
      key: org.key,
      body: { amount: KES(part) },
      headers: { 'idempotency-key': `repay-${loan.id}` },
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const tooMuch = await api(t, 'POST', `/v1/loans/${loan.id}/repayments`, {
      key: org.key,
      body: { amount: '100000.00' },
    });
    expect(tooMuch.statusCode).toBe(422);
    expect(tooMuch.data).toMatchObject({ code: 'repayment_exceeds_outstanding', param: 'amount' });
    expect(await accountNet(org, 'loan_penalty_income')).toBe(KES(penaltyNow));

    // Written off by an operator: the principal still owed becomes a loss through the ledger.
    const integrator = (
      await api(t, 'POST', `/v1/loans/${loan.id}/write-off`, {
        key: await (async () => (await org.member(['viewer'])).key)(),
        body: { reason: 'borrower unreachable' },
      })
    ).statusCode;
    expect(integrator).toBe(403);
    const writtenOff = await api(t, 'POST', `/v1/loans/${loan.id}/write-off`, {
      key: org.key,
      body: { reason: 'borrower unreachable for 75 days' },
    });
    expect(writtenOff.statusCode, writtenOff.body).toBe(200);
    const principalLeft = minor('6000.00') - 100n;
    expect(writtenOff.data).toMatchObject({
      status: 'written_off',
      written_off: KES(principalLeft),
      write_off_reason: 'borrower unreachable for 75 days',
      outstanding: { total: '0.00' },
    });
    expect(await accountNet(org, 'loan_loss')).toBe(KES(-principalLeft));
    expect(await accountNet(org, 'loan_receivable')).toBe('0.00');
    const evidence = await api(t, 'GET', '/v1/evidence?kind=loan.write_off', { key: org.key });
    expect(evidence.data.data[0]?.data).toMatchObject({
      loan_id: loan.id,
      principal_written_off: KES(principalLeft),
    });
    const again = await api(t, 'POST', `/v1/loans/${loan.id}/write-off`, {
      key: org.key,
      body: { reason: 'again' },
    });
    expect(again.statusCode).toBe(409);
    // The day work leaves a written-off loan alone.
    expect((await advance(org, 30)).statusCode).toBe(200);
    expect((await loanOf(org, loan.id)).status).toBe('written_off');
    await expectLedgerHealthy(t);
  });

  it('the policy decides an application: denied, or approved through its approval', async () => {
    const org = await newOrganization(t);
    const put = await api(t, 'PUT', '/v1/policies', {
      key: org.key,
      body: {
        rules: [
          {
            id: 'too_big',
            applies_to: 'loan',
            match: { amount: [{ currency: 'KES', gte: '20000.00' }] },
            action: 'deny',
          },
          {
            id: 'big_loans',
            applies_to: 'loan',
            match: { amount: [{ currency: 'KES', gte: '1000.00' }] },
            action: 'require_approval',
            approval: { quorum: 1, roles: ['approver'] },
          },
        ],
      },
    });
    expect(put.statusCode, put.body).toBe(200);
    const product = await productFor(org);
    const wallet = await fundedWallet(t, '0', 'KES', org.key);
    const apply = (principal: string) =>
      api(t, 'POST', '/v1/loans', { key: org.key, body: { product, wallet, principal } });

    const denied = await apply('25000.00');
    expect(denied.data).toMatchObject({
      status: 'rejected',
      status_reason: 'policy_denied',
      decision: { rule: 'too_big' },
    });
    const small = await apply('500.00');
    expect(small.data).toMatchObject({
      status: 'approved',
      decision: { decision: 'allow', rule: 'default' },
    });
    const outOfBounds = await apply('50.00');
    expect(outOfBounds.statusCode).toBe(400);
    expect(outOfBounds.data.param).toBe('principal');

    const waiting = await apply('5000.00');
    expect(waiting.data).toMatchObject({ status: 'pending_approval', decision: { rule: 'big_loans' } });
    const early = await api(t, 'POST', `/v1/loans/${waiting.data.id}/disburse`, { key: org.key });
    expect(early.statusCode).toBe(409);
    const approver = await org.member(['approver']);
    const voted = await api(t, 'POST', `/v1/approvals/${waiting.data.approval}/approve`, {
      key: approver.key,
      body: {},
    });
    expect(voted.statusCode, voted.body).toBe(200);
    expect(voted.data).toMatchObject({ status: 'approved', resource: { type: 'loan', id: waiting.data.id } });
    expect((await loanOf(org, waiting.data.id)).status).toBe('approved');
    const rejectedLater = await apply('2000.00');
    const rejecter = await org.member(['approver']);
    await api(t, 'POST', `/v1/approvals/${rejectedLater.data.approval}/reject`, {
      key: rejecter.key,
      body: {},
    });
    expect(await loanOf(org, rejectedLater.data.id)).toMatchObject({
      status: 'rejected',
      status_reason: 'approval_rejected',
    });
    // Withdrawn while it waits: its approval is canceled with it; an end is final.
    const withdrawn = await apply('3000.00');
    const canceled = await api(t, 'POST', `/v1/loans/${withdrawn.data.id}/cancel`, { key: org.key });
    expect(canceled.statusCode, canceled.body).toBe(200);
    expect(canceled.data).toMatchObject({ status: 'canceled', status_reason: 'canceled' });
    expect(
      (await api(t, 'GET', `/v1/approvals/${withdrawn.data.approval}`, { key: org.key })).data.status,
    ).toBe('canceled');
    expect((await api(t, 'POST', `/v1/loans/${withdrawn.data.id}/cancel`, { key: org.key })).statusCode).toBe(
      409,
    );
    expect(
      (await api(t, 'POST', `/v1/loans/${withdrawn.data.id}/disburse`, { key: org.key })).statusCode,
    ).toBe(409);
    const evidence = await api(t, 'GET', '/v1/evidence?kind=loan.decision', { key: org.key });
    expect(evidence.data.data).toHaveLength(5);
  });

  it('disburses once when asked twice at once, and a manual repayment racing the due date takes the money once', async () => {
    const org = await newOrganization(t);
    const product = await productFor(org, { ...TERMS, grace_period_months: 0, origination_fee_bps: 0 });
    const wallet = await fundedWallet(t, '0', 'KES', org.key);
    const applied = await api(t, 'POST', '/v1/loans', {
      key: org.key,
      body: { product, wallet, principal: '1200.00' },
    });
    const both = await Promise.all([
      api(t, 'POST', `/v1/loans/${applied.data.id}/disburse`, { key: org.key }),
      api(t, 'POST', `/v1/loans/${applied.data.id}/disburse`, { key: org.key }),
    ]);
    expect(both.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect((await balanceOf(t, wallet, org.key)).available).toBe('1200.00');
    const loan = (both.find((r) => r.statusCode === 200) as (typeof both)[number]).data;

    const instalment = minor(loan.schedule[0].total);
    await spendAllBut(org, wallet, instalment);
    const clock = (await api(t, 'GET', '/v1/sandbox/clock', { key: org.key })).data;
    const dueAt = `${loan.schedule[0].due_date}T${clock.now.slice(11)}`;
    const [manual, moved] = await Promise.all([
      api(t, 'POST', `/v1/loans/${loan.id}/repayments`, { key: org.key, body: { amount: KES(instalment) } }),
      api(t, 'POST', '/v1/sandbox/clock', { key: org.key, body: { advance_to: dueAt } }),
    ]);
    expect(moved.statusCode, moved.body).toBe(200);
    expect([201, 422]).toContain(manual.statusCode);
    const after = await loanOf(org, loan.id);
    expect(after.schedule[0]).toMatchObject({ status: 'paid', paid: KES(instalment) });
    expect(after.paid.principal).toBe(after.schedule[0].principal);
    expect((await balanceOf(t, wallet, org.key)).available).toBe('0.00');
    const repayments = (await api(t, 'GET', `/v1/loans/${loan.id}/repayments`, { key: org.key })).data.data;
    expect(repayments).toHaveLength(1);
    expect(repayments[0].source).toBe(manual.statusCode === 201 ? 'manual' : 'automatic');
    await expectLedgerHealthy(t);
  });
});
