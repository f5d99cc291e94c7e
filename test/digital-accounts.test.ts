/**
 * Digital accounts through HTTP: the organization's bank settings, account details issued on wallet creation
 * or on request (once, under races too, never reused, refused by the database when malformed), bank deposits
 * matched by account number, statements (entries exactly at the boundaries, settled and failed payouts with
 * their holds, CSV read back, a statement read while transfers commit, the entry bound) and balances as of
 * an instant.
 *
 * Entries are stamped at chosen instants hours back by setting the clock, and ids follow it (as they do when
 * the service writes in real time), so the history is what it would have been.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { monotonicIdGenerator } from '../src/app/deps.ts';
import { formatId, ID_PREFIXES } from '../src/domain/ids.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { accountNumberFromRandom, isValidAccountNumber } from '../src/modules/digitalAccounts/domain.ts';
import { insertWalletAccountDetails } from '../src/modules/digitalAccounts/repository.ts';
import { rfc4180Rows } from './support/csv.ts';
import {
  type ApiResponse,
  api,
  BACKENDS,
  createCustomer,
  startTestApp,
  type TestApp,
} from './support/harness.ts';
import { balanceOf, drainRails, expectLedgerHealthy, mobileMoney } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

const SETTLE_PHONE = '+254700000000';
const FAIL_PHONE = '+254700000001';
/** The sandbox rail leaves a payout to this phone processing, so its hold stays open. */
const TIMEOUT_PHONE = '+254700000003';
const CONCURRENT_TRANSFERS = 12;
const CONCURRENT_STATEMENTS = 8;
const CONCURRENT_ISSUES = 8;
/** One more than a statement lists (STATEMENT_ENTRIES_MAX). */
const TOO_MANY_ENTRIES = 10_001;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(BACKENDS)('digital accounts on %s', (backend) => {
  let t: TestApp;
  let realNewId: TestApp['deps']['newId'];
  const realNow = () => new Date();
  const realClock = () => {
    t.deps.now = realNow;
    t.deps.newId = realNewId;
  };

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    realNewId = t.deps.newId;
  });
  afterEach(realClock);
  afterAll(async () => {
    realClock();
    await t.close();
  });

  /** Runs `fn` with the clock, and the clock ids are made from, at `time`. */
  async function at<T>(time: Date, fn: () => Promise<T>): Promise<T> {
    t.deps.now = () => new Date(time.getTime());
    t.deps.newId = monotonicIdGenerator(() => time.getTime());
    try {
      return await fn();
    } finally {
      realClock();
    }
  }

  function expectProblem(response: ApiResponse, status: number, code: string, param?: string) {
    expect(response.statusCode, response.body).toBe(status);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.data).toMatchObject({ status, code });
    if (param !== undefined) expect(response.data.param).toBe(param);
  }

  async function configured(bankCode = '01100', bankName = 'Equity Bank Kenya'): Promise<TestOrganization> {
    const org = await newOrganization(t);
    const put = await api(t, 'PUT', '/v1/digital-accounts/settings', {
      key: org.key,
      body: { bank_code: bankCode, bank_name: bankName },
    });
    expect(put.statusCode, put.body).toBe(200);
    return org;
  }

  async function newWallet(org: TestOrganization) {
    const owner = await createCustomer(t, org.key);
    const created = await api(t, 'POST', '/v1/wallets', { key: org.key, body: { owner, currency: 'KES' } });
    expect(created.statusCode, created.body).toBe(201);
    return created.data;
  }

  const fund = async (org: TestOrganization, wallet: string, amount: string) => {
    const funded = await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, {
      key: org.key,
      body: { amount },
    });
    expect(funded.statusCode, funded.body).toBe(201);
    return funded.data;
  };

  const move = async (org: TestOrganization, source: string, destination: string, amount: string) => {
    const moved = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: { source, destination, amount, currency: 'KES', rail: 'internal' },
    });
    expect(moved.statusCode, moved.body).toBe(201);
    return moved.data;
  };

  const statement = (org: TestOrganization, wallet: string, query: string, headers = {}) =>
    api(t, 'GET', `/v1/wallets/${wallet}/statement?${query}`, { key: org.key, headers });

  const period = (from: Date, to: Date) =>
    `from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}`;

  const balanceAsOf = async (org: TestOrganization, wallet: string, asOf: Date | string) => {
    const text = typeof asOf === 'string' ? asOf : asOf.toISOString();
    const read = await api(t, 'GET', `/v1/wallets/${wallet}/balance?as_of=${encodeURIComponent(text)}`, {
      key: org.key,
    });
    expect(read.statusCode, read.body).toBe(200);
    return read.data;
  };

  /** Opening + every amount = closing, and each line's balance runs from the one before. */
  function expectArithmetic(s: any) {
    const cents = (v: string) => Math.round(Number(v) * 100);
    let running = cents(s.opening_balance);
    for (const entry of s.entries) {
      running += cents(entry.amount);
      expect(cents(entry.balance)).toBe(running);
    }
    expect(running).toBe(cents(s.closing_balance));
    expect(s.entry_count).toBe(s.entries.length);
  }

  it('settings: none at first, set by admins (bank code upper-cased), recorded as evidence', async () => {
    const org = await newOrganization(t);
    const none = await api(t, 'GET', '/v1/digital-accounts/settings', { key: org.key });
    expect(none.data).toEqual({
      object: 'digital_account_settings',
      bank_code: null,
      bank_name: null,
      updated_at: null,
    });
    const writer = (await issueApiKey(t.deps, { organizationName: org.name, scopes: ['read', 'write'] })).key;
    expectProblem(
      await api(t, 'PUT', '/v1/digital-accounts/settings', {
        key: writer,
        body: { bank_code: '01100', bank_name: 'Equity' },
      }),
      403,
      'insufficient_permissions',
    );
    expectProblem(
      await api(t, 'PUT', '/v1/digital-accounts/settings', {
        key: org.key,
        body: { bank_code: '01-100', bank_name: 'Equity' },
      }),
      400,
      'validation_error',
      'bank_code',
    );
    expectProblem(
      await api(t, 'PUT', '/v1/digital-accounts/settings', { key: org.key, body: { bank_code: '01100' } }),
      400,
      'validation_error',
      'bank_name',
    );
    const set = await api(t, 'PUT', '/v1/digital-accounts/settings', {
      key: org.key,
      body: { bank_code: 'eqblkenA', bank_name: ' Equity Bank Kenya ' },
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.data).toMatchObject({ bank_code: 'EQBLKENA', bank_name: 'Equity Bank Kenya' });
    const read = await api(t, 'GET', '/v1/digital-accounts/settings', { key: org.key });
    expect(read.data).toEqual(set.data);
    const evidence = await api(t, 'GET', '/v1/evidence?kind=digital_accounts.settings.update', {
      key: org.key,
    });
    expect(evidence.data.data).toHaveLength(1);
    expect(evidence.data.data[0].data).toEqual({
      before: null,
      after: { bank_code: 'EQBLKENA', bank_name: 'Equity Bank Kenya' },
    });
  });

  it('account details: none before the settings, issued on request then, and from creation after', async () => {
    const org = await newOrganization(t);
    const before = await newWallet(org);
    expect(before.account_details).toBeNull();
    expectProblem(
      await api(t, 'POST', `/v1/wallets/${before.id}/account-details`, { key: org.key }),
      422,
      'digital_accounts_not_configured',
    );
    await api(t, 'PUT', '/v1/digital-accounts/settings', {
      key: org.key,
      body: { bank_code: '01100', bank_name: 'Equity Bank Kenya' },
    });
    const issued = await api(t, 'POST', `/v1/wallets/${before.id}/account-details`, { key: org.key });
    expect(issued.statusCode, issued.body).toBe(201);
    expect(issued.data).toMatchObject({
      object: 'account_details',
      wallet: before.id,
      bank_code: '01100',
      bank_name: 'Equity Bank Kenya',
      virtual_reference: expect.stringMatching(/^MK[0-9]{12}$/),
    });
    expect(isValidAccountNumber(issued.data.account_number)).toBe(true);
    const again = await api(t, 'POST', `/v1/wallets/${before.id}/account-details`, { key: org.key });
    expect(again.statusCode).toBe(200);
    expect(again.data).toEqual(issued.data);
    const virtual = await api(t, 'GET', `/v1/wallets/${before.id}/virtual-account`, { key: org.key });
    expect(virtual.data.reference).toBe(issued.data.virtual_reference);
    const { object: _o, wallet: _w, ...fields } = issued.data;
    expect((await api(t, 'GET', `/v1/wallets/${before.id}`, { key: org.key })).data.account_details).toEqual(
      fields,
    );

    // A wallet made now has its details from the start, and the list shows them.
    const after = await newWallet(org);
    expect(isValidAccountNumber(after.account_details.account_number)).toBe(true);
    expect(after.account_details.account_number).not.toBe(issued.data.account_number);
    const listed = await api(t, 'GET', '/v1/wallets', { key: org.key });
    expect(listed.data.data.map((w: any) => w.account_details?.account_number).sort()).toEqual(
      [issued.data.account_number, after.account_details.account_number].sort(),
    );

    // A new bank applies to new numbers only.
    await api(t, 'PUT', '/v1/digital-accounts/settings', {
      key: org.key,
      body: { bank_code: '06800', bank_name: 'Other Bank' },
    });
    const third = await newWallet(org);
    expect(third.account_details).toMatchObject({ bank_code: '06800', bank_name: 'Other Bank' });
    expect(
      (await api(t, 'GET', `/v1/wallets/${before.id}`, { key: org.key })).data.account_details.bank_code,
    ).toBe('01100');

    // Another organization's wallet is not there; a closed wallet gets none.
    const stranger = await newOrganization(t);
    expectProblem(
      await api(t, 'POST', `/v1/wallets/${before.id}/account-details`, { key: stranger.key }),
      404,
      'resource_missing',
    );
    const other = await newOrganization(t);
    const closing = await newWallet(other);
    const closed = await api(t, 'POST', `/v1/wallets/${closing.id}/close`, {
      key: other.key,
      body: { reason: 'customer_request' },
    });
    expect(closed.statusCode, closed.body).toBe(200);
    await api(t, 'PUT', '/v1/digital-accounts/settings', {
      key: other.key,
      body: { bank_code: '01100', bank_name: 'Equity Bank Kenya' },
    });
    expectProblem(
      await api(t, 'POST', `/v1/wallets/${closing.id}/account-details`, { key: other.key }),
      409,
      'wallet_not_active',
    );
  });

  it('account details are issued once when asked for at the same time', async () => {
    const org = await newOrganization(t);
    const wallet = await newWallet(org);
    await api(t, 'PUT', '/v1/digital-accounts/settings', {
      key: org.key,
      body: { bank_code: '01100', bank_name: 'Equity Bank Kenya' },
    });
    const replies = await Promise.all(
      Array.from({ length: CONCURRENT_ISSUES }, () =>
        api(t, 'POST', `/v1/wallets/${wallet.id}/account-details`, { key: org.key }),
      ),
    );
    expect(replies.map((r) => r.statusCode).sort()).toEqual([
      200,
      ...Array.from({ length: CONCURRENT_ISSUES - 2 }, () => 200),
      201,
    ]);
    expect(new Set(replies.map((r) => r.data.account_number)).size).toBe(1);
    const [count] = await t.db.store.query<{ n: string }>(
      'SELECT count(*)::text AS n FROM wallet_account_details WHERE wallet_id = $1',
      [wallet.id],
    );
    expect(count?.n).toBe('1');

    // The virtual reference alone, asked for at the same time: one made, the same one answered.
    const plain = await newOrganization(t);
    const bare = await newWallet(plain);
    const references = await Promise.all(
      Array.from({ length: CONCURRENT_ISSUES }, () =>
        api(t, 'POST', `/v1/wallets/${bare.id}/virtual-account`, { key: plain.key }),
      ),
    );
    expect(references.map((r) => r.statusCode).sort()).toEqual([
      ...Array.from({ length: CONCURRENT_ISSUES - 1 }, () => 200),
      201,
    ]);
    expect(new Set(references.map((r) => r.data.reference)).size).toBe(1);
  });

  it('the database keeps numbers unique, well formed and unchanged', async () => {
    const org = await configured();
    const first = await newWallet(org);
    const second = await newWallet(org);
    const bare = await (async () => {
      const other = await newOrganization(t);
      return { org: other, wallet: await newWallet(other) };
    })();
    const number = first.account_details.account_number as string;
    // The same number for another wallet: in the organization, and under the same bank code elsewhere.
    for (const [walletId, organizationId] of [
      [second.id, org.organizationId],
      [bare.wallet.id, bare.org.organizationId],
    ] as const) {
      expect(
        await insertWalletAccountDetails(t.db.store, {
          walletId,
          organizationId,
          accountNumber: number,
          bankCode: '01100',
          bankName: 'Equity Bank Kenya',
          createdAt: new Date(),
        }),
      ).toBe(false);
    }
    const mistyped = `${number.slice(0, -1)}${(Number(number.at(-1)) + 1) % 10}`;
    await expect(
      t.db.store.query(
        `INSERT INTO wallet_account_details (wallet_id, organization_id, account_number, bank_code, bank_name, created_at)
         VALUES ($1, $2, $3, '01100', 'Equity', now())`,
        [bare.wallet.id, bare.org.organizationId, mistyped],
      ),
    ).rejects.toThrow();
    await expect(
      t.db.store.query("UPDATE wallet_account_details SET bank_code = '99999' WHERE wallet_id = $1", [
        first.id,
      ]),
    ).rejects.toThrow(/append-only/);
    await expect(
      t.db.store.query('DELETE FROM wallet_account_details WHERE wallet_id = $1', [first.id]),
    ).rejects.toThrow(/append-only/);
  });

  it('bank deposits find a wallet by its account number as by its virtual reference', async () => {
    const org = await configured();
    const wallet = await newWallet(org);
    const number = wallet.account_details.account_number as string;
    const mistyped = `${number.slice(0, -1)}${(Number(number.at(-1)) + 1) % 10}`;
    const unissued = accountNumberFromRandom(new Uint8Array(11).fill(9));
    const from = new Date();
    const report = await api(t, 'POST', '/v1/bank-deposits', {
      key: org.key,
      body: {
        deposits: [
          {
            bank_reference: 'BNK-1',
            reference: `${number.slice(0, 4)} ${number.slice(4, 8)}-${number.slice(8)}`,
            amount: '250.00',
            currency: 'KES',
            payer_name: 'Doe, Jane "JD"',
          },
          {
            bank_reference: 'BNK-2',
            reference: wallet.account_details.virtual_reference,
            amount: '50.00',
            currency: 'KES',
            payer_name: '=HYPERLINK("x")',
          },
          { bank_reference: 'BNK-3', reference: mistyped, amount: '5.00', currency: 'KES' },
          { bank_reference: 'BNK-4', reference: unissued, amount: '5.00', currency: 'KES' },
        ],
      },
    });
    expect(report.statusCode, report.body).toBe(200);
    expect(report.data.results.map((r: any) => [r.outcome, r.reason])).toEqual([
      ['credited', undefined],
      ['credited', undefined],
      ['exception', 'the reference is malformed or its check digits disagree'],
      ['exception', 'no wallet has this reference'],
    ]);
    expect((await balanceOf(t, wallet.id, org.key)).current).toBe('300.00');
    await sleep(2);
    const to = new Date();

    // On the statement: what the payer is called, the bank's reference; and the same read back from CSV.
    const json = await statement(org, wallet.id, period(from, to));
    expect(json.statusCode, json.body).toBe(200);
    expect(
      json.data.entries.map((e: any) => [e.description, e.counterparty, e.rail, e.rail_reference]),
    ).toEqual([
      ['Bank deposit', 'Doe, Jane "JD"', 'bank', 'BNK-1'],
      ['Bank deposit', '=HYPERLINK("x")', 'bank', 'BNK-2'],
    ]);
    const csv = await statement(org, wallet.id, `${period(from, to)}&format=csv`);
    // RFC 4180 byte for byte: the counterparties' commas and quotes quoted, quotes doubled, CRLF records.
    expect(csv.body).toContain(',"Doe, Jane ""JD""",');
    expect(csv.body).toContain(`,"'=HYPERLINK(""x"")",`);
    expect(csv.body.split('\r\n')).toHaveLength(6);
    const rows = rfc4180Rows(csv.body);
    expect(rows.slice(1, -1).map((r) => r.counterparty)).toEqual([
      'Doe, Jane "JD"',
      // A spreadsheet would run a formula; the cell is text.
      `'=HYPERLINK("x")`,
    ]);
  });

  it('statements: the period holds entries from `from` up to but not including `to`', async () => {
    const org = await configured();
    // Whole seconds hours back, so the boundaries are written as the test gives them, and entries lie on
    // both sides of each boundary's hour of id margin (ID_TIME_SKEW_MS_MAX) as well as inside it.
    const t0 = new Date(Math.floor((Date.now() - 4 * 3_600_000) / 1000) * 1000);
    const t1 = new Date(t0.getTime() + 90 * 60_000);
    const ms = (d: Date, delta: number) => new Date(d.getTime() + delta);
    const [wallet, other] = await at(ms(t0, -3 * 3_600_000), async () => [
      (await newWallet(org)).id as string,
      (await newWallet(org)).id as string,
    ]);
    await at(ms(t0, -2 * 3_600_000), () => fund(org, wallet, '95.00'));
    await at(ms(t0, -1), () => fund(org, wallet, '5.00'));
    const atStart = await at(t0, () => fund(org, wallet, '10.00'));
    const sent = await at(ms(t0, 30_000), () => move(org, wallet, other, '25.00'));
    const middle = await at(ms(t0, 45 * 60_000), () => fund(org, wallet, '2.00'));
    const beforeEnd = await at(ms(t1, -1), () => fund(org, wallet, '1.00'));
    await at(t1, () => fund(org, wallet, '1000.00'));
    await at(ms(t1, 2 * 3_600_000), () => fund(org, wallet, '0.50'));

    const read = await statement(org, wallet, period(t0, t1));
    expect(read.statusCode, read.body).toBe(200);
    const s = read.data;
    expect(s).toMatchObject({
      object: 'wallet_statement',
      wallet,
      currency: 'KES',
      from: t0.toISOString(),
      to: t1.toISOString(),
      complete: true,
      opening_balance: '100.00',
      closing_balance: '88.00',
      total_credits: '13.00',
      total_debits: '25.00',
      entry_count: 4,
    });
    expect(s.account_details.account_number).toMatch(/^[1-9][0-9]{11}$/);
    expect(
      s.entries.map((e: any) => [e.posted_at, e.kind, e.amount, e.balance, e.transfer, e.description]),
    ).toEqual([
      [t0.toISOString(), 'direct', '10.00', '110.00', atStart.id, 'Sandbox funding'],
      [ms(t0, 30_000).toISOString(), 'direct', '-25.00', '85.00', sent.id, 'Transfer sent'],
      [ms(t0, 45 * 60_000).toISOString(), 'direct', '2.00', '87.00', middle.id, 'Sandbox funding'],
      [ms(t1, -1).toISOString(), 'direct', '1.00', '88.00', beforeEnd.id, 'Sandbox funding'],
    ]);
    expect(s.entries[1]).toMatchObject({ counterparty: other, fee: '0.00', rail: 'internal' });
    expectArithmetic(s);

    // The other wallet's side of the same entry.
    const theirs = await statement(org, other, period(t0, t1));
    expect(theirs.data.entries).toEqual([
      expect.objectContaining({ amount: '25.00', description: 'Transfer received', counterparty: wallet }),
    ]);

    // Consecutive periods neither share nor miss an entry at their common boundary.
    const earlier = (await statement(org, wallet, period(ms(t0, -3 * 3_600_000), t0))).data;
    expect(earlier).toMatchObject({ opening_balance: '0.00', closing_balance: s.opening_balance });
    expect(earlier.entries.map((e: any) => e.amount)).toEqual(['95.00', '5.00']);
    const later = (await statement(org, wallet, period(t1, ms(t1, 1)))).data;
    expect(later).toMatchObject({ opening_balance: '88.00', closing_balance: '1088.00', entry_count: 1 });

    // The balance as of an instant is the same rule: entries created strictly before it.
    expect(await balanceAsOf(org, wallet, ms(t0, -1))).toMatchObject({
      current: '95.00',
      available: '95.00',
    });
    expect(await balanceAsOf(org, wallet, t0)).toMatchObject({
      object: 'balance',
      wallet,
      current: '100.00',
      pending: '0.00',
      available: '100.00',
      as_of: t0.toISOString(),
    });
    expect((await balanceAsOf(org, wallet, t1)).current).toBe('88.00');
    expect((await balanceAsOf(org, wallet, ms(t1, 1))).current).toBe('1088.00');
    expect((await balanceAsOf(org, wallet, new Date())).current).toBe('1088.50');
    // The same instant written with an offset.
    const nairobi = `${new Date(t1.getTime() + 3 * 3_600_000).toISOString().slice(0, 19)}+03:00`;
    expect((await balanceAsOf(org, wallet, nairobi)).as_of).toBe(t1.toISOString());
    // Without as_of, the balance as it is.
    expect(await balanceOf(t, wallet, org.key)).not.toHaveProperty('as_of');
    await expectLedgerHealthy(t);
  });

  it('statements show posted money: a payout when it settles (with its fee), never a failed one', async () => {
    const org = await configured();
    const fees = await api(t, 'PUT', '/v1/fee-schedule', {
      key: org.key,
      body: { rules: [{ id: 'mm', rail: 'mobile_money', currency: 'KES', type: 'fixed', fixed: '5.00' }] },
    });
    expect(fees.statusCode, fees.body).toBe(200);
    const wallet = (await newWallet(org)).id;
    await fund(org, wallet, '500.00');
    await sleep(2);
    const from = new Date();
    const payout = async (phone: string, amount: string) => {
      const made = await api(t, 'POST', '/v1/transfers', {
        key: org.key,
        body: { source: wallet, destination: mobileMoney(phone), amount, currency: 'KES' },
      });
      expect(made.statusCode, made.body).toBe(201);
      return made.data.id as string;
    };
    const settled = await payout(SETTLE_PHONE, '100.00');
    const failed = await payout(FAIL_PHONE, '50.00');
    const open = await payout(TIMEOUT_PHONE, '30.00');
    await sleep(2);
    const held = new Date();
    await sleep(2);
    await drainRails(t);
    for (const [id, status] of [
      [settled, 'settled'],
      [failed, 'failed'],
    ]) {
      expect((await api(t, 'GET', `/v1/transfers/${id}`, { key: org.key })).data.status).toBe(status);
    }
    await sleep(2);
    const end = new Date();

    // Until it settles, a payout is held: the balance as of then shows it pending, not posted.
    expect(await balanceAsOf(org, wallet, held)).toMatchObject({
      current: '500.00',
      pending: '195.00',
      available: '305.00',
    });
    expect(await balanceAsOf(org, wallet, end)).toMatchObject({
      current: '395.00',
      pending: '35.00',
      available: '360.00',
    });

    const s = (await statement(org, wallet, period(from, end))).data;
    expect(s).toMatchObject({ opening_balance: '500.00', closing_balance: '395.00', entry_count: 1 });
    expect(s.entries[0]).toMatchObject({
      kind: 'post',
      transfer: settled,
      amount: '-105.00',
      fee: '5.00',
      balance: '395.00',
      rail: 'mobile_money',
      description: 'Payout by mobile_money',
      counterparty: 'mpesa +254••••••00',
    });
    expect(s.entries.map((e: any) => e.transfer)).not.toContain(failed);
    expect(s.entries.map((e: any) => e.transfer)).not.toContain(open);
    expectArithmetic(s);

    // A period not over yet is the statement so far.
    const running = await statement(
      org,
      wallet,
      `from=${encodeURIComponent(from.toISOString())}&to=2099-01-01`,
    );
    expectProblem(running, 400, 'validation_error', 'to');
    const soFar = (await statement(org, wallet, period(from, new Date(Date.now() + 86_400_000)))).data;
    expect(soFar).toMatchObject({ complete: false, closing_balance: '395.00', entry_count: 1 });
    expect(soFar.to).toBe(soFar.generated_at);

    // CSV, by `format` or by `Accept`, read back: the same lines, the same arithmetic.
    const csv = await statement(org, wallet, `${period(from, end)}&format=csv`);
    expect(csv.statusCode, csv.body).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toMatch(
      new RegExp(`^attachment; filename="statement-${wallet}-\\d{8}T\\d{6}Z-\\d{8}T\\d{6}Z\\.csv"$`),
    );
    const byAccept = await statement(org, wallet, period(from, end), { accept: 'text/csv' });
    expect(byAccept.body).toBe(csv.body);
    expect(csv.body).toMatch(/^row,entry,posted_at,[a-z_,]+\r\nopening,/);
    expect(csv.body.endsWith('\r\n')).toBe(true);
    const rows = rfc4180Rows(csv.body);
    expect(Object.keys(rows[0] ?? {})).toEqual([
      'row',
      'entry',
      'posted_at',
      'kind',
      'description',
      'counterparty',
      'transfer',
      'rail',
      'rail_reference',
      'amount',
      'fee',
      'balance',
      'currency',
    ]);
    expect(rows.map((r) => r.row)).toEqual(['opening', 'entry', 'closing']);
    expect(rows[0]).toMatchObject({ posted_at: s.from, balance: '500.00', amount: '', currency: 'KES' });
    expect(rows.at(-1)).toMatchObject({ posted_at: s.to, balance: '395.00' });
    const lines = rows.slice(1, -1);
    expect(lines).toEqual(
      s.entries.map((e: any) => ({
        row: 'entry',
        entry: e.entry,
        posted_at: e.posted_at,
        kind: e.kind,
        description: e.description,
        counterparty: e.counterparty ?? '',
        transfer: e.transfer ?? '',
        rail: e.rail ?? '',
        rail_reference: e.rail_reference ?? '',
        amount: e.amount,
        fee: e.fee,
        balance: e.balance,
        currency: 'KES',
      })),
    );
    const cents = (v: string | undefined) => Math.round(Number(v) * 100);
    expect(cents(rows[0]?.balance) + lines.reduce((sum, r) => sum + cents(r.amount), 0)).toBe(
      cents(rows.at(-1)?.balance),
    );
    await expectLedgerHealthy(t);
  });

  it('a statement read while transfers commit is one snapshot', async () => {
    const org = await configured();
    const wallet = (await newWallet(org)).id;
    const payee = (await newWallet(org)).id;
    await fund(org, wallet, '1000.00');
    await sleep(2);
    const from = new Date();
    const until = new Date(Date.now() + 86_400_000);
    const reads: ApiResponse[] = [];
    await Promise.all([
      ...Array.from({ length: CONCURRENT_TRANSFERS }, () => move(org, wallet, payee, '1.00')),
      ...Array.from({ length: CONCURRENT_STATEMENTS }, async (_, i) => {
        await sleep(i * 3);
        reads.push(await statement(org, wallet, period(from, until)));
      }),
    ]);
    for (const read of reads) {
      expect(read.statusCode, read.body).toBe(200);
      const s = read.data;
      expect(s.opening_balance).toBe('1000.00');
      expectArithmetic(s);
      // Every transfer in the closing balance is on the statement, and no other.
      expect(s.entries).toHaveLength(Math.round((1000 - Number(s.closing_balance)) / 1));
      expect(s.entries.every((e: any) => e.amount === '-1.00')).toBe(true);
    }
    const last = (await statement(org, wallet, period(from, until))).data;
    expect(last).toMatchObject({
      closing_balance: `${1000 - CONCURRENT_TRANSFERS}.00`,
      entry_count: CONCURRENT_TRANSFERS,
    });
    await expectLedgerHealthy(t);
  });

  // PGlite runs one transaction at a time, so nothing can commit inside a statement's read there.
  it.skipIf(backend === 'pglite')(
    'a transfer committing late between a statement’s reads is in none of them',
    async () => {
      const org = await configured();
      const now = Date.now();
      const minutesAgo = (m: number) => new Date(now - m * 60_000);
      const [wallet, payee] = await at(minutesAgo(50), async () => [
        (await newWallet(org)).id as string,
        (await newWallet(org)).id as string,
      ]);
      await at(minutesAgo(40), () => fund(org, wallet, '100.00'));
      const closed = period(minutesAgo(45), minutesAgo(10));
      // Right after the statement's first read (its opening and closing balances), a transfer stamped inside
      // the period commits on another connection, as one begun before the period ended and committing late
      // would; the entries are read after it.
      const store = t.deps.store;
      let injected: Promise<unknown> | undefined;
      t.deps.store = {
        ...store,
        transaction: (fn) =>
          store.transaction((tx) =>
            fn({
              ...tx,
              query: async (sql, params) => {
                const rows = await tx.query(sql, params);
                if (sql.includes('since_from_minor') && injected === undefined) {
                  injected = at(minutesAgo(20), () => move(org, wallet, payee, '1.00'));
                  await injected;
                }
                return rows as never;
              },
            }),
          ),
      };
      let read: ApiResponse;
      try {
        read = await statement(org, wallet, closed);
      } finally {
        t.deps.store = store;
      }
      expect(injected).toBeDefined();
      expect(read.statusCode, read.body).toBe(200);
      expect(read.data).toMatchObject({ opening_balance: '0.00', closing_balance: '100.00', entry_count: 1 });
      // Read again, the late entry is there, in the balances and in the entries alike.
      const again = (await statement(org, wallet, closed)).data;
      expect(again).toMatchObject({ opening_balance: '0.00', closing_balance: '99.00', entry_count: 2 });
      expectArithmetic(again);
      await expectLedgerHealthy(t);
    },
  );

  it('a period holding more entries than a statement lists is a 422', async () => {
    const org = await configured();
    const wallet = (await newWallet(org)).id;
    await fund(org, wallet, '1.00');
    await sleep(2);
    const from = new Date();
    // Many small balanced entries written at once (the settlement account pays the wallet), sums kept.
    const [settlement] = await t.db.store.query<{ id: string }>(
      "SELECT id FROM ledger_accounts WHERE organization_id = $1 AND kind = 'rail_settlement' AND currency = 'KES'",
      [org.organizationId],
    );
    const prefix = formatId(ID_PREFIXES.journalEntry, Date.now(), new Uint8Array(10)).slice(0, 13);
    await t.db.store.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO journal_entries (id, organization_id, transfer_id, kind, hold_entry_id, currency, created_at)
         SELECT $1 || lpad(g::text, 16, '0'), $2, NULL, 'direct', NULL, 'KES', $4
           FROM generate_series(1, $3::int) g`,
        [prefix, org.organizationId, TOO_MANY_ENTRIES, new Date()],
      );
      await tx.query(
        `INSERT INTO postings (entry_id, line, account_id, side, phase, releases_hold, amount_minor, currency)
         SELECT $1 || lpad(g::text, 16, '0'), l.line, CASE l.line WHEN 1 THEN $2 ELSE $3 END,
                CASE l.line WHEN 1 THEN 'debit' ELSE 'credit' END, 'posted', false, 1, 'KES'
           FROM generate_series(1, $4::int) g CROSS JOIN (VALUES (1), (2)) AS l(line)`,
        [prefix, settlement?.id, wallet, TOO_MANY_ENTRIES],
      );
      await tx.query(`UPDATE ledger_accounts SET credits_posted = credits_posted + $2 WHERE id = $1`, [
        wallet,
        TOO_MANY_ENTRIES,
      ]);
      await tx.query(`UPDATE ledger_accounts SET debits_posted = debits_posted + $2 WHERE id = $1`, [
        settlement?.id,
        TOO_MANY_ENTRIES,
      ]);
    });
    await sleep(2);
    const to = new Date();
    expectProblem(await statement(org, wallet, period(from, to)), 422, 'statement_too_large', 'to');
    // The balance as of any instant is still exact.
    expect((await balanceAsOf(org, wallet, to)).current).toBe('101.01');
    expect((await balanceAsOf(org, wallet, from)).current).toBe('1.00');
    await expectLedgerHealthy(t);
  });

  it('bad periods and instants are problems naming the parameter', async () => {
    const org = await configured();
    const wallet = (await newWallet(org)).id;
    expectProblem(await statement(org, wallet, 'to=2026-11-01'), 400, 'validation_error', 'from');
    expectProblem(
      await statement(org, wallet, 'from=yesterday&to=2026-11-01'),
      400,
      'validation_error',
      'from',
    );
    expectProblem(
      await statement(org, wallet, 'from=2026-11-02&to=2026-11-01'),
      400,
      'validation_error',
      'to',
    );
    expectProblem(
      await statement(org, wallet, 'from=2024-01-01&to=2025-12-31'),
      400,
      'validation_error',
      'to',
    );
    expectProblem(
      await statement(org, wallet, 'from=2026-11-01&to=2026-11-02&format=pdf'),
      400,
      'validation_error',
      'format',
    );
    expectProblem(
      await statement(org, wallet, 'from=2026-11-01&to=2026-11-02&extra=1'),
      400,
      'validation_error',
    );
    const future = new Date(Date.now() + 3_600_000).toISOString();
    for (const asOf of [future, '2026-13-01', 'now']) {
      const read = await api(t, 'GET', `/v1/wallets/${wallet}/balance?as_of=${encodeURIComponent(asOf)}`, {
        key: org.key,
      });
      expectProblem(read, 400, 'validation_error', 'as_of');
    }
    const stranger = await newOrganization(t);
    expectProblem(
      await statement(stranger, wallet, 'from=2026-11-01&to=2026-11-02'),
      404,
      'resource_missing',
    );
    expectProblem(
      await api(t, 'GET', `/v1/wallets/${wallet}/balance?as_of=2026-11-01`, { key: stranger.key }),
      404,
      'resource_missing',
    );
  });
});
