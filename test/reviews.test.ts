/**
 * The review queue through HTTP: a payout whose beneficiary matches the sanctions list is held `in_review`
 * with its funds held and never reaches the rail; an operator clears it (it goes on) or rejects it (it is
 * rejected, the hold released once, the wallet frozen); the integrator sees none of the list; decisions
 * race to one outcome; the ledger and the evidence chain stay intact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import { SANCTIONS_NAME_CHARS_MAX } from '../src/domain/screening/listFile.ts';
import { api, BACKENDS, complianceKey, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, drainRails, expectLedgerHealthy, fundedWallet } from './support/ledger.ts';

/** On the sample sanctions list the sandbox seed loads (data/sanctions/sample.csv, entry MKS-0001). */
const LISTED_NAME = 'Viktor Dragomirov';
const DECISION_RACES = 4;
const NAME_CHARS_TOO_MANY = SANCTIONS_NAME_CHARS_MAX + 1;

function payoutTo(name: string, amount = '100.00') {
  return { type: 'mobile_money', network: 'mpesa', phone: '+254711222333', name, amount };
}

describe.each(BACKENDS)('reviews on %s', (backend) => {
  let t: TestApp;
  let operator: string;

  beforeAll(async () => {
    t = await startTestApp(backend);
    operator = await complianceKey(t);
  });
  afterAll(async () => {
    await t.close();
  });

  async function pay(wallet: string, name: string, amount = '100.00') {
    const { amount: _, ...destination } = payoutTo(name, amount);
    return api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination, amount, currency: 'KES' },
    });
  }

  async function openCaseOf(transfer: string) {
    const list = await api(t, 'GET', `/v1/reviews?transfer=${transfer}`, { key: operator });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.data.data).toHaveLength(1);
    return list.data.data[0];
  }

  it('holds a payout to a listed beneficiary in review, funds held, off the rail, invisible to the integrator', async () => {
    const wallet = await fundedWallet(t, '500.00');
    const held = await pay(wallet, 'Mr. viktor DRAGOMIROV');
    expect(held.statusCode, held.body).toBe(201);
    expect(held.data).toMatchObject({
      status: 'in_review',
      status_reason: 'compliance_review',
      ledger_state: 'pending',
    });
    expect(held.body).not.toMatch(/MKS-|SANDBOX-|score|program/);
    expect(await balanceOf(t, wallet)).toMatchObject({
      available: '400.00',
      pending: '100.00',
      current: '500.00',
    });

    await drainRails(t);
    const after = await api(t, 'GET', `/v1/transfers/${held.data.id}`);
    expect(after.data.status).toBe('in_review');
    expect(after.body).not.toMatch(/MKS-|SANDBOX-|score|program/);
    const cancel = await api(t, 'POST', `/v1/transfers/${held.data.id}/cancel`);
    expect(cancel.statusCode).toBe(409);

    const reviewCase = await openCaseOf(held.data.id);
    expect(reviewCase).toMatchObject({
      object: 'review',
      kind: 'screening',
      status: 'open',
      wallet,
      transfer: held.data.id,
    });
    expect(
      reviewCase.findings.screening.hits[0].entry_id ?? reviewCase.findings.screening.hits[0].entryId,
    ).toBe('MKS-0001');
    expect((await api(t, 'GET', '/v1/reviews')).statusCode).toBe(403);
    expect((await api(t, 'GET', `/v1/reviews/${reviewCase.id}`)).statusCode).toBe(403);
  });

  it('screens a bank beneficiary too, and refuses an unscreenable name naming the field', async () => {
    const wallet = await fundedWallet(t, '500.00');
    const bank = await api(t, 'POST', '/v1/transfers', {
      body: {
        source: wallet,
        destination: {
          type: 'bank_account',
          bank_code: 'KCBLKENX',
          account_number: '1234567890',
          account_name: 'Zenith Maritime Holdings',
        },
        amount: '150.00',
        currency: 'KES',
      },
    });
    expect(bank.statusCode, bank.body).toBe(201);
    expect(bank.data.status).toBe('in_review');
    const long = await pay(wallet, 'x'.repeat(NAME_CHARS_TOO_MANY));
    expect(long.statusCode).toBe(400);
    expect(long.data.param).toBe('destination.name');
    expect(await balanceOf(t, wallet)).toMatchObject({ pending: '150.00' });
  });

  it('a near miss is not held', async () => {
    const wallet = await fundedWallet(t, '500.00');
    const clean = await pay(wallet, 'Victoria Dragon');
    expect(clean.statusCode, clean.body).toBe(201);
    expect(clean.data.status).toBe('pending');
  });

  it('clearing sends the transfer on to the rail, and records the decision as evidence', async () => {
    const wallet = await fundedWallet(t, '500.00');
    const held = await pay(wallet, LISTED_NAME);
    const reviewCase = await openCaseOf(held.data.id);
    const ordinary = await api(t, 'POST', `/v1/reviews/${reviewCase.id}/clear`, { body: {} });
    expect(ordinary.statusCode).toBe(403);
    const cleared = await api(t, 'POST', `/v1/reviews/${reviewCase.id}/clear`, {
      key: operator,
      body: { note: 'different person: date of birth differs' },
    });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(cleared.data).toMatchObject({
      status: 'cleared',
      note: 'different person: date of birth differs',
    });
    expect(cleared.data.decided_by).toMatch(/^key_/);
    expect((await api(t, 'GET', `/v1/transfers/${held.data.id}`)).data.status).toBe('pending');
    await drainRails(t);
    expect((await api(t, 'GET', `/v1/transfers/${held.data.id}`)).data.status).toBe('settled');
    expect(await balanceOf(t, wallet)).toMatchObject({
      available: '400.00',
      pending: '0.00',
      current: '400.00',
    });

    const again = await api(t, 'POST', `/v1/reviews/${reviewCase.id}/reject`, { key: operator, body: {} });
    expect(again.statusCode).toBe(409);
    expect(again.data.code).toBe('invalid_state_transition');

    const evidence = await api(t, 'GET', `/v1/transfers/${held.data.id}/evidence`, { key: operator });
    expect(evidence.data.data.map((r: any) => r.kind)).toEqual(['review.disposition', 'transfer.decision']);
    const [disposition, decision] = evidence.data.data;
    expect(decision.data).toMatchObject({ outcome: 'review', screening: { decision: 'hit' } });
    expect(decision.data.screening.list_version).toMatch(/^sl_/);
    expect(disposition.data).toMatchObject({
      decision: 'clear',
      review_kind: 'screening',
      wallet_frozen: false,
    });
  });

  it('rejecting rejects the transfer, releases its hold and freezes the wallet', async () => {
    const wallet = await fundedWallet(t, '500.00');
    const held = await pay(wallet, LISTED_NAME, '250.00');
    const reviewCase = await openCaseOf(held.data.id);
    const rejected = await api(t, 'POST', `/v1/reviews/${reviewCase.id}/reject`, {
      key: operator,
      body: { note: 'confirmed match' },
    });
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(rejected.data.status).toBe('rejected');
    const transfer = await api(t, 'GET', `/v1/transfers/${held.data.id}`);
    expect(transfer.data).toMatchObject({
      status: 'rejected',
      ledger_state: 'voided',
      failure_code: 'compliance_rejected',
    });
    expect(await balanceOf(t, wallet)).toMatchObject({
      available: '500.00',
      pending: '0.00',
      current: '500.00',
    });
    const walletAfter = await api(t, 'GET', `/v1/wallets/${wallet}`);
    expect(walletAfter.data).toMatchObject({ status: 'frozen', status_reason: 'sanctions_match' });
    const events = await api(t, 'GET', `/v1/events?type=transfer.rejected`);
    expect(events.data.data.some((e: any) => e.data.transfer_id === held.data.id)).toBe(true);
  });

  it('a rail credit for a frozen wallet is held for review: cleared it is credited, rejected it goes back', async () => {
    const wallet = await fundedWallet(t, '10.00');
    expect(
      (
        await api(t, 'POST', `/v1/wallets/${wallet}/freeze`, {
          key: operator,
          body: { reason: 'court_order' },
        })
      ).statusCode,
    ).toBe(200);
    const credits = [];
    for (const amount of ['30.00', '40.00']) {
      const credit = await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, { body: { amount } });
      expect(credit.statusCode, credit.body).toBe(201);
      expect(credit.data).toMatchObject({
        status: 'in_review',
        direction: 'inbound',
        ledger_state: 'pending',
      });
      credits.push(credit.data.id);
    }
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '10.00', current: '10.00' });
    const [letIn, sendBack] = await Promise.all(credits.map((id) => openCaseOf(id)));
    expect(letIn).toMatchObject({ kind: 'frozen_wallet', findings: { reason: 'credit_to_frozen_wallet' } });
    expect(
      (await api(t, 'POST', `/v1/reviews/${letIn.id}/clear`, { key: operator, body: {} })).statusCode,
    ).toBe(200);
    expect(
      (await api(t, 'POST', `/v1/reviews/${sendBack.id}/reject`, { key: operator, body: {} })).statusCode,
    ).toBe(200);
    expect((await api(t, 'GET', `/v1/transfers/${credits[0]}`)).data).toMatchObject({
      status: 'settled',
      ledger_state: 'posted',
    });
    expect((await api(t, 'GET', `/v1/transfers/${credits[1]}`)).data).toMatchObject({
      status: 'rejected',
      ledger_state: 'voided',
    });
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '40.00', current: '40.00' });
    expect((await api(t, 'GET', `/v1/wallets/${wallet}`)).data.status).toBe('frozen');
    await expectLedgerHealthy(t);
  });

  it('a clear racing a reject on one case decides it once, and the hold is released or posted once', async () => {
    for (let i = 0; i < DECISION_RACES; i++) {
      const wallet = await fundedWallet(t, '100.00');
      const held = await pay(wallet, LISTED_NAME, '60.00');
      const reviewCase = await openCaseOf(held.data.id);
      const [clear, reject] = await Promise.all([
        api(t, 'POST', `/v1/reviews/${reviewCase.id}/clear`, { key: operator, body: {} }),
        api(t, 'POST', `/v1/reviews/${reviewCase.id}/reject`, { key: operator, body: {} }),
      ]);
      expect([clear.statusCode, reject.statusCode].sort()).toEqual([200, 409]);
      const status = (await api(t, 'GET', `/v1/transfers/${held.data.id}`)).data.status;
      expect(status).toBe(clear.statusCode === 200 ? 'pending' : 'rejected');
    }
    await drainRails(t);
    await expectLedgerHealthy(t);
    const chains = await runAdminCommand(t.deps, { name: 'evidence.verify' });
    if (chains.name !== 'evidence.verify') throw new Error('wrong result');
    expect(chains.chains.filter((c) => c.break)).toEqual([]);
  });
});
