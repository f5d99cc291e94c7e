/**
 * Reconciliation through HTTP: a sandbox rail statement with every kind of difference imported; matched
 * transfers become `ledger_state: matched`; a timed-out transfer is settled by the statement; every
 * difference opens an exception that an operator resolves (manual match, write-off, fee, refund), each
 * once, with a balanced entry where money moves; the ledger stays exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import type { RailAdapter } from '../src/rails/rail.ts';
import { sandboxRails } from '../src/rails/sandbox.ts';
import { api, BACKENDS, newOrganizationKey, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, drainRails, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';

const DAY_MS = 86_400_000;

describe.each(BACKENDS)('reconciliation on %s', (backend) => {
  let t: TestApp;
  const realNow = () => new Date();
  const today = () => new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await t.close();
  });

  /** Payouts of `amount`, or of 10.00, 11.00, 12.00… when none is given (each then told apart by amount). */
  async function payouts(key: string, wallet: string, phones: string[], amount?: string) {
    const ids: string[] = [];
    for (const [i, phone] of phones.entries()) {
      const created = await api(t, 'POST', '/v1/transfers', {
        key,
        body: {
          source: wallet,
          destination: mobileMoney(phone),
          amount: amount ?? `${10 + i}.00`,
          currency: 'KES',
        },
      });
      expect(created.statusCode, created.body).toBe(201);
      ids.push(created.data.id);
    }
    await drainRails(t);
    return ids;
  }

  it('imports a statement with every kind of difference, and each is resolved once', async () => {
    const { key } = await newOrganization(t);
    const wallet = await fundedWallet(t, '1000.00', 'KES', key);
    const ids = await payouts(key, wallet, [
      '+254711000801',
      '+254711000802',
      '+254711000803',
      '+254711000804',
      '+254711000805',
      '+254711000806',
      '+254700000003',
    ]);
    const timedOut = ids[6] as string;
    expect((await api(t, 'GET', `/v1/transfers/${timedOut}`, { key })).data.status).toBe('processing');
    const statement = await api(t, 'POST', '/v1/sandbox/statements', {
      key,
      body: {
        rail: 'mobile_money',
        from: today(),
        to: today(),
        mismatches: ['amount', 'fee', 'status', 'omit', 'no_reference', 'unknown'],
      },
    });
    expect(statement.statusCode, statement.body).toBe(200);
    expect(statement.data.lines).toHaveLength(7);
    // Imported two days later, so a settled transfer the statement leaves out counts as missing.
    t.deps.now = () => new Date(Date.now() + 2 * DAY_MS);
    let imported: Awaited<ReturnType<typeof api>>;
    try {
      imported = await api(t, 'POST', '/v1/reconciliation/statements', {
        key,
        body: { rail: 'mobile_money', from: today(), to: today(), lines: statement.data.lines },
      });
    } finally {
      t.deps.now = realNow;
    }
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.data).toMatchObject({ object: 'statement', lines: 7, matched: 3, exceptions: 5 });
    const again = await api(t, 'POST', '/v1/reconciliation/statements', {
      key,
      body: { rail: 'mobile_money', from: today(), to: today(), lines: statement.data.lines },
    });
    expect(again.statusCode).toBe(409);
    expect(again.data.code).toBe('statement_already_imported');

    const stateOf = async (id: string) => (await api(t, 'GET', `/v1/transfers/${id}`, { key })).data;
    expect(await stateOf(timedOut)).toMatchObject({ status: 'settled', ledger_state: 'matched' });
    expect((await stateOf(ids[4] as string)).ledger_state).toBe('matched'); // matched by amount and date
    const open = (await api(t, 'GET', '/v1/reconciliation/exceptions?status=open', { key })).data.data;
    const byKind = Object.fromEntries(open.map((e: { kind: string }) => [e.kind, e]));
    expect(Object.keys(byKind).sort()).toEqual([
      'amount_mismatch',
      'fee_mismatch',
      'missing_from_statement',
      'status_mismatch',
      'unmatched_line',
    ]);
    expect(await stateOf(byKind.amount_mismatch.transfer)).toMatchObject({ ledger_state: 'exception' });

    const resolve = (id: string, body: Record<string, unknown>) =>
      api(t, 'POST', `/v1/reconciliation/exceptions/${id}/resolve`, { key, body });
    const wrong = await resolve(byKind.fee_mismatch.id, { action: 'write_off', note: 'x' });
    expect(wrong.statusCode).toBe(422);
    const writeOff = await resolve(byKind.amount_mismatch.id, { action: 'write_off', note: 'rail rounding' });
    expect(writeOff.data).toMatchObject({
      status: 'resolved',
      resolution: 'write_off',
      note: 'rail rounding',
    });
    expect(writeOff.data.journal_entry).toMatch(/^je_/);
    const [first, second] = await Promise.all([
      resolve(byKind.fee_mismatch.id, { action: 'book_fee', note: 'monthly fee' }),
      resolve(byKind.fee_mismatch.id, { action: 'book_fee', note: 'monthly fee' }),
    ]);
    expect([first.statusCode, second.statusCode].sort()).toEqual([200, 409]);
    const before = await balanceOf(t, wallet, key);
    const refund = await resolve(byKind.status_mismatch.id, {
      action: 'refund',
      note: 'rail says it failed',
    });
    expect(refund.statusCode, refund.body).toBe(200);
    const after = await balanceOf(t, wallet, key);
    expect(Number(after.available) - Number(before.available)).toBeCloseTo(12, 5);
    expect(await stateOf(byKind.status_mismatch.transfer)).toMatchObject({
      status: 'returned',
      ledger_state: 'matched',
    });
    const needTransfer = await resolve(byKind.unmatched_line.id, {
      action: 'manual_match',
      note: 'found it',
    });
    expect(needTransfer.data).toMatchObject({ status: 400, param: 'transfer' });
    expect(
      (await resolve(byKind.unmatched_line.id, { action: 'write_off', note: 'not ours' })).statusCode,
    ).toBe(200);
    expect(
      (await resolve(byKind.missing_from_statement.id, { action: 'manual_match', note: 'on next statement' }))
        .statusCode,
    ).toBe(200);
    for (const id of ids) expect((await stateOf(id)).ledger_state).toBe('matched');
    const matchedEvents = await api(t, 'GET', '/v1/events?type=ledger.matched&limit=100', { key });
    expect(matchedEvents.data.data.length).toBe(7);
    const evidence = await api(t, 'GET', '/v1/evidence?kind=reconciliation.resolution', { key });
    expect(evidence.data.data).toHaveLength(5);
    expect((await api(t, 'GET', '/v1/reconciliation/exceptions?status=open', { key })).data.data).toEqual([]);
    const other = await newOrganizationKey(t, ['read', 'compliance']);
    expect(
      (await api(t, 'GET', `/v1/reconciliation/exceptions/${byKind.fee_mismatch.id}`, { key: other }))
        .statusCode,
    ).toBe(404);
    await expectLedgerHealthy(t);
  });

  it('matches a line that covers several transfers, fails a timed-out transfer the rail reports failed, and applies a statement once under a race', async () => {
    const { key } = await newOrganization(t);
    const wallet = await fundedWallet(t, '100.00', 'KES', key);
    const [a, b] = await payouts(key, wallet, ['+254711000901', '+254711000902'], '10.00');
    const [c] = await payouts(key, wallet, ['+254711000903'], '15.00');
    const [late] = await payouts(key, wallet, ['+254700000003'], '7.00');
    const importing = () =>
      api(t, 'POST', '/v1/reconciliation/statements', {
        key,
        body: {
          rail: 'mobile_money',
          from: today(),
          to: today(),
          lines: [
            {
              rail_reference: null,
              amount: '35.00',
              currency: 'KES',
              value_date: today(),
              status: 'settled',
            },
            {
              rail_reference: `sim_${late}`,
              amount: '7.00',
              currency: 'KES',
              value_date: today(),
              status: 'failed',
            },
          ],
        },
      });
    // The same statement imported twice at once: one import applies it, the other is told it was.
    const both = await Promise.all([importing(), importing()]);
    expect(both.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    const imported = both.find((r) => r.statusCode === 201) as Awaited<ReturnType<typeof api>>;
    expect(both.find((r) => r.statusCode === 409)?.data.code).toBe('statement_already_imported');
    expect(imported.data).toMatchObject({ matched: 4, exceptions: 0 });
    for (const id of [a, b, c]) {
      expect((await api(t, 'GET', `/v1/transfers/${id}`, { key })).data.ledger_state).toBe('matched');
    }
    expect((await api(t, 'GET', `/v1/transfers/${late}`, { key })).data).toMatchObject({
      status: 'failed',
      failure_code: 'rail_reported_failed',
      ledger_state: 'matched',
    });
    expect(await balanceOf(t, wallet, key)).toMatchObject({ available: '65.00', pending: '0.00' });
    await expectLedgerHealthy(t);
  });

  /** The sandbox statement of today, its lines by rail reference. */
  async function statedToday(key: string) {
    const statement = await api(t, 'POST', '/v1/sandbox/statements', {
      key,
      body: { rail: 'mobile_money', from: today(), to: today() },
    });
    expect(statement.statusCode, statement.body).toBe(200);
    return Object.fromEntries(
      statement.data.lines.map((l: { rail_reference: string; amount: string; status: string }) => [
        l.rail_reference,
        { amount: l.amount, status: l.status },
      ]),
    );
  }

  it('states a payout refused before it reached the partner nowhere: the rail never carried it', async () => {
    const { key } = await newOrganization(t);
    const wallet = await fundedWallet(t, '1000.00', 'KES', key);
    const created = await api(t, 'POST', '/v1/transfers', {
      key,
      body: { source: wallet, destination: mobileMoney('+254711000951'), amount: '9.00', currency: 'KES' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const refused = created.data.id as string;
    const refusing: RailAdapter = {
      submit: async () => ({ accepted: false, failureCode: 'amount_not_supported' }),
      check: async () => ({ kind: 'settled' }),
    };
    await runRailWorkerOnce(t.deps, { ...sandboxRails(), mobile_money: refusing });
    expect((await api(t, 'GET', `/v1/transfers/${refused}`, { key })).data).toMatchObject({
      status: 'failed',
      failure_code: 'amount_not_supported',
      rail_reference: null,
    });
    const [fails] = await payouts(key, wallet, ['+254700000001']);
    expect(await statedToday(key)).toEqual({ [`sim_${fails}`]: { amount: '10.00', status: 'failed' } });
  });

  it('states every payout the rail carried, whether the ledger matched it or holds it in exception', async () => {
    const { key } = await newOrganization(t);
    const wallet = await fundedWallet(t, '1000.00', 'KES', key);
    const [settles, fails, timesOut] = (await payouts(key, wallet, [
      '+254711000952',
      '+254700000001',
      '+254700000003',
    ])) as [string, string, string];
    const carried = {
      [`sim_${settles}`]: { amount: '10.00', status: 'settled' },
      [`sim_${fails}`]: { amount: '11.00', status: 'failed' },
      [`sim_${timesOut}`]: { amount: '12.00', status: 'settled' },
    };
    expect(await statedToday(key)).toEqual(carried);
    // The first payout imported an amount apart (an exception), the others matched.
    const first = await api(t, 'POST', '/v1/sandbox/statements', {
      key,
      body: { rail: 'mobile_money', from: today(), to: today(), mismatches: ['amount'] },
    });
    const imported = await api(t, 'POST', '/v1/reconciliation/statements', {
      key,
      body: { rail: 'mobile_money', from: today(), to: today(), lines: first.data.lines },
    });
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.data).toMatchObject({ lines: 3, matched: 2, exceptions: 1 });
    const ledgerStateOf = async (id: string) =>
      (await api(t, 'GET', `/v1/transfers/${id}`, { key })).data.ledger_state;
    expect([await ledgerStateOf(settles), await ledgerStateOf(fails), await ledgerStateOf(timesOut)]).toEqual(
      ['exception', 'matched', 'matched'],
    );
    expect(await statedToday(key)).toEqual(carried);
  });

  it('matches again a payout an earlier, overlapping statement matched; a line now disagreeing is an exception', async () => {
    const { key } = await newOrganization(t);
    const wallet = await fundedWallet(t, '1000.00', 'KES', key);
    const importToday = async (mismatches: string[] = []) => {
      const stated = await api(t, 'POST', '/v1/sandbox/statements', {
        key,
        body: { rail: 'mobile_money', from: today(), to: today(), mismatches },
      });
      expect(stated.statusCode, stated.body).toBe(200);
      const imported = await api(t, 'POST', '/v1/reconciliation/statements', {
        key,
        body: { rail: 'mobile_money', from: today(), to: today(), lines: stated.data.lines },
      });
      expect(imported.statusCode, imported.body).toBe(201);
      return imported.data;
    };
    const [first] = (await payouts(key, wallet, ['+254711000953', '+254711000954'])) as [string, string];
    expect(await importToday()).toMatchObject({ lines: 2, matched: 2, exceptions: 0 });
    // A later statement of the same day carries both again, and one more: all three agree.
    await payouts(key, wallet, ['+254711000955'], '20.00');
    expect(await importToday()).toMatchObject({ lines: 3, matched: 3, exceptions: 0 });
    const open = await api(t, 'GET', '/v1/reconciliation/exceptions?status=open', { key });
    expect(open.data.data).toEqual([]);
    // The rail later states an amount apart for a payout matched before: that is a difference to look at.
    expect(await importToday(['amount'])).toMatchObject({ lines: 3, matched: 2, exceptions: 1 });
    const [difference] = (await api(t, 'GET', '/v1/reconciliation/exceptions?status=open', { key })).data
      .data;
    expect(difference).toMatchObject({ kind: 'amount_mismatch', transfer: first });
    // Matched is final: the payout stays matched while the difference is looked at.
    expect((await api(t, 'GET', `/v1/transfers/${first}`, { key })).data.ledger_state).toBe('matched');
  });

  it('refuses a malformed statement naming each faulty line, and imports nothing; it is for operators', async () => {
    const { key } = await newOrganization(t);
    const refused = await api(t, 'POST', '/v1/reconciliation/statements', {
      key,
      body: {
        rail: 'mobile_money',
        from: today(),
        to: today(),
        lines: [
          { amount: '1.00', currency: 'KES', value_date: today(), status: 'settled' },
          { amount: '1.001', currency: 'KES', value_date: today(), status: 'settled' },
          { amount: '1.00', currency: 'KES', value_date: '24/11/2026', status: 'settled' },
        ],
      },
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.data.errors.map((e: { row: number; param: string }) => [e.row, e.param])).toEqual([
      [2, 'lines.1.amount'],
      [3, 'lines.2.value_date'],
    ]);
    expect((await api(t, 'GET', '/v1/reconciliation/exceptions', { key })).data.data).toEqual([]);
    const csv = `rail_reference,amount,currency,value_date,status,fees\r\nsim_nothing,5.00,KES,${today()},settled,0.00\r\n`;
    const uploaded = await api(
      t,
      'POST',
      `/v1/reconciliation/statements?rail=mobile_money&from=${today()}&to=${today()}`,
      {
        key,
        body: csv,
        headers: { 'content-type': 'text/csv' },
      },
    );
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    expect(uploaded.data).toMatchObject({ lines: 1, exceptions: 1 });
    // Records ended by a bare LF, as many tools write them, are read the same.
    const unixCsv = `rail_reference,amount,currency,value_date,status,fees\n"sim_lf,1",6.00,KES,${today()},settled,0.00\nsim_lf_2,7.00,KES,${today()},failed,0.00\n`;
    const unixUpload = await api(
      t,
      'POST',
      `/v1/reconciliation/statements?rail=mobile_money&from=${today()}&to=${today()}`,
      { key, body: unixCsv, headers: { 'content-type': 'text/csv' } },
    );
    expect(unixUpload.statusCode, unixUpload.body).toBe(201);
    expect(unixUpload.data).toMatchObject({ lines: 2, exceptions: 2 });
    const unmatched = (await api(t, 'GET', '/v1/reconciliation/exceptions?status=open', { key })).data.data;
    expect(
      unmatched.map((e: { details: { rail_reference: string } }) => e.details.rail_reference).sort(),
    ).toEqual(['sim_lf,1', 'sim_lf_2', 'sim_nothing']);
    expect((await api(t, 'GET', '/v1/reconciliation/exceptions', { key: t.key })).statusCode).toBe(403);
  });
});
