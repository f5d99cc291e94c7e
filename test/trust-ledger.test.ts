/**
 * The trust ledger through HTTP: the `trust` ledger account per currency, sweeps between a rail's float and
 * trust (both ways, replayed, raced, refused), bank and on-chain deposits received into trust, the daily
 * report's ledger trust balance and its difference from the banks' figure (a `trust_balance_mismatch`
 * exception, judged again when a figure arrives late), a USDC trust account at a custodian, and the ledger
 * healthy after, every currency netting to zero.
 *
 * As in safeguarding.test.ts, money moved "on the day" is moved with the clock set back to yesterday; the
 * check runs with the clock at noon today.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addDays, dayOf } from '../src/domain/days.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { runDepositWorkerOnce } from '../src/modules/stablecoins/workers.ts';
import { runSafeguardingChecks } from '../src/modules/treasury/useCases/safeguarding.ts';
import { type ApiResponse, api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

const CHECKS_MAX = 10_000;
const UNKNOWN_TRUST_ACCOUNT = `ta_${'0'.repeat(26)}`;
const UNKNOWN_SWEEP = `sgs_${'0'.repeat(26)}`;
const LIST_PAGE_MAX = 100;
const quietLog = () => {};

describe.each(BACKENDS)('trust ledger on %s', (backend) => {
  let t: TestApp;
  const realNow = () => new Date();
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

  async function at<T>(onDay: string, time: string, fn: () => Promise<T>): Promise<T> {
    t.deps.now = () => new Date(`${onDay}T${time}Z`);
    try {
      return await fn();
    } finally {
      t.deps.now = realNow;
    }
  }

  const runCheck = () => at(today, '12:00:00', () => runSafeguardingChecks(t.deps, CHECKS_MAX));

  function expectProblem(response: ApiResponse, status: number, code: string, param?: string) {
    expect(response.statusCode, response.body).toBe(status);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.data).toMatchObject({ status, code });
    if (param !== undefined) expect(response.data.param).toBe(param);
  }

  const sweep = (org: TestOrganization, body: Record<string, unknown>, idempotencyKey?: string) =>
    api(t, 'POST', '/v1/safeguarding/sweeps', {
      key: org.key,
      body: { currency: 'KES', rail: 'mobile_money', direction: 'to_trust', value_date: today, ...body },
      ...(idempotencyKey === undefined ? {} : { headers: { 'idempotency-key': idempotencyKey } }),
    });

  async function everything(org: TestOrganization, path: string): Promise<any[]> {
    const items: any[] = [];
    let cursor: string | null = null;
    do {
      const separator = path.includes('?') ? '&' : '?';
      const after: string = cursor === null ? '' : `&starting_after=${cursor}`;
      const page = await api(t, 'GET', `${path}${separator}limit=${LIST_PAGE_MAX}${after}`, { key: org.key });
      expect(page.statusCode, page.body).toBe(200);
      items.push(...page.data.data);
      cursor = page.data.next_cursor;
    } while (cursor !== null);
    return items;
  }

  /** The organization's system account of a kind (and rail) in a currency, or undefined. */
  async function accountOf(org: TestOrganization, kind: string, currency: string, rail?: string) {
    const accounts = await everything(org, `/v1/ledger/accounts?kind=${kind}&currency=${currency}`);
    const found = accounts.filter((a) => rail === undefined || a.rail === rail);
    expect(found.length).toBeLessThanOrEqual(1);
    return found[0];
  }

  /** Double entry across the organization: per currency, posted and pending nets sum to zero. */
  async function expectNetsZero(org: TestOrganization) {
    const minor = (v: string) => BigInt(v.replace('.', ''));
    const nets = new Map<string, { posted: bigint; pending: bigint }>();
    for (const a of await everything(org, '/v1/ledger/accounts')) {
      const sum = nets.get(a.currency) ?? { posted: 0n, pending: 0n };
      nets.set(a.currency, {
        posted: sum.posted + minor(a.net_posted),
        pending: sum.pending + minor(a.net_pending),
      });
    }
    for (const [currency, sum] of nets) expect(sum, currency).toEqual({ posted: 0n, pending: 0n });
  }

  const entryOf = async (org: TestOrganization, id: string) =>
    (await everything(org, '/v1/ledger/entries')).find((e) => e.id === id);

  const eventsOf = async (org: TestOrganization, type: string) =>
    (await api(t, 'GET', `/v1/events?type=${type}`, { key: org.key })).data.data as any[];

  async function trustAccount(org: TestOrganization, body: Record<string, unknown> = {}) {
    const created = await api(t, 'POST', '/v1/trust-accounts', {
      key: org.key,
      body: {
        currency: 'KES',
        bank: 'Equity Bank',
        account_reference: `TRUST-${org.name}-${String(body.currency ?? 'KES')}`,
        active_from: day,
        ...body,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.data;
  }

  const reportBalance = (org: TestOrganization, body: Record<string, unknown>) =>
    api(t, 'POST', '/v1/safeguarding/balances', { key: org.key, body: { date: day, ...body } });

  async function reportOfDay(org: TestOrganization, currency = 'KES') {
    const listed = await api(t, 'GET', `/v1/safeguarding/reports?currency=${currency}`, { key: org.key });
    const found = listed.data.data.filter((r: any) => r.date === day);
    expect(found).toHaveLength(1);
    return found[0];
  }

  it('sweeps both ways move money between a rail’s float and trust, each once', async () => {
    const org = await newOrganization(t);
    const wallet = await fundedWallet(t, '1000.00', 'KES', org.key);
    // The sandbox funding arrived at the mobile-money partner: its float holds 1,000.
    expect((await accountOf(org, 'rail_settlement', 'KES', 'mobile_money')).net_posted).toBe('-1000.00');

    const into = await sweep(org, { amount: '800.00', reference: 'MPESA-B2B-0001' }, 'sweep-into');
    expect(into.statusCode, into.body).toBe(201);
    expect(into.data).toEqual({
      object: 'safeguarding_sweep',
      id: expect.stringMatching(/^sgs_/),
      currency: 'KES',
      rail: 'mobile_money',
      direction: 'to_trust',
      amount: '800.00',
      reference: 'MPESA-B2B-0001',
      value_date: today,
      trust_account: null,
      journal_entry: expect.stringMatching(/^je_/),
      created_by: expect.stringMatching(/^key_/),
      created_at: expect.any(String),
    });
    const trust = await accountOf(org, 'trust', 'KES');
    expect(trust).toMatchObject({
      kind: 'trust',
      rail: 'internal',
      debits_posted: '800.00',
      net_posted: '-800.00',
    });
    const float = await accountOf(org, 'rail_settlement', 'KES', 'mobile_money');
    expect(float.net_posted).toBe('-200.00');
    expect(await entryOf(org, into.data.journal_entry)).toMatchObject({
      kind: 'direct',
      transfer: null,
      postings: [
        { account: trust.id, side: 'debit', phase: 'posted', amount: '800.00', currency: 'KES' },
        { account: float.id, side: 'credit', phase: 'posted', amount: '800.00', currency: 'KES' },
      ],
    });

    // The same request again replays; the same movement under another key is the recorded one.
    const replay = await sweep(org, { amount: '800.00', reference: 'MPESA-B2B-0001' }, 'sweep-into');
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.data).toEqual(into.data);
    const again = await sweep(org, { amount: '800.00', reference: 'MPESA-B2B-0001' });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.data).toEqual(into.data);
    expectProblem(
      await sweep(org, { amount: '801.00', reference: 'MPESA-B2B-0001' }),
      409,
      'duplicate_reference',
      'reference',
    );
    // The same reference at another partner is another movement.
    const payouts = await sweep(org, {
      rail: 'bank',
      direction: 'from_trust',
      amount: '300.00',
      reference: 'MPESA-B2B-0001',
    });
    expect(payouts.statusCode, payouts.body).toBe(201);
    expect((await accountOf(org, 'trust', 'KES')).net_posted).toBe('-500.00');
    expect((await accountOf(org, 'rail_settlement', 'KES', 'bank')).net_posted).toBe('-300.00');
    expect(await entryOf(org, payouts.data.journal_entry)).toMatchObject({
      postings: [
        { side: 'debit', amount: '300.00' },
        { account: trust.id, side: 'credit', amount: '300.00' },
      ],
    });

    const listed = await everything(org, '/v1/safeguarding/sweeps');
    expect(listed.map((s) => s.id)).toEqual([payouts.data.id, into.data.id]);
    expect(await everything(org, '/v1/safeguarding/sweeps?currency=UGX')).toEqual([]);
    expect((await api(t, 'GET', `/v1/safeguarding/sweeps/${into.data.id}`, { key: org.key })).data).toEqual(
      into.data,
    );
    const other = await newOrganization(t);
    expectProblem(
      await api(t, 'GET', `/v1/safeguarding/sweeps/${into.data.id}`, { key: other.key }),
      404,
      'resource_missing',
    );
    expect(await everything(other, '/v1/safeguarding/sweeps')).toEqual([]);

    const events = await eventsOf(org, 'safeguarding.sweep.recorded');
    expect(events.map((e) => e.data.sweep_id)).toEqual([payouts.data.id, into.data.id]);
    expect(events[1].data).toEqual({
      sweep_id: into.data.id,
      currency: 'KES',
      rail: 'mobile_money',
      direction: 'to_trust',
      amount: '800.00',
      reference: 'MPESA-B2B-0001',
      value_date: today,
      trust_account: null,
      journal_entry: into.data.journal_entry,
    });
    const evidence = await api(t, 'GET', '/v1/evidence?kind=safeguarding.sweep', { key: org.key });
    expect(evidence.data.data.map((e: any) => [e.data.sweep_id, e.data.amount_minor])).toEqual([
      [payouts.data.id, '30000'],
      [into.data.id, '80000'],
    ]);
    // Customers' money is untouched by a sweep.
    expect((await api(t, 'GET', `/v1/wallets/${wallet}/balance`, { key: org.key })).data.current).toBe(
      '1000.00',
    );
    await expectNetsZero(org);
    await expectLedgerHealthy(t);
  });

  it('posts once for one key sent twice at once, and once for one reference under two keys at once', async () => {
    const org = await newOrganization(t);
    const body = { amount: '100.00', reference: 'RACE-1' };
    const sameKey = await Promise.all([sweep(org, body, 'race-key'), sweep(org, body, 'race-key')]);
    for (const answer of sameKey) {
      expect([201, 409], answer.body).toContain(answer.statusCode);
      if (answer.statusCode === 409) expect(answer.data.code).toBe('idempotency_key_in_flight');
    }
    const keys = await Promise.all([
      sweep(org, { amount: '50.00', reference: 'RACE-2' }, 'race-a'),
      sweep(org, { amount: '50.00', reference: 'RACE-2' }, 'race-b'),
    ]);
    expect(keys.map((r) => r.statusCode).sort()).toEqual([200, 201]);
    expect(keys[0]?.data.id).toBe(keys[1]?.data.id);

    const listed = await everything(org, '/v1/safeguarding/sweeps');
    expect(listed.map((s) => s.reference).sort()).toEqual(['RACE-1', 'RACE-2']);
    expect((await accountOf(org, 'trust', 'KES')).debits_posted).toBe('150.00');
    expect(await eventsOf(org, 'safeguarding.sweep.recorded')).toHaveLength(2);
    await expectNetsZero(org);
    await expectLedgerHealthy(t);
  });

  it('a bank deposit to a virtual account and an on-chain deposit are received into trust', async () => {
    const org = await newOrganization(t);
    const kes = await fundedWallet(t, '0', 'KES', org.key);
    const made = await api(t, 'POST', `/v1/wallets/${kes}/virtual-account`, { key: org.key });
    expect(made.statusCode, made.body).toBe(201);
    const reported = await api(t, 'POST', '/v1/bank-deposits', {
      key: org.key,
      body: {
        deposits: [
          { bank_reference: 'EQ-DEP-1', reference: made.data.reference, amount: '120.00', currency: 'KES' },
        ],
      },
    });
    expect(reported.statusCode, reported.body).toBe(200);
    const [outcome] = reported.data.results;
    expect(outcome.outcome).toBe('credited');
    const trust = await accountOf(org, 'trust', 'KES');
    expect(trust).toMatchObject({ debits_posted: '120.00', net_posted: '-120.00' });
    // Not at the bank rail's float: no settlement account was needed.
    expect(await accountOf(org, 'rail_settlement', 'KES', 'bank')).toBeUndefined();
    const [entry] = await everything(org, `/v1/ledger/entries?wallet=${kes}`);
    expect(entry.postings).toEqual([
      expect.objectContaining({ account: trust.id, side: 'debit', amount: '120.00' }),
      expect.objectContaining({ account: kes, side: 'credit', amount: '120.00' }),
    ]);

    const usdc = await fundedWallet(t, '0', 'USDC', org.key);
    const address = await api(t, 'POST', `/v1/wallets/${usdc}/deposit-addresses`, {
      key: org.key,
      body: { network: 'ethereum' },
    });
    expect(address.statusCode, address.body).toBe(201);
    const seen = await api(t, 'POST', '/v1/sandbox/chain/deposits', {
      key: org.key,
      body: { network: 'ethereum', address: address.data.address, amount: '75.500000', confirmations: 12 },
    });
    expect(seen.statusCode, seen.body).toBe(201);
    for (let i = 0; i < 5; i++) if ((await runDepositWorkerOnce(t.deps, { log: quietLog })) === 0) break;
    expect((await api(t, 'GET', `/v1/deposits/${seen.data.id}`, { key: org.key })).data.status).toBe(
      'credited',
    );
    const custody = await accountOf(org, 'trust', 'USDC');
    expect(custody).toMatchObject({ currency: 'USDC', debits_posted: '75.500000' });
    expect(await accountOf(org, 'rail_settlement', 'USDC', 'digital_asset')).toBeUndefined();
    await expectNetsZero(org);
    await expectLedgerHealthy(t);
  });

  it('the report carries the ledger’s trust balance as of the end of the day and its difference from the bank’s', async () => {
    const org = await newOrganization(t);
    const account = await trustAccount(org);
    await at(day, '10:00:00', async () => {
      await fundedWallet(t, '1000.00', 'KES', org.key);
      const swept = await sweep(org, { amount: '1000.00', reference: 'DAY-SWEEP', value_date: day });
      expect(swept.statusCode, swept.body).toBe(201);
    });
    // After the day ended: not part of that day's figure.
    expect(
      (await sweep(org, { direction: 'from_trust', amount: '400.00', reference: 'LATER' })).statusCode,
    ).toBe(201);
    expect(
      (await reportBalance(org, { trust_account: account.id, closing_balance: '1000.00' })).statusCode,
    ).toBe(201);
    await runCheck();
    const report = await reportOfDay(org);
    expect(report).toMatchObject({
      status: 'ok',
      customer_money: '1000.00',
      trust_balance: '1000.00',
      difference: '0.00',
      ledger_trust_balance: '1000.00',
      ledger_difference: '0.00',
      exception: null,
      mismatch_exception: null,
    });
    expect((await accountOf(org, 'trust', 'KES')).debits_posted).toBe('1000.00');
    expect((await accountOf(org, 'trust', 'KES')).credits_posted).toBe('400.00');
    const checks = await api(t, 'GET', '/v1/evidence?kind=safeguarding.check', { key: org.key });
    expect(checks.data.data[0].data).toMatchObject({
      report_id: report.id,
      ledger_trust_balance_minor: '100000',
      ledger_difference_minor: '0',
      mismatch_exception_id: null,
    });
    const exceptions = await api(t, 'GET', '/v1/reconciliation/exceptions?kind=trust_balance_mismatch', {
      key: org.key,
    });
    expect(exceptions.data.data).toEqual([]);
  });

  it('a bank figure that differs from the ledger opens a trust_balance_mismatch exception, once, judged again late', async () => {
    const org = await newOrganization(t);
    const account = await trustAccount(org);
    await at(day, '10:00:00', async () => {
      await fundedWallet(t, '1000.00', 'KES', org.key);
      // Only 900 of it was recorded as swept into trust.
      expect((await sweep(org, { amount: '900.00', reference: 'PART', value_date: day })).statusCode).toBe(
        201,
      );
    });
    await runCheck();
    const missing = await reportOfDay(org);
    expect(missing).toMatchObject({
      status: 'missing_balance',
      ledger_trust_balance: '900.00',
      ledger_difference: null,
      mismatch_exception: null,
    });

    // The statement says 1,000 are in trust: customers are covered, but the ledger does not know of 100.
    const first = await reportBalance(org, { trust_account: account.id, closing_balance: '1000.00' });
    expect(first.statusCode, first.body).toBe(201);
    const mismatched = await reportOfDay(org);
    expect(mismatched).toMatchObject({
      id: missing.id,
      status: 'ok',
      trust_balance: '1000.00',
      ledger_trust_balance: '900.00',
      ledger_difference: '100.00',
      exception: null,
      mismatch_exception: expect.stringMatching(/^recx_/),
    });
    const listed = await api(t, 'GET', '/v1/reconciliation/exceptions?kind=trust_balance_mismatch', {
      key: org.key,
    });
    expect(listed.data.data).toHaveLength(1);
    expect(listed.data.data[0]).toMatchObject({
      id: mismatched.mismatch_exception,
      kind: 'trust_balance_mismatch',
      status: 'open',
      transfer: null,
      details: {
        report_id: missing.id,
        currency: 'KES',
        date: day,
        trust_balance_minor: '100000',
        ledger_trust_balance_minor: '90000',
        difference_minor: '10000',
      },
    });
    const opened = await eventsOf(org, 'reconciliation.exception.opened');
    expect(opened.filter((e) => e.data.kind === 'trust_balance_mismatch')).toHaveLength(1);

    // A corrected figure that still differs keeps the one exception; no second is opened.
    const corrected = await reportBalance(org, {
      trust_account: account.id,
      closing_balance: '950.00',
      replaces: first.data.id,
      note: 'Misread statement.',
    });
    expect(corrected.statusCode, corrected.body).toBe(201);
    expect(await reportOfDay(org)).toMatchObject({
      status: 'shortfall',
      ledger_difference: '50.00',
      mismatch_exception: mismatched.mismatch_exception,
      exception: expect.stringMatching(/^recx_/),
    });
    const still = await api(t, 'GET', '/v1/reconciliation/exceptions?kind=trust_balance_mismatch', {
      key: org.key,
    });
    expect(still.data.data).toHaveLength(1);

    // An operator accepts it with a note (the missing sweep is recorded): no transfer to name.
    const resolved = await api(
      t,
      'POST',
      `/v1/reconciliation/exceptions/${mismatched.mismatch_exception}/resolve`,
      {
        key: org.key,
        body: { action: 'manual_match', note: 'The 100.00 sweep of the 25th was recorded late.' },
      },
    );
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect(resolved.data).toMatchObject({ status: 'resolved', resolution: 'manual_match', transfer: null });
    await expectNetsZero(org);
    await expectLedgerHealthy(t);
  });

  it('a USDC trust account is a custodian’s wallet, checked against customers and the ledger alike', async () => {
    const org = await newOrganization(t);
    const custody = await trustAccount(org, {
      currency: 'USDC',
      bank: 'Anchorage Digital',
      account_reference: 'vault-0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    });
    expect(custody).toMatchObject({ currency: 'USDC', type: 'custody_wallet', bank: 'Anchorage Digital' });
    const explicit = await trustAccount(org, {
      currency: 'USDT',
      type: 'custody_wallet',
      bank: 'BitGo',
      account_reference: 'TRON-VAULT-1',
    });
    expect(explicit.type).toBe('custody_wallet');
    expect((await trustAccount(org, { bank: 'KCB' })).type).toBe('bank_account');
    const listed = await api(t, 'GET', '/v1/trust-accounts?type=custody_wallet', { key: org.key });
    expect(listed.data.data.map((a: any) => a.id).sort()).toEqual([custody.id, explicit.id].sort());

    await at(day, '10:00:00', async () => {
      await fundedWallet(t, '250.000000', 'USDC', org.key);
      const swept = await sweep(org, {
        currency: 'USDC',
        rail: 'digital_asset',
        amount: '250.000000',
        reference: '0xabc-sweep',
        value_date: day,
        trust_account: custody.id,
      });
      expect(swept.statusCode, swept.body).toBe(201);
      expect(swept.data.trust_account).toBe(custody.id);
    });
    expect(
      (await reportBalance(org, { trust_account: custody.id, closing_balance: '250.000000' })).statusCode,
    ).toBe(201);
    await runCheck();
    expect(await reportOfDay(org, 'USDC')).toMatchObject({
      status: 'ok',
      customer_money: '250.000000',
      trust_balance: '250.000000',
      ledger_trust_balance: '250.000000',
      ledger_difference: '0.000000',
      mismatch_exception: null,
    });
    await expectNetsZero(org);
    await expectLedgerHealthy(t);
  });

  it('bad input is a problem naming the field and writes nothing; scopes are enforced', async () => {
    const org = await newOrganization(t);
    const kesAccount = await trustAccount(org, { active_from: today });
    const usdAccount = await trustAccount(org, { currency: 'USD', bank: 'Stanbic' });
    const valid = { amount: '10.00', reference: 'BAD-INPUT' };
    const cases: [Record<string, unknown>, string, string][] = [
      [{ ...valid, currency: 'XYZ' }, 'currency', 'invalid_value'],
      [{ ...valid, rail: 'internal' }, 'rail', 'invalid_value'],
      [{ ...valid, rail: 'digital_asset' }, 'rail', 'invalid_value'],
      [{ ...valid, currency: 'USDC', amount: '10.000000' }, 'rail', 'invalid_value'],
      [{ ...valid, direction: 'sideways' }, 'direction', 'invalid_value'],
      [{ ...valid, amount: '0' }, 'amount', 'not_positive'],
      [{ ...valid, amount: '-5.00' }, 'amount', 'not_positive'],
      [{ ...valid, amount: '1.001' }, 'amount', 'too_precise'],
      [{ ...valid, amount: '1,000.00' }, 'amount', 'invalid_format'],
      [{ ...valid, amount: 10 }, 'amount', 'invalid_type'],
      [{ ...valid, reference: '' }, 'reference', 'too_short'],
      [{ ...valid, reference: '   ' }, 'reference', 'invalid_value'],
      [{ ...valid, reference: 'x'.repeat(101) }, 'reference', 'too_long'],
      [{ ...valid, value_date: '2026-02-30' }, 'value_date', 'invalid_format'],
      [{ ...valid, value_date: addDays(today, 1) }, 'value_date', 'out_of_range'],
      [{ ...valid, trust_account: 'ta_nope' }, 'trust_account', 'invalid_format'],
      [{ ...valid, trust_account: usdAccount.id }, 'trust_account', 'invalid_value'],
      [{ ...valid, trust_account: kesAccount.id, value_date: day }, 'value_date', 'out_of_range'],
      [{ ...valid, iban: 'x' }, 'iban', 'unknown_field'],
      [{ amount: '1.00' }, 'reference', 'missing'],
    ];
    for (const [body, param, code] of cases) {
      const response = await sweep(org, body);
      expectProblem(response, 400, 'validation_error', param);
      expect(response.data.errors[0], JSON.stringify(body)).toMatchObject({ param, code });
    }
    expectProblem(
      await sweep(org, { ...valid, trust_account: UNKNOWN_TRUST_ACCOUNT }),
      404,
      'resource_missing',
      'trust_account',
    );
    expect(await everything(org, '/v1/safeguarding/sweeps')).toEqual([]);
    expect(await accountOf(org, 'trust', 'KES')).toBeUndefined();
    expect(await eventsOf(org, 'safeguarding.sweep.recorded')).toEqual([]);

    for (const [query, param] of [
      ['currency=XYZ', 'currency'],
      [`starting_after=${kesAccount.id}`, 'starting_after'],
    ]) {
      expectProblem(
        await api(t, 'GET', `/v1/safeguarding/sweeps?${query}`, { key: org.key }),
        400,
        'validation_error',
        param,
      );
    }
    expectProblem(
      await api(t, 'GET', '/v1/safeguarding/sweeps/sgs_nope', { key: org.key }),
      400,
      'validation_error',
      'id',
    );
    expectProblem(
      await api(t, 'GET', `/v1/safeguarding/sweeps/${UNKNOWN_SWEEP}`, { key: org.key }),
      404,
      'resource_missing',
    );

    // A trust account's type must fit its currency.
    for (const body of [
      { currency: 'USDC', type: 'bank_account' },
      { currency: 'KES', type: 'custody_wallet' },
    ]) {
      const response = await api(t, 'POST', '/v1/trust-accounts', {
        key: org.key,
        body: { bank: 'Any', account_reference: 'TYPE-CHECK', ...body },
      });
      expectProblem(response, 400, 'validation_error', 'type');
      expect(response.data.errors[0]).toMatchObject({ param: 'type', code: 'invalid_value' });
    }
    expectProblem(
      await api(t, 'POST', '/v1/trust-accounts', {
        key: org.key,
        body: { currency: 'KES', type: 'vault', bank: 'Any', account_reference: 'TYPE-CHECK' },
      }),
      400,
      'validation_error',
      'type',
    );

    // Sweeps are the operators' (the `compliance` scope).
    const writer = (await issueApiKey(t.deps, { organizationName: org.name, scopes: ['read', 'write'] })).key;
    expectProblem(
      await api(t, 'POST', '/v1/safeguarding/sweeps', {
        key: writer,
        body: { currency: 'KES', rail: 'mobile_money', direction: 'to_trust', value_date: today, ...valid },
      }),
      403,
      'insufficient_permissions',
    );
    expectProblem(
      await api(t, 'GET', '/v1/safeguarding/sweeps', { key: writer }),
      403,
      'insufficient_permissions',
    );
    const operator = (await issueApiKey(t.deps, { organizationName: org.name, scopes: ['compliance'] })).key;
    expect((await api(t, 'GET', '/v1/safeguarding/sweeps', { key: operator })).statusCode).toBe(200);
  });
});
