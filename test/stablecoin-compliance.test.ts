/**
 * Stablecoin compliance through HTTP: a deposit missing its required Travel Rule data held for review (an
 * operator clears it with the data and it is credited, or rejects it and it is owed back; decisions replay,
 * and two racing decide once); conversions counted against and checked by the tier limits (racing for the
 * last of a day included) and the AML rules (refusals recorded, conversions seen as wallet activity);
 * conversion fees from the fee schedule with their rounding, posted to fee income in the conversion's own
 * entry; `fee_schedule.updated`. The ledger and every evidence chain intact after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyEvidence } from '../src/app/evidence.ts';
import { runDepositWorkerOnce } from '../src/modules/stablecoins/workers.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, mobileMoney } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

const quietLog = () => {};
const ORIGINATOR = { name: 'Sender Exchange Client', account: '0xabc', national_id: 'A1234567' };

describe.each(BACKENDS)('stablecoin compliance on %s', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(async () => {
    await t.close();
  });

  const call = (
    org: TestOrganization,
    method: 'GET' | 'POST' | 'PUT' | 'PATCH',
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) =>
    api(t, method, url, {
      key: org.key,
      ...(body === undefined ? {} : { body }),
      ...(headers ? { headers } : {}),
    });
  const drainDeposits = async () => {
    for (let i = 0; i < 5; i++) if ((await runDepositWorkerOnce(t.deps, { log: quietLog })) === 0) return;
  };
  const wallets = async (org: TestOrganization, fiat: string, fund: string) => {
    const owner = (await call(org, 'POST', '/v1/customers', { type: 'individual', name: 'Wanjiru' })).data.id;
    const open = async (currency: string, amount: string) => {
      const w = await call(org, 'POST', '/v1/wallets', { owner, currency });
      if (amount !== '0') {
        const funded = await call(org, 'POST', `/v1/sandbox/wallets/${w.data.id}/fund`, { amount });
        expect(funded.statusCode, funded.body).toBe(201);
      }
      return w.data.id as string;
    };
    return { fiat: await open(fiat, fund), coin: await open('USDC', '0') };
  };
  const eventsOf = async (org: TestOrganization, type: string, field: string, id: string) =>
    ((await call(org, 'GET', `/v1/events?type=${type}&limit=100`)).data.data as any[]).filter(
      (e) => e.data[field] === id,
    );

  describe('deposits held for the Travel Rule', () => {
    /** A deposit of `amount` USDC to a fresh wallet, confirmed and looked at by the worker. */
    const confirmedDeposit = async (org: TestOrganization, amount: string, travelRule?: unknown) => {
      const { coin } = await wallets(org, 'KES', '0');
      const address = (
        await call(org, 'POST', `/v1/wallets/${coin}/deposit-addresses`, { network: 'ethereum' })
      ).data.address;
      const seen = await call(org, 'POST', '/v1/sandbox/chain/deposits', {
        network: 'ethereum',
        address,
        amount,
        confirmations: 12,
        ...(travelRule ? { travel_rule: travelRule } : {}),
      });
      expect(seen.statusCode, seen.body).toBe(201);
      await drainDeposits();
      return { wallet: coin, deposit: (await call(org, 'GET', `/v1/deposits/${seen.data.id}`)).data };
    };
    const reviewOf = async (org: TestOrganization, depositId: string) =>
      ((await call(org, 'GET', '/v1/reviews?kind=travel_rule&limit=100')).data.data as any[]).find(
        (r) => r.deposit === depositId,
      );
    // Reviews are decided by a person: a compliance officer's own key, one per organization.
    const officers = new Map<string, Promise<string>>();
    const officerOf = (org: TestOrganization) => {
      let officer = officers.get(org.name);
      if (!officer) {
        officer = org.member(['compliance']).then((m) => m.key);
        officers.set(org.name, officer);
      }
      return officer;
    };
    const decide = async (
      org: TestOrganization,
      reviewId: string,
      decision: 'clear' | 'reject',
      body: unknown = {},
      key?: string,
    ) =>
      api(t, 'POST', `/v1/reviews/${reviewId}/${decision}`, {
        key: await officerOf(org),
        body,
        ...(key ? { headers: { 'Idempotency-Key': key } } : {}),
      });

    it('below the threshold, or with the data, a deposit is credited as before', async () => {
      const org = await newOrganization(t);
      const small = await confirmedDeposit(org, '10.000000');
      expect(small.deposit).toMatchObject({ status: 'credited', travel_rule: null, held_at: null });
      const given = await confirmedDeposit(org, '5000.000000', { originator: ORIGINATOR });
      expect(given.deposit).toMatchObject({
        status: 'credited',
        travel_rule: { required: true, received: true },
      });
      expect((await balanceOf(t, given.wallet, org.key)).available).toBe('5000.000000');
    });

    it('holds one without the data; an operator clears it with the data and it is credited once', async () => {
      const org = await newOrganization(t);
      const { wallet, deposit } = await confirmedDeposit(org, '5000.000000');
      expect(deposit).toMatchObject({
        status: 'held_for_review',
        transfer: null,
        travel_rule: { required: true, received: false },
        held_at: expect.any(String),
      });
      expect((await balanceOf(t, wallet, org.key)).current).toBe('0.000000');
      // More observations of the chain do not move a held deposit; nor does a reorganisation.
      await call(org, 'POST', '/v1/sandbox/chain/advance', { network: 'ethereum', blocks: 5 });
      await drainDeposits();
      expect((await call(org, 'POST', `/v1/sandbox/chain/deposits/${deposit.id}/reorg`)).statusCode).toBe(
        409,
      );
      const review = await reviewOf(org, deposit.id);
      expect(review).toMatchObject({
        kind: 'travel_rule',
        status: 'open',
        transfer: null,
        wallet,
        findings: { reason: 'travel_rule_missing', amount: '5000.000000', tx_hash: deposit.tx_hash },
      });

      const bare = await decide(org, review.id, 'clear');
      expect(bare.statusCode).toBe(422);
      expect(bare.data).toMatchObject({ code: 'travel_rule_required', param: 'travel_rule' });
      const malformed = await decide(org, review.id, 'clear', { travel_rule: { originator: { name: 'X' } } });
      expect(malformed.statusCode).toBe(400);
      expect(malformed.data.param).toMatch(/^travel_rule\.originator/);

      const cleared = await decide(
        org,
        review.id,
        'clear',
        { travel_rule: { originator: ORIGINATOR } },
        'clear-1',
      );
      expect(cleared.statusCode, cleared.body).toBe(200);
      expect(cleared.data.status).toBe('cleared');
      const replay = await decide(
        org,
        review.id,
        'clear',
        { travel_rule: { originator: ORIGINATOR } },
        'clear-1',
      );
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toBe(cleared.body);
      expect((await decide(org, review.id, 'reject')).statusCode).toBe(409);

      const credited = (await call(org, 'GET', `/v1/deposits/${deposit.id}`)).data;
      expect(credited).toMatchObject({
        status: 'credited',
        transfer: expect.stringMatching(/^tr_/),
        travel_rule: { required: true, received: true },
      });
      expect(credited.travel_rule.reference).not.toBe(deposit.travel_rule.reference);
      expect((await balanceOf(t, wallet, org.key)).available).toBe('5000.000000');
      // The same inbound transfer every deposit is credited with.
      expect((await call(org, 'GET', `/v1/transfers/${credited.transfer}`)).data).toMatchObject({
        direction: 'inbound',
        rail: 'digital_asset',
        status: 'settled',
        status_reason: 'deposit',
        rail_reference: deposit.tx_hash,
      });
      for (const type of ['deposit.detected', 'deposit.held_for_review', 'deposit.credited']) {
        expect(await eventsOf(org, type, 'deposit_id', deposit.id), type).toHaveLength(1);
      }
      const records = async (kind: string) =>
        ((await call(org, 'GET', `/v1/evidence?kind=${kind}&limit=100`)).data.data as any[]).filter(
          (r) => r.data.deposit_id === deposit.id,
        );
      expect((await records('deposit.decision'))[0].data).toMatchObject({
        outcome: 'held_for_review',
        review_id: review.id,
      });
      const supplied = (await records('deposit.travel_rule')).find((r) => r.data.received === true);
      expect(supplied).toMatchObject({
        id: credited.travel_rule.reference,
        data: { required: true, supplied_by_review: review.id, originator: { name: ORIGINATOR.name } },
      });
      expect((await records('review.disposition'))[0].data).toMatchObject({
        decision: 'clear',
        deposit_status: 'credited',
        deposit_transfer: credited.transfer,
      });
    });

    it('an operator rejects one: never credited, owed back; two decisions racing decide once', async () => {
      const org = await newOrganization(t);
      const rejected = await confirmedDeposit(org, '2000.000000');
      const review = await reviewOf(org, rejected.deposit.id);
      const refused = await decide(org, review.id, 'reject', { note: 'originator unknown' });
      expect(refused.statusCode, refused.body).toBe(200);
      expect((await call(org, 'GET', `/v1/deposits/${rejected.deposit.id}`)).data).toMatchObject({
        status: 'rejected',
        transfer: null,
        rejected_at: expect.any(String),
      });
      expect((await balanceOf(t, rejected.wallet, org.key)).current).toBe('0.000000');
      expect(await eventsOf(org, 'deposit.rejected', 'deposit_id', rejected.deposit.id)).toHaveLength(1);
      const owed = await call(org, 'GET', '/v1/deposits?status=rejected');
      expect(owed.data.data.map((d: any) => d.id)).toEqual([rejected.deposit.id]);

      for (const pair of [
        ['clear', 'reject'],
        ['clear', 'clear'],
      ] as const) {
        const held = await confirmedDeposit(org, '3000.000000');
        const raced = await reviewOf(org, held.deposit.id);
        const results = await Promise.all(
          pair.map((d) =>
            decide(org, raced.id, d, d === 'clear' ? { travel_rule: { originator: ORIGINATOR } } : {}),
          ),
        );
        expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
        const winner = results.find((r) => r.statusCode === 200)?.data.status;
        const after = (await call(org, 'GET', `/v1/deposits/${held.deposit.id}`)).data;
        expect(after.status).toBe(winner === 'cleared' ? 'credited' : 'rejected');
        expect((await balanceOf(t, held.wallet, org.key)).available).toBe(
          winner === 'cleared' ? '3000.000000' : '0.000000',
        );
        const outcomes = [
          ...(await eventsOf(org, 'deposit.credited', 'deposit_id', held.deposit.id)),
          ...(await eventsOf(org, 'deposit.rejected', 'deposit_id', held.deposit.id)),
        ];
        expect(outcomes).toHaveLength(1);
      }
    });
  });

  describe('conversions', () => {
    const quote = (org: TestOrganization, from: string, to: string, amount: string) =>
      call(org, 'POST', '/v1/conversions/quote', { from_wallet: from, to_wallet: to, amount });
    const convert = async (org: TestOrganization, from: string, to: string, amount: string) => {
      const q = await quote(org, from, to, amount);
      expect(q.statusCode, q.body).toBe(201);
      return call(org, 'POST', '/v1/conversions', { quote: q.data.id });
    };

    it('count against the tier limits and are checked by them, racing for the last of the day included', async () => {
      const org = await newOrganization(t);
      // An unverified customer: tier 0, 70,000.00 KES at once, 150,000.00 a day.
      const { fiat, coin } = await wallets(org, 'KES', '200000.00');
      const over = await convert(org, fiat, coin, '70000.01');
      expect(over.statusCode).toBe(422);
      expect(over.data).toMatchObject({ code: 'limit_exceeded', param: 'quote', limit: 'single' });
      for (let i = 0; i < 2; i++) expect((await convert(org, fiat, coin, '70000.00')).statusCode).toBe(201);
      // What the conversions used is gone for transfers too.
      const payout = await call(org, 'POST', '/v1/transfers', {
        source: fiat,
        destination: mobileMoney('+254711000444'),
        amount: '10001.00',
        currency: 'KES',
      });
      expect(payout.statusCode).toBe(422);
      expect(payout.data).toMatchObject({ limit: 'daily_sum', remaining: '10000.00' });
      // Two conversions racing for the 10,000.00 left: one passes.
      const quotes = await Promise.all([1, 2].map(() => quote(org, fiat, coin, '6000.00')));
      const raced = await Promise.all(
        quotes.map((q) => call(org, 'POST', '/v1/conversions', { quote: q.data.id })),
      );
      expect(raced.map((r) => r.statusCode).sort()).toEqual([201, 422]);
      expect(raced.find((r) => r.statusCode === 422)?.data).toMatchObject({
        code: 'limit_exceeded',
        limit: 'daily_sum',
        remaining: '4000.00',
      });
      expect((await balanceOf(t, fiat, org.key)).available).toBe('54000.00');
    });

    it('are checked by the AML rules, refusals recorded, and count as the wallet’s activity', async () => {
      const org = await newOrganization(t);
      const { fiat, coin } = await wallets(org, 'KES', '100000.00');
      const rule = await call(org, 'POST', '/v1/aml/rules', {
        name: 'Large conversions',
        type: 'single_transfer_threshold',
        parameters: { currency: 'KES', amount: '50000.00' },
        action: 'block',
      });
      expect(rule.statusCode, rule.body).toBe(201);
      const blocked = await convert(org, fiat, coin, '60000.00');
      expect(blocked.statusCode).toBe(422);
      expect(blocked.data).toMatchObject({ code: 'compliance_blocked', param: 'quote' });
      expect(
        (await call(org, 'PATCH', `/v1/aml/rules/${rule.data.id}`, { action: 'review' })).statusCode,
      ).toBe(200);
      const q = await quote(org, fiat, coin, '60000.00');
      const held = await call(
        org,
        'POST',
        '/v1/conversions',
        { quote: q.data.id },
        { 'Idempotency-Key': 'aml-1' },
      );
      expect(held.statusCode).toBe(422);
      expect(held.data.code).toBe('compliance_blocked');
      const again = await call(
        org,
        'POST',
        '/v1/conversions',
        { quote: q.data.id },
        { 'Idempotency-Key': 'aml-1' },
      );
      expect(again.body).toBe(held.body);
      expect((await balanceOf(t, fiat, org.key)).available).toBe('100000.00');
      const alerts = (await call(org, 'GET', '/v1/aml/alerts?limit=100')).data.data as any[];
      expect(alerts.find((a) => a.rule === rule.data.id)).toMatchObject({
        transfer: null,
        conversion_quote: q.data.id,
        wallet: fiat,
        action: 'review',
      });
      const decisions = (await call(org, 'GET', '/v1/evidence?kind=conversion.decision&limit=100')).data
        .data as any[];
      expect(decisions.map((r) => r.data.outcome).sort()).toEqual(['block', 'review']);

      // A velocity rule sees a conversion as the wallet's outgoing activity: the payout after it is held.
      const velocity = await call(org, 'POST', '/v1/aml/rules', {
        name: 'One a day',
        type: 'velocity',
        parameters: { currency: 'KES', window_seconds: 3600, count_max: 1 },
        action: 'review',
      });
      expect(velocity.statusCode, velocity.body).toBe(201);
      const converted = await convert(org, fiat, coin, '100.00');
      expect(converted.statusCode, converted.body).toBe(201);
      const payout = await call(org, 'POST', '/v1/transfers', {
        source: fiat,
        destination: mobileMoney('+254711000555'),
        amount: '100.00',
        currency: 'KES',
      });
      expect(payout.statusCode, payout.body).toBe(201);
      expect(payout.data.status).toBe('in_review');
    });

    it('pay the fee schedule’s conversion rule: quoted, rounded half up, posted to fee income in the same entry', async () => {
      const org = await newOrganization(t);
      const refused = await call(org, 'PUT', '/v1/fee-schedule', {
        rules: [{ id: 'c', rail: 'conversion', currency: 'XYZ', type: 'fixed', fixed: '1.00' }],
      });
      expect(refused.statusCode).toBe(400);
      expect(refused.data.param).toBe('rules.0.currency');
      const put = await call(org, 'PUT', '/v1/fee-schedule', {
        base_version: 1,
        rules: [
          { id: 'conv_kes', rail: 'conversion', currency: 'KES', type: 'percentage', percent_bps: 50 },
          { id: 'wallet_kes', rail: 'internal', currency: 'KES', type: 'fixed', fixed: '5.00' },
        ],
      });
      expect(put.statusCode, put.body).toBe(200);
      const updated = (await call(org, 'GET', '/v1/events?type=fee_schedule.updated')).data.data;
      expect(updated).toHaveLength(1);
      expect(updated[0].data).toEqual({
        version: 2,
        previous_version: 1,
        rules: 2,
        created_by: expect.any(String),
      });
      const changes = (await call(org, 'GET', '/v1/evidence?kind=fee_schedule.update')).data.data;
      expect(changes[0].data).toMatchObject({ version: 2, previous_version: 1 });

      const { fiat, coin } = await wallets(org, 'KES', '1000.00');
      // 0.5 % of 101.00 is 0.505: exactly half a cent, rounded up. Of 1000.01 it is 5.00005: rounded down.
      const half = await quote(org, fiat, coin, '101.00');
      expect(half.data).toMatchObject({
        fee: '0.51',
        total: '101.51',
        to_amount: '0.777700',
        fee_schedule: { version: 2, rule: 'conv_kes' },
      });
      expect((await quote(org, fiat, coin, '1000.01')).data).toMatchObject({ fee: '5.00', total: '1005.01' });
      // The wallet covers 1000.00 but not 1000.00 + 5.00.
      const short = await convert(org, fiat, coin, '1000.00');
      expect(short.statusCode).toBe(422);
      expect(short.data.code).toBe('insufficient_funds');

      const done = await call(org, 'POST', '/v1/conversions', { quote: half.data.id });
      expect(done.statusCode, done.body).toBe(201);
      expect(done.data).toMatchObject({
        fee: '0.51',
        total: '101.51',
        fee_schedule: { version: 2, rule: 'conv_kes' },
      });
      expect((await balanceOf(t, fiat, org.key)).available).toBe('898.49');
      const feeIncome = (await call(org, 'GET', '/v1/ledger/accounts?kind=fee_income')).data.data;
      expect(feeIncome.map((a: any) => [a.currency, a.net_posted])).toEqual([['KES', '0.51']]);
      const entries = (await call(org, 'GET', '/v1/ledger/entries?limit=20')).data.data as any[];
      const debit = entries.find((e) => e.id === done.data.journal_entries[0]);
      expect(
        debit.postings
          .map((p: any) => [
            p.account === fiat ? 'wallet' : p.account === feeIncome[0].id ? 'fee' : 'conversion',
            p.side,
            p.amount,
          ])
          .sort(),
      ).toEqual([
        ['conversion', 'credit', '101.00'],
        ['fee', 'credit', '0.51'],
        ['wallet', 'debit', '101.51'],
      ]);
      const completed = await eventsOf(org, 'conversion.completed', 'conversion_id', done.data.id);
      expect(completed[0].data.fee).toBe('0.51');
      // No rule for conversions from USDC: redeeming is free, and says which version decided so.
      const redeem = await convert(org, coin, fiat, '0.500000');
      expect(redeem.statusCode, redeem.body).toBe(201);
      expect(redeem.data).toMatchObject({ fee: '0.000000', fee_schedule: { version: 2, rule: null } });
    });
  });

  it('leaves the ledger and every evidence chain intact', async () => {
    await expectLedgerHealthy(t);
    expect((await verifyEvidence(t.deps.store)).filter((r) => r.break)).toEqual([]);
  });
});
