/**
 * Fees through HTTP, on both backends: the schedule as versioned data (admins change it, each change a new
 * version and evidence, invalid rules refused naming the field); quotes are what a transfer is then charged;
 * the fee is held with the amount, posted to the organization's fee income in the same entry as the settle,
 * released whole on a failure or cancel, given back on a return; insufficient funds counts the fee, also
 * when two transfers race; wallet-to-wallet transfers and payment batch items pay fees too; the transfer, its
 * events and its receipt show the fee; the ledger verifies after each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPaymentBatchPass } from '../src/modules/paymentBatches/workers.ts';
import { LedgerWriter } from '../src/modules/transfers/useCases/posting/writer.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, drainRails, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

/** 1.5 % of mobile money in KES, at least 10.00 and at most 300.00; 5.00 per wallet-to-wallet transfer. */
const STANDARD_RULES = [
  {
    id: 'mm_kes',
    rail: 'mobile_money',
    currency: 'KES',
    type: 'percentage',
    percent_bps: 150,
    min: '10.00',
    max: '300.00',
  },
  { id: 'internal_kes', rail: 'internal', currency: 'KES', type: 'fixed', fixed: '5.00' },
  {
    id: 'bank_kes',
    rail: 'bank',
    currency: 'KES',
    type: 'tiered',
    tiers: [
      { up_to: '1000.00', fixed: '25.00' },
      { up_to: '10000.00', fixed: '10.00', percent_bps: 50 },
      { percent_bps: 30 },
    ],
  },
];

interface Posting {
  account: string;
  side: string;
  phase: string;
  amount: string;
}

describe.each(BACKENDS)('fees on %s', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    await t.close();
  });

  const putSchedule = (org: TestOrganization, body: unknown, key = org.key) =>
    api(t, 'PUT', '/v1/fee-schedule', { key, body });
  const withRules = async (rules: unknown[] = STANDARD_RULES) => {
    const org = await newOrganization(t);
    const put = await putSchedule(org, { rules });
    expect(put.statusCode, put.body).toBe(200);
    return { org, version: put.data.version as number };
  };
  const payout = (source: string, amount: string, phone = '+254711000333') => ({
    source,
    destination: mobileMoney(phone),
    amount,
    currency: 'KES',
  });
  const transfer = (org: TestOrganization, body: unknown, headers: Record<string, string> = {}) =>
    api(t, 'POST', '/v1/transfers', { key: org.key, body, headers });
  const quote = (org: TestOrganization, body: unknown, headers: Record<string, string> = {}) =>
    api(t, 'POST', '/v1/transfers/quote', { key: org.key, body, headers });
  const drive = (org: TestOrganization, id: string, action: 'settle' | 'fail' | 'return') =>
    api(t, 'POST', `/v1/sandbox/transfers/${id}/${action}`, { key: org.key });
  const entriesOf = async (org: TestOrganization, transferId: string) =>
    (await api(t, 'GET', `/v1/ledger/entries?transfer=${transferId}`, { key: org.key })).data.data as {
      id: string;
      kind: string;
      hold_entry: string | null;
      postings: Posting[];
    }[];
  const feeIncome = async (org: TestOrganization) => {
    const accounts = (await api(t, 'GET', '/v1/ledger/accounts?kind=fee_income', { key: org.key })).data.data;
    expect(accounts.length).toBeLessThanOrEqual(1);
    return accounts[0] as { id: string; net_posted: string; net_pending: string; rail: string } | undefined;
  };

  it('starts at version 1 with no fees; each change is a new version, recorded as evidence; admins only', async () => {
    const org = await newOrganization(t);
    const initial = await api(t, 'GET', '/v1/fee-schedule', { key: org.key });
    expect(initial.data).toMatchObject({ object: 'fee_schedule', version: 1, rules: [] });
    const wallet = await fundedWallet(t, '100.00', 'KES', org.key);
    const free = await transfer(org, payout(wallet, '10.00'));
    expect(free.statusCode, free.body).toBe(201);
    expect(free.data).toMatchObject({ fee: '0.00', fee_schedule: { version: 1, rule: null } });

    const v2 = await putSchedule(org, { rules: STANDARD_RULES });
    expect(v2.statusCode, v2.body).toBe(200);
    expect(v2.data).toMatchObject({
      object: 'fee_schedule',
      version: 2,
      created_by: expect.stringMatching(/^key_/),
    });
    // Shown back in the stored form: every field of its type, amounts at the currency exponent.
    expect(v2.data.rules).toEqual([
      { ...STANDARD_RULES[0] },
      { ...STANDARD_RULES[1] },
      {
        ...STANDARD_RULES[2],
        tiers: [
          { up_to: '1000.00', fixed: '25.00', percent_bps: 0 },
          { up_to: '10000.00', fixed: '10.00', percent_bps: 50 },
          { fixed: '0.00', percent_bps: 30 },
        ],
      },
    ]);
    const conflict = await putSchedule(org, { rules: [], base_version: 1 });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.data).toMatchObject({ code: 'fee_schedule_version_conflict', param: 'base_version' });
    const v3 = await putSchedule(org, { rules: [STANDARD_RULES[1]], base_version: 2 });
    expect(v3.data.version).toBe(3);

    const versions = await api(t, 'GET', '/v1/fee-schedule/versions?limit=2', { key: org.key });
    expect(versions.data.data.map((s: { version: number }) => s.version)).toEqual([3, 2]);
    expect(versions.data).toMatchObject({ has_more: true, next_cursor: 2 });
    const older = await api(t, 'GET', '/v1/fee-schedule/versions?before_version=2', { key: org.key });
    expect(older.data.data.map((s: { version: number }) => s.version)).toEqual([1]);
    expect((await api(t, 'GET', '/v1/fee-schedule/versions/2', { key: org.key })).data.rules).toHaveLength(3);
    expect((await api(t, 'GET', '/v1/fee-schedule/versions/9', { key: org.key })).statusCode).toBe(404);
    // The transfer charged under version 1 still names it.
    expect(
      (await api(t, 'GET', `/v1/transfers/${free.data.id}`, { key: org.key })).data.fee_schedule,
    ).toEqual({
      version: 1,
      rule: null,
    });

    const evidence = await api(t, 'GET', '/v1/evidence?kind=fee_schedule.update', { key: org.key });
    expect(evidence.statusCode, evidence.body).toBe(200);
    expect(evidence.data.data.map((e: { data: { version: number } }) => e.data.version)).toEqual([3, 2]);
    expect(evidence.data.data[1].data).toMatchObject({ previous_version: 1, rules: v2.data.rules });

    // An integrator key (read and write) or a member without the admin role may read it, not change it.
    const initiator = await org.member(['initiator']);
    expect((await putSchedule(org, { rules: [] }, initiator.key)).statusCode).toBe(403);
    expect((await api(t, 'PUT', '/v1/fee-schedule', { body: { rules: [] } })).statusCode).toBe(403);
    expect((await api(t, 'GET', '/v1/fee-schedule', { key: initiator.key })).data.version).toBe(3);
    await expectLedgerHealthy(t);
  });

  it('refuses an invalid schedule naming the field at fault, and writes no version', async () => {
    const org = await newOrganization(t);
    const base = { id: 'r', rail: 'mobile_money', currency: 'KES' };
    const cases: [unknown, string, string][] = [
      [
        { rules: [{ ...base, type: 'percentage', percent_bps: 20_000 }] },
        'rules.0.percent_bps',
        'out_of_range',
      ],
      [{ rules: [{ ...base, type: 'fixed' }] }, 'rules.0.fixed', 'missing'],
      [{ rules: [{ ...base, type: 'fixed', fixed: '1.005' }] }, 'rules.0.fixed', 'too_precise'],
      [{ rules: [{ ...base, type: 'fixed', fixed: '1.00', min: '1.00' }] }, 'rules.0.min', 'unexpected'],
      [
        { rules: [{ ...base, currency: 'USD', type: 'fixed', fixed: '1.00' }] },
        'rules.0.currency',
        'unsupported_by_rail',
      ],
      [
        { rules: [{ ...base, type: 'percentage', percent_bps: 10, min: '9.00', max: '1.00' }] },
        'rules.0.max',
        'out_of_range',
      ],
      [
        {
          rules: [
            {
              ...base,
              type: 'tiered',
              tiers: [
                { up_to: '500.00', fixed: '5.00' },
                { up_to: '100.00', fixed: '1.00' },
                { percent_bps: 5 },
              ],
            },
          ],
        },
        'rules.0.tiers.1.up_to',
        'out_of_range',
      ],
      [
        {
          rules: [
            { ...base, type: 'fixed', fixed: '1.00' },
            { ...base, id: 's', type: 'fixed', fixed: '2.00' },
          ],
        },
        'rules.1.currency',
        'duplicate',
      ],
      [{ rules: [{ ...base, type: 'fixed', fixed: '1.00', extra: 1 }] }, 'rules.0.extra', 'unknown_field'],
      [{ rules: 'none' }, 'rules', 'invalid_type'],
    ];
    for (const [body, param, code] of cases) {
      const refused = await putSchedule(org, body);
      expect(refused.statusCode, JSON.stringify(body)).toBe(400);
      expect(refused.headers['content-type']).toContain('application/problem+json');
      expect(refused.data, JSON.stringify(body)).toMatchObject({ code: 'validation_error', param });
      expect(refused.data.errors[0], JSON.stringify(body)).toMatchObject({ param, code });
    }
    expect((await api(t, 'GET', '/v1/fee-schedule', { key: org.key })).data.version).toBe(1);
  });

  it('a quote is what the transfer is then charged, and the fee is posted with the settle in one entry', async () => {
    const { org, version } = await withRules();
    const wallet = await fundedWallet(t, '2000.00', 'KES', org.key);
    const body = { ...payout(wallet, '1000.00'), metadata: { order: '7' } };
    const quoted = await quote(org, body);
    expect(quoted.statusCode, quoted.body).toBe(200);
    expect(quoted.data).toEqual({
      object: 'transfer_quote',
      amount: '1000.00',
      fee: '15.00',
      total: '1015.00',
      currency: 'KES',
      rail: 'mobile_money',
      fee_schedule: { version, rule: 'mm_kes' },
    });
    // A quote creates nothing.
    expect((await api(t, 'GET', `/v1/transfers?wallet=${wallet}`, { key: org.key })).data.data).toHaveLength(
      1,
    );
    expect((await balanceOf(t, wallet, org.key)).available).toBe('2000.00');

    const created = await transfer(org, body);
    expect(created.statusCode, created.body).toBe(201);
    expect(created.data).toMatchObject({
      amount: quoted.data.amount,
      fee: quoted.data.fee,
      fee_schedule: quoted.data.fee_schedule,
    });
    // The hold covers amount and fee.
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({
      current: '2000.00',
      pending: '1015.00',
      available: '985.00',
    });
    const settled = await drive(org, created.data.id, 'settle');
    expect(settled.statusCode, settled.body).toBe(200);
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ current: '985.00', pending: '0.00' });

    const income = await feeIncome(org);
    expect(income).toMatchObject({ net_posted: '15.00', net_pending: '0.00', rail: 'internal' });
    const entries = await entriesOf(org, created.data.id);
    const hold = entries.find((e) => e.kind === 'hold');
    const post = entries.find((e) => e.kind === 'post');
    expect(entries).toHaveLength(2);
    const lines = (e: typeof post) =>
      (e?.postings ?? []).map((p) => [
        p.account === wallet ? 'wallet' : p.account === income?.id ? 'fees' : 'clearing',
        p.side,
        p.phase,
        p.amount,
      ]);
    expect(lines(hold)).toEqual([
      ['wallet', 'debit', 'pending', '1015.00'],
      ['clearing', 'credit', 'pending', '1000.00'],
      ['fees', 'credit', 'pending', '15.00'],
    ]);
    // The fee reaches fee income in the very entry that makes the transfer final.
    expect(post?.hold_entry).toBe(hold?.id);
    expect(lines(post)).toEqual([
      ['wallet', 'debit', 'posted', '1015.00'],
      ['clearing', 'credit', 'posted', '1000.00'],
      ['fees', 'credit', 'posted', '15.00'],
    ]);

    const events = await api(t, 'GET', `/v1/events?resource=${created.data.id}`, { key: org.key });
    expect(
      events.data.data.map((e: { type: string; data: { fee: string } }) => [e.type, e.data.fee]),
    ).toEqual([
      ['transfer.settled', '15.00'],
      ['transfer.created', '15.00'],
    ]);
    const receipt = await api(t, 'GET', `/v1/transfers/${created.data.id}/receipt`, { key: org.key });
    expect(receipt.data).toMatchObject({ amount: '1000.00', fee: '15.00', total: '1015.00' });
    const page = await api(t, 'GET', `/v1/transfers/${created.data.id}/receipt?format=html`, {
      key: org.key,
    });
    expect(page.body).toContain('<th scope="row">Fee</th><td>15.00 KES</td>');
    expect(page.body).toContain('<th scope="row">Total debited</th><td>1015.00 KES</td>');
    await expectLedgerHealthy(t);
  });

  it('quotes each rule type, and a rail with no rule at no fee; a quote honours its Idempotency-Key', async () => {
    const { org, version } = await withRules();
    const wallet = await fundedWallet(t, '10.00', 'KES', org.key);
    const fee = async (body: unknown) => {
      const answer = await quote(org, body);
      expect(answer.statusCode, answer.body).toBe(200);
      return [answer.data.fee, answer.data.total, answer.data.fee_schedule.rule];
    };
    // Percentage: its minimum, the rate, its maximum (funds are not a quote's concern).
    expect(await fee(payout(wallet, '100.00'))).toEqual(['10.00', '110.00', 'mm_kes']);
    expect(await fee(payout(wallet, '1235.00'))).toEqual(['18.53', '1253.53', 'mm_kes']); // 18.525 → 18.53, half up
    expect(await fee(payout(wallet, '50000.00'))).toEqual(['300.00', '50300.00', 'mm_kes']);
    // Tiers: each band's own charge, the bound inclusive.
    const bank = (amount: string) => ({
      source: wallet,
      destination: { type: 'bank_account', bank_code: '01', account_number: '12345678' },
      amount,
      currency: 'KES',
    });
    expect(await fee(bank('1000.00'))).toEqual(['25.00', '1025.00', 'bank_kes']);
    expect(await fee(bank('1000.01'))).toEqual(['15.00', '1015.01', 'bank_kes']); // 10.00 + 5.00005
    expect(await fee(bank('20000.00'))).toEqual(['60.00', '20060.00', 'bank_kes']);
    expect(
      await fee({ ...payout(wallet, '100.00'), destination: { type: 'till', till_number: '123456' } }),
    ).toEqual(['0.00', '100.00', null]);

    // Bad input is the same 400 or 404 as a transfer's, naming the field.
    const tooPrecise = await quote(org, payout(wallet, '1.001'));
    expect(tooPrecise.data).toMatchObject({ code: 'validation_error', param: 'amount' });
    const missing = await quote(org, payout('wallet_01kb0p9a1b2c3d4e5f6g7h8j9k', '1.00'));
    expect(missing.data).toMatchObject({ code: 'resource_missing', param: 'source' });

    // With a key, the first answer is replayed even once the schedule has changed; another body is a 422.
    const headers = { 'Idempotency-Key': `quote-${backend}` };
    const first = await quote(org, payout(wallet, '1000.00'), headers);
    expect(first.data.fee).toBe('15.00');
    expect((await putSchedule(org, { rules: [] })).statusCode).toBe(200);
    const replay = await quote(org, payout(wallet, '1000.00'), headers);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect((await quote(org, payout(wallet, '999.00'), headers)).data.code).toBe('idempotency_key_reused');
    const now = await quote(org, payout(wallet, '1000.00'));
    expect(now.data).toMatchObject({ fee: '0.00', fee_schedule: { version: version + 1, rule: null } });
  });

  it('insufficient funds counts the fee, and writes nothing', async () => {
    const { org } = await withRules();
    const wallet = await fundedWallet(t, '100.00', 'KES', org.key);
    // 91.00 + the minimum fee of 10.00 is more than the wallet has; 90.00 + 10.00 is exactly it.
    const refused = await transfer(org, payout(wallet, '91.00'));
    expect(refused.statusCode).toBe(422);
    expect(refused.data).toMatchObject({ code: 'insufficient_funds', param: 'amount' });
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '100.00', pending: '0.00' });
    const fits = await transfer(org, payout(wallet, '90.00'));
    expect(fits.statusCode, fits.body).toBe(201);
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '0.00', pending: '100.00' });
    await expectLedgerHealthy(t);
  });

  it('two transfers racing on one wallet whose amounts fit but fees do not: exactly one succeeds', async () => {
    const { org } = await withRules();
    const wallet = await fundedWallet(t, '100.00', 'KES', org.key);
    // 50.00 + 50.00 is the balance; with the 10.00 minimum fee each, only one fits.
    const answers = await Promise.all([
      transfer(org, payout(wallet, '50.00', '+254711000401')),
      transfer(org, payout(wallet, '50.00', '+254711000402')),
    ]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 422]);
    expect(answers.find((a) => a.statusCode === 422)?.data.code).toBe('insufficient_funds');
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '40.00', pending: '60.00' });
    await expectLedgerHealthy(t);
  });

  it('a failure or a cancel releases the whole hold, fee included', async () => {
    const { org } = await withRules();
    const wallet = await fundedWallet(t, '500.00', 'KES', org.key);
    const failing = await transfer(org, payout(wallet, '100.00'));
    const canceling = await transfer(org, payout(wallet, '200.00'));
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ pending: '320.00', available: '180.00' });
    expect((await drive(org, failing.data.id, 'fail')).data).toMatchObject({
      status: 'failed',
      fee: '10.00',
    });
    const canceled = await api(t, 'POST', `/v1/transfers/${canceling.data.id}/cancel`, { key: org.key });
    expect(canceled.data).toMatchObject({ status: 'canceled', fee: '10.00' });
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({
      current: '500.00',
      pending: '0.00',
      available: '500.00',
    });
    expect(await feeIncome(org)).toMatchObject({ net_posted: '0.00', net_pending: '0.00' });
    const voids = (await entriesOf(org, failing.data.id)).find((e) => e.kind === 'void');
    expect(voids?.postings.map((p) => [p.phase, p.amount])).toEqual([
      ['voided', '110.00'],
      ['voided', '100.00'],
      ['voided', '10.00'],
    ]);
    await expectLedgerHealthy(t);
  });

  it('a returned transfer gives the fee back with the amount', async () => {
    const { org } = await withRules();
    const wallet = await fundedWallet(t, '500.00', 'KES', org.key);
    const paid = await transfer(org, payout(wallet, '400.00'));
    expect((await drive(org, paid.data.id, 'settle')).statusCode).toBe(200);
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ current: '90.00' });
    expect((await feeIncome(org))?.net_posted).toBe('10.00');
    const returned = await drive(org, paid.data.id, 'return');
    expect(returned.statusCode, returned.body).toBe(200);
    expect(returned.data).toMatchObject({ status: 'returned', fee: '10.00' });
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ current: '500.00', available: '500.00' });
    expect((await feeIncome(org))?.net_posted).toBe('0.00');
    const reversal = (await entriesOf(org, paid.data.id)).find((e) => e.kind === 'reversal');
    expect(reversal?.postings.map((p) => [p.side, p.amount])).toEqual([
      ['debit', '400.00'],
      ['debit', '10.00'],
      ['credit', '410.00'],
    ]);
    await expectLedgerHealthy(t);
  });

  it('wallet-to-wallet transfers pay the fee their rule names, in their one direct entry', async () => {
    const { org } = await withRules();
    const source = await fundedWallet(t, '100.00', 'KES', org.key);
    const payee = await fundedWallet(t, '0', 'KES', org.key);
    const quoted = await quote(org, { source, destination: payee, amount: 20, currency: 'KES' });
    expect(quoted.data).toMatchObject({ fee: '5.00', total: '25.00', rail: 'internal' });
    const paid = await transfer(org, { source, destination: payee, amount: 20, currency: 'KES' });
    expect(paid.statusCode, paid.body).toBe(201);
    expect(paid.data).toMatchObject({
      status: 'settled',
      fee: '5.00',
      fee_schedule: { rule: 'internal_kes' },
    });
    expect((await balanceOf(t, source, org.key)).current).toBe('75.00');
    expect((await balanceOf(t, payee, org.key)).current).toBe('20.00');
    const entries = await entriesOf(org, paid.data.id);
    expect(entries.map((e) => [e.kind, e.postings.length])).toEqual([['direct', 3]]);
    expect((await feeIncome(org))?.net_posted).toBe('5.00');
    // Only what is left after the fee can go: 75.00 + 5.00 is too much.
    expect(
      (await transfer(org, { source, destination: payee, amount: '75.00', currency: 'KES' })).data.code,
    ).toBe('insufficient_funds');
    // The return takes the amount back from the payee and the fee from fee income.
    expect((await drive(org, paid.data.id, 'return')).statusCode).toBe(200);
    expect((await balanceOf(t, source, org.key)).current).toBe('100.00');
    expect((await balanceOf(t, payee, org.key)).current).toBe('0.00');
    expect((await feeIncome(org))?.net_posted).toBe('0.00');
    await expectLedgerHealthy(t);
  });

  it('payment batch items pay fees: decided at submission, held with the total, charged as decided', async () => {
    const { org, version } = await withRules();
    const writer = new LedgerWriter(t.deps, 1);
    const run = async () => {
      while ((await runPaymentBatchPass(t.deps, writer)) > 0) {}
    };
    const items = [
      { reference: 'a', destination: mobileMoney('+254711000501'), amount: '1000.00' },
      { reference: 'b', destination: mobileMoney('+254711000502'), amount: '100.00' },
    ];
    // 1,100.00 of items and 25.00 of fees (15.00 + the 10.00 minimum): a wallet with only the total is refused.
    const short = await fundedWallet(t, '1100.00', 'KES', org.key);
    const refused = await api(t, 'POST', '/v1/payment-batches', {
      key: org.key,
      body: { source: short, currency: 'KES', reference: `short-${backend}`, items },
    });
    expect(refused.statusCode, refused.body).toBe(202);
    expect(refused.data).toMatchObject({ total: '1100.00', fees: '25.00' });
    await run();
    const shortBatch = (await api(t, 'GET', `/v1/payment-batches/${refused.data.id}`, { key: org.key })).data;
    expect(shortBatch).toMatchObject({ status: 'failed', failure_code: 'insufficient_funds' });
    expect((await balanceOf(t, short, org.key)).available).toBe('1100.00');

    const wallet = await fundedWallet(t, '1125.00', 'KES', org.key);
    const accepted = await api(t, 'POST', '/v1/payment-batches', {
      key: org.key,
      body: { source: wallet, currency: 'KES', reference: `fees-${backend}`, items },
    });
    expect(accepted.statusCode, accepted.body).toBe(202);
    // The schedule changes before the batch runs: its items keep the fees decided at submission.
    expect((await putSchedule(org, { rules: [] })).statusCode).toBe(200);
    await run();
    const batch = (await api(t, 'GET', `/v1/payment-batches/${accepted.data.id}`, { key: org.key })).data;
    expect(batch).toMatchObject({ status: 'completed', total: '1100.00', fees: '25.00', reserved: '0.00' });
    const listed = (await api(t, 'GET', `/v1/payment-batches/${accepted.data.id}/items`, { key: org.key }))
      .data.data as { reference: string; fee: string; transfer: string }[];
    expect(listed.map((i) => [i.reference, i.fee])).toEqual([
      ['a', '15.00'],
      ['b', '10.00'],
    ]);
    for (const item of listed) {
      const paid = (await api(t, 'GET', `/v1/transfers/${item.transfer}`, { key: org.key })).data;
      expect(paid).toMatchObject({ fee: item.fee, fee_schedule: { version, rule: 'mm_kes' } });
    }
    expect(await balanceOf(t, wallet, org.key)).toMatchObject({ available: '0.00', pending: '1125.00' });
    await drainRails(t);
    await expectLedgerHealthy(t);
  });
});
