/**
 * Freezing, unfreezing and closing wallets through HTTP: operator-only freezes, a frozen wallet that
 * neither sends nor receives (but takes back a return), closing only at zero, the status machine enforced
 * by the database too, races between a close and a credit, evidence and events for every change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import { WALLET_STATUS_TRANSITIONS } from '../src/domain/wallets.ts';
import {
  api,
  BACKENDS,
  complianceKey,
  newOrganizationKey,
  startTestApp,
  type TestApp,
} from './support/harness.ts';
import { balanceOf, drainRails, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';

const CLOSE_RACES = 8;

describe.each(BACKENDS)('wallet freezes and closing on %s', (backend) => {
  let t: TestApp;
  let operator: string;

  beforeAll(async () => {
    t = await startTestApp(backend);
    operator = await complianceKey(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const freeze = (
    wallet: string,
    body: unknown = { reason: 'compliance_review', note: 'case 42' },
    key = operator,
  ) => api(t, 'POST', `/v1/wallets/${wallet}/freeze`, { key, body });
  const unfreeze = (wallet: string, key = operator) =>
    api(t, 'POST', `/v1/wallets/${wallet}/unfreeze`, { key, body: { reason: 'review_cleared' } });
  const close = (wallet: string, key = t.key) =>
    api(t, 'POST', `/v1/wallets/${wallet}/close`, { key, body: { reason: 'customer_request' } });
  const internal = (source: string, destination: string, amount = '10.00') =>
    api(t, 'POST', '/v1/transfers', { body: { source, destination, amount, currency: 'KES' } });

  it('freezing is an operator action: an integrator key gets 403, another organization 404', async () => {
    const wallet = await fundedWallet(t, '100.00');
    const ordinary = await freeze(wallet, undefined, t.key);
    expect(ordinary.statusCode).toBe(403);
    expect(ordinary.data.code).toBe('insufficient_permissions');
    const stranger = await newOrganizationKey(t, ['compliance']);
    expect((await freeze(wallet, undefined, stranger)).statusCode).toBe(404);
    expect((await api(t, 'GET', `/v1/wallets/${wallet}`)).data.status).toBe('active');
  });

  it('refuses a missing or unknown reason naming the field', async () => {
    const wallet = await fundedWallet(t, '0');
    const missing = await freeze(wallet, {});
    expect(missing.statusCode).toBe(400);
    expect(missing.data.param).toBe('reason');
    const unknown = await freeze(wallet, { reason: 'because' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.data.param).toBe('reason');
    const longNote = await freeze(wallet, { reason: 'other', note: 'x'.repeat(501) });
    expect(longNote.statusCode).toBe(400);
    expect(longNote.data.param).toBe('note');
  });

  it('a frozen wallet neither sends nor receives, its event and evidence name the operator, and unfreezing restores it', async () => {
    const wallet = await fundedWallet(t, '500.00');
    const other = await fundedWallet(t, '500.00');
    const frozen = await freeze(wallet);
    expect(frozen.statusCode, frozen.body).toBe(200);
    expect(frozen.data).toMatchObject({ status: 'frozen', status_reason: 'compliance_review' });
    expect(frozen.data.status_changed_at).toEqual(expect.any(String));

    const send = await internal(wallet, other);
    expect(send.statusCode).toBe(409);
    expect(send.data).toMatchObject({ code: 'wallet_not_active', param: 'source' });
    const payout = await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254700000001'), amount: '10.00', currency: 'KES' },
    });
    expect(payout.statusCode).toBe(409);
    const receive = await internal(other, wallet);
    expect(receive.statusCode).toBe(409);
    expect(receive.data).toMatchObject({ code: 'wallet_not_active', param: 'destination' });
    const funding = await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, { body: { amount: '5.00' } });
    expect(funding.statusCode).toBe(201);
    expect(funding.data).toMatchObject({ status: 'in_review', ledger_state: 'pending' });
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '500.00', current: '500.00' });

    const events = await api(t, 'GET', `/v1/events?type=wallet.frozen`);
    const event = events.data.data.find((e: any) => e.data.wallet_id === wallet);
    expect(event?.data).toMatchObject({
      status: 'frozen',
      status_reason: 'compliance_review',
      currency: 'KES',
    });

    const evidence = await api(t, 'GET', `/v1/wallets/${wallet}/evidence`, { key: operator });
    // The freeze, and the decision that held the collection above for review.
    expect(evidence.data.data.map((r: any) => r.kind)).toEqual(['transfer.decision', 'wallet.freeze']);
    const record = evidence.data.data.find((r: any) => r.kind === 'wallet.freeze');
    expect(record).toMatchObject({
      kind: 'wallet.freeze',
      actor: expect.stringMatching(/^key_/),
      wallet_id: wallet,
      data: { from_status: 'active', to_status: 'frozen', reason: 'compliance_review', note: 'case 42' },
    });

    const again = await freeze(wallet);
    expect(again.statusCode).toBe(409);
    expect(again.data.code).toBe('invalid_state_transition');

    const thawed = await unfreeze(wallet);
    expect(thawed.statusCode, thawed.body).toBe(200);
    expect(thawed.data).toMatchObject({ status: 'active', status_reason: 'review_cleared' });
    expect((await internal(wallet, other)).statusCode).toBe(201);
    expect((await unfreeze(wallet)).statusCode).toBe(409);
  });

  it('a wallet that has already sent is still refused once frozen: what is kept per process is only who owns it', async () => {
    const wallet = await fundedWallet(t, '100.00');
    const other = await fundedWallet(t, '100.00');
    expect((await internal(wallet, other)).statusCode).toBe(201);
    expect((await internal(other, wallet)).statusCode).toBe(201);
    expect((await freeze(wallet)).statusCode).toBe(200);
    const send = await internal(wallet, other);
    expect(send.statusCode).toBe(409);
    expect(send.data).toMatchObject({ code: 'wallet_not_active', param: 'source' });
    const receive = await internal(other, wallet);
    expect(receive.data).toMatchObject({ code: 'wallet_not_active', param: 'destination' });
    // Known to this process under its own organization only.
    const stranger = await newOrganizationKey(t);
    const foreign = await api(t, 'POST', '/v1/transfers', {
      key: stranger,
      body: { source: other, destination: wallet, amount: '1.00', currency: 'KES' },
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.data.param).toBe('source');
    expect((await unfreeze(wallet)).statusCode).toBe(200);
    expect((await internal(wallet, other)).statusCode).toBe(201);
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '90.00' });
  });

  it('a return of a payment made before the freeze is still credited to the frozen wallet', async () => {
    const wallet = await fundedWallet(t, '300.00');
    const payout = await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254700000000'), amount: '100.00', currency: 'KES' },
    });
    expect(payout.statusCode, payout.body).toBe(201);
    await drainRails(t);
    expect((await api(t, 'GET', `/v1/transfers/${payout.data.id}`)).data.status).toBe('settled');
    expect((await freeze(wallet)).statusCode).toBe(200);
    const returned = await api(t, 'POST', `/v1/sandbox/transfers/${payout.data.id}/return`, { body: {} });
    expect(returned.statusCode, returned.body).toBe(200);
    expect((await balanceOf(t, wallet)).available).toBe('300.00');
    await expectLedgerHealthy(t);
  });

  it('a wallet closes only empty and active, and a closed wallet receives nothing', async () => {
    const wallet = await fundedWallet(t, '50.00');
    const other = await fundedWallet(t, '500.00');
    const notEmpty = await close(wallet);
    expect(notEmpty.statusCode).toBe(409);
    expect(notEmpty.data.code).toBe('wallet_not_empty');
    expect(notEmpty.data.detail).toContain('50.00');
    expect((await internal(wallet, other, '50.00')).statusCode).toBe(201);

    expect((await freeze(wallet)).statusCode).toBe(200);
    const whileFrozen = await close(wallet);
    expect(whileFrozen.statusCode).toBe(409);
    expect(whileFrozen.data.code).toBe('invalid_state_transition');
    expect((await unfreeze(wallet)).statusCode).toBe(200);

    const closed = await close(wallet);
    expect(closed.statusCode, closed.body).toBe(200);
    expect(closed.data).toMatchObject({ status: 'closed', status_reason: 'customer_request' });
    const receive = await internal(other, wallet);
    expect(receive.statusCode).toBe(409);
    expect(receive.data.code).toBe('wallet_not_active');
    expect((await close(wallet)).statusCode).toBe(409);
    expect((await freeze(wallet)).statusCode).toBe(409);
    const evidence = await api(t, 'GET', `/v1/wallets/${wallet}/evidence`, { key: operator });
    // Beside the transfer decision of the payment out above.
    expect(evidence.data.data.map((r: any) => r.kind).filter((k: string) => k.startsWith('wallet.'))).toEqual(
      ['wallet.close', 'wallet.unfreeze', 'wallet.freeze'],
    );
  });

  it('a wallet with money pending out does not close', async () => {
    const wallet = await fundedWallet(t, '20.00');
    const payout = await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254700000001'), amount: '20.00', currency: 'KES' },
    });
    expect(payout.statusCode).toBe(201);
    const closing = await close(wallet);
    expect(closing.statusCode).toBe(409);
    expect(closing.data.code).toBe('wallet_not_empty');
  });

  it('a close racing a credit to the same wallet: exactly one of them happens', async () => {
    const payer = await fundedWallet(t, '1000.00');
    for (let i = 0; i < CLOSE_RACES; i++) {
      const wallet = await fundedWallet(t, '0');
      const [closing, credit] = await Promise.all([close(wallet), internal(payer, wallet, '1.00')]);
      const closedFirst = closing.statusCode === 200;
      expect(closedFirst ? credit.statusCode : closing.statusCode, `${closing.body} ${credit.body}`).toBe(
        409,
      );
      if (!closedFirst) expect(credit.statusCode).toBe(201);
      const balance = await balanceOf(t, wallet);
      expect(balance.current).toBe(closedFirst ? '0.00' : '1.00');
    }
    await expectLedgerHealthy(t);
  });

  it('the database refuses a status change the machine does not allow, and closing a wallet that holds money', async () => {
    const rows = await t.deps.store.query<{ from_status: string; to_status: string }>(
      'SELECT from_status, to_status FROM wallet_status_transitions ORDER BY from_status, to_status',
    );
    const expected = Object.entries(WALLET_STATUS_TRANSITIONS)
      .flatMap(([from, tos]) => tos.map((to) => ({ from_status: from, to_status: to })))
      .sort((a, b) => `${a.from_status} ${a.to_status}`.localeCompare(`${b.from_status} ${b.to_status}`));
    expect(rows).toEqual(expected);

    const emptied = await fundedWallet(t, '0');
    expect((await close(emptied)).statusCode).toBe(200);
    await expect(
      t.deps.store.query("UPDATE wallets SET status = 'active' WHERE id = $1", [emptied]),
    ).rejects.toThrow(/illegal wallet status change/);
    const full = await fundedWallet(t, '5.00');
    await expect(
      t.deps.store.query("UPDATE wallets SET status = 'closed' WHERE id = $1", [full]),
    ).rejects.toThrow(/cannot close/);
  });

  it('every change left a verifiable evidence chain', async () => {
    const result = await runAdminCommand(t.deps, { name: 'evidence.verify' });
    if (result.name !== 'evidence.verify') throw new Error('wrong result');
    expect(result.chains.filter((c) => c.break)).toEqual([]);
    expect(result.chains.find((c) => c.organizationId === t.organizationId)?.recordsVerified).toBeGreaterThan(
      5,
    );
  });
});
