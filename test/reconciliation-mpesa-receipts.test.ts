/**
 * An M-Pesa organization statement against money that really came through Daraja: a payer's own paybill
 * payment (C2B), credited by the simulator's confirmation over real HTTP with M-Pesa's TransID as its rail
 * reference, is matched by the statement's Receipt No.; a receipt paid in for another amount opens an
 * exception on that credit. A B2C payout keeps the receipt its result reported (`partner_receipt`), and the
 * statement's Receipt No. matches it, not the request id Mkoba sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { railPartnerDirectory } from '../src/modules/railPartners/useCases/directory.ts';
import { runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import {
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  type DarajaSimulator,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';
import { configureSimulatedDaraja } from './support/daraja.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';

const PAYBILL = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.stkShortCode;
const HEADER = 'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance';

describe.each(BACKENDS)('an M-Pesa statement matched by receipt on %s', (backend) => {
  let t: TestApp;
  let sim: DarajaSimulator;
  const today = () => new Date().toISOString().slice(0, 10);
  /** Nairobi's wall clock now (UTC+3), as the statement prints it. */
  const nairobiNow = () => new Date(Date.now() + 3 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');

  beforeAll(async () => {
    [t, sim] = await Promise.all([startTestApp(backend, 'sandbox'), startDarajaSimulator()]);
    // Listening on loopback, so the simulator's confirmations reach the service.
    t.deps.publicUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => Promise.all([sim?.close(), t?.close()]));

  /** Imports an M-Pesa organization statement (CSV) for today. */
  const importStatement = (key: string, statement: string) =>
    api(
      t,
      'POST',
      `/v1/reconciliation/statements?rail=mobile_money&from=${today()}&to=${today()}&format=mpesa_org_statement`,
      { key, body: statement, headers: { 'content-type': 'text/csv' } },
    );

  it('matches a payer’s paybill payment by its receipt, and a wrong amount on it is an exception', async () => {
    const { key } = await newOrganization(t);
    const configured = await configureSimulatedDaraja(t, key, sim, { stk_short_code: PAYBILL });
    const registered = await api(t, 'POST', `/v1/rail-partners/${configured.id}/credit-urls`, { key });
    expect(registered.statusCode, registered.body).toBe(200);
    const wallet = await fundedWallet(t, '0', 'KES', key);
    const account = await api(t, 'POST', `/v1/wallets/${wallet}/virtual-account`, { key });
    expect(account.statusCode, account.body).toBe(201);
    const payments = [];
    for (const amount of [250, 300]) {
      payments.push(
        await sim.pushC2BPayment({
          shortCode: PAYBILL,
          amount,
          msisdn: '254708374149',
          billRefNumber: account.data.reference,
          confirmation: 'once',
        }),
      );
    }
    await sim.deliverPendingCallbacks();
    const [first, second] = payments.map((p) => p.transId);
    const credits = (await api(t, 'GET', `/v1/transfers?wallet=${wallet}`, { key })).data.data as {
      id: string;
      rail_reference: string;
    }[];
    const creditOf = (receipt: string | undefined) => credits.find((c) => c.rail_reference === receipt)?.id;
    expect(creditOf(first)).toBeDefined();

    const statement = [
      HEADER,
      `${first},${nairobiNow()},Customer Payment,Completed,250.00,,`,
      `${second},${nairobiNow()},Customer Payment,Completed,"3,000.00",,`,
    ].join('\r\n');
    const imported = await importStatement(key, statement);
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.data).toMatchObject({ lines: 2, matched: 1, exceptions: 1 });
    const ledgerState = async (id: string | undefined) =>
      (await api(t, 'GET', `/v1/transfers/${id}`, { key })).data.ledger_state;
    expect(await ledgerState(creditOf(first))).toBe('matched');
    expect(await ledgerState(creditOf(second))).toBe('exception');
    const open = (await api(t, 'GET', '/v1/reconciliation/exceptions?status=open', { key })).data.data;
    expect(open).toEqual([
      expect.objectContaining({
        kind: 'amount_mismatch',
        transfer: creditOf(second),
        line: 2,
        details: expect.objectContaining({
          statement_amount_minor: '300000',
          ledger_amount_minor: '30000',
          direction: 'inbound',
          rail: 'mobile_money',
        }),
      }),
    ]);
    await expectLedgerHealthy(t);
  });

  it('keeps a B2C payout’s M-Pesa receipt, and matches the statement’s Receipt No. with it', async () => {
    const { key } = await newOrganization(t);
    await configureSimulatedDaraja(t, key, sim);
    const wallet = await fundedWallet(t, '1000.00', 'KES', key);
    const created = await api(t, 'POST', '/v1/transfers', {
      key,
      body: { source: wallet, destination: mobileMoney('+254700000000'), amount: '120.00', currency: 'KES' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.data.id as string;
    expect(created.data.partner_receipt).toBeNull();
    await runRailWorkerOnce(t.deps, (transfer) => railPartnerDirectory(t.deps).forTransfer(transfer));
    await sim.deliverPendingCallbacks();
    const receipt = sim.payments.find((p) => p.originatorConversationId === id)?.receipt;
    expect(receipt).toMatch(/^[A-Z0-9]{10}$/);
    const settled = (await api(t, 'GET', `/v1/transfers/${id}`, { key })).data;
    expect(settled).toMatchObject({ status: 'settled', rail_reference: id, partner_receipt: receipt });

    const statement = [HEADER, `${receipt},${nairobiNow()},Business Payment,Completed,,120.00,`].join('\r\n');
    const imported = await importStatement(key, statement);
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.data).toMatchObject({ lines: 1, matched: 1, exceptions: 0 });
    expect((await api(t, 'GET', `/v1/transfers/${id}`, { key })).data.ledger_state).toBe('matched');
    await expectLedgerHealthy(t);
  });
});
