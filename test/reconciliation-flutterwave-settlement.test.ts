/**
 * Flutterwave's settlement in the statement import, over real HTTP: bank transfers into wallets' virtual
 * account numbers are credited (charge.completed, verified), the simulator settles them, the settlement is
 * read from GET /v3/settlements/{id} and uploaded as `format=flutterwave_settlement`; the credits match, a
 * charge Flutterwave settled that the ledger never credited opens an exception, bank payouts (not in a
 * settlement) are not reported missing, and a malformed file is refused row by row, nothing written.
 */
import type { AddressInfo } from 'node:net';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRailCreditVerificationWorkerOnce } from '../src/modules/railPartners/useCases/creditVerificationWorker.ts';
import { railPartnerDirectory } from '../src/modules/railPartners/useCases/directory.ts';
import { runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import { FLUTTERWAVE_SETTLEMENT_COLUMNS } from '../src/modules/treasury/domain/partnerStatements.ts';
import {
  FLUTTERWAVE_SIMULATOR_ACCOUNTS,
  type FlutterwaveSimulator,
  startFlutterwaveSimulator,
} from '../src/simulators/flutterwave/index.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

const CSV = { 'content-type': 'text/csv' };
const BVN = '22123456789';

describe.each(BACKENDS)('Flutterwave settlement import on %s', (backend) => {
  let t: TestApp;
  let sim: FlutterwaveSimulator;
  let org: TestOrganization;
  const today = () => new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    sim = await startFlutterwaveSimulator({ processingMs: 50 });
    org = await newOrganization(t);
    const created = await api(t, 'POST', '/v1/rail-partners', {
      key: org.key,
      body: {
        partner: 'flutterwave',
        settings: { base_url: sim.url },
        credentials: { secret_key: sim.credentials.secretKey, secret_hash: sim.credentials.secretHash },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    sim.setWebhookUrl(`${created.data.callback_url}/webhooks`);
  });
  afterAll(async () => {
    await sim?.close();
    await t?.close();
  });

  const importCsv = (csv: string) =>
    api(
      t,
      'POST',
      `/v1/reconciliation/statements?rail=bank&from=${today()}&to=${today()}&format=flutterwave_settlement`,
      { key: org.key, body: csv, headers: CSV },
    );
  const openExceptions = async () =>
    (
      (await api(t, 'GET', '/v1/reconciliation/exceptions?status=open&limit=100', { key: org.key })).data
        .data as { kind: string; transfer: string | null; details: Record<string, unknown> }[]
    ).filter((e) => e.kind !== 'safeguarding_shortfall');
  const transferOf = async (id: string) =>
    (await api(t, 'GET', `/v1/transfers/${id}`, { key: org.key })).data;

  /** The settlement as Flutterwave publishes it (GET /v3/settlements/{id}), one CSV row per transaction. */
  async function settlementCsv(id: number): Promise<string> {
    const response = await fetch(`${sim.url}/v3/settlements/${id}`, {
      headers: { Authorization: `Bearer ${sim.credentials.secretKey}` },
    });
    const { data } = (await response.json()) as { data: { id: number; transactions: object[] } };
    const rows = data.transactions.map((transaction) => ({ settlement_id: data.id, ...transaction }));
    return stringify(rows, { header: true, columns: [...FLUTTERWAVE_SETTLEMENT_COLUMNS] });
  }

  it('matches the credits a settlement lists; a settled charge never credited opens an exception; payouts are not its business', async () => {
    const wallet = await fundedWallet(t, '0', 'NGN', org.key);
    const made = await api(t, 'POST', `/v1/wallets/${wallet}/virtual-account`, {
      key: org.key,
      body: { bvn: BVN, email: 'holder@example.com' },
    });
    expect(made.statusCode, made.body).toBe(201);
    const accountNumber = made.data.account_number as string;
    const charges = [
      await sim.payIntoVirtualAccount({ accountNumber, amount: 5000 }),
      await sim.payIntoVirtualAccount({ accountNumber, amount: 1250.5 }),
    ];
    await runRailCreditVerificationWorkerOnce(t.deps, railPartnerDirectory(t.deps));
    // A bank transfer whose webhook never came: Flutterwave settles it, the ledger knows nothing of it.
    sim.loseWebhooks(true);
    const unknown = await sim.payIntoVirtualAccount({ accountNumber, amount: 700 });
    sim.loseWebhooks(false);
    // A bank payout the same day: Flutterwave's transfers are not in its settlements.
    const source = await fundedWallet(t, '10000.00', 'KES', org.key);
    const payout = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: {
        source,
        destination: {
          type: 'bank_account',
          bank_code: '044',
          account_number: FLUTTERWAVE_SIMULATOR_ACCOUNTS.resolvesAndSucceeds.accountNumber,
        },
        amount: '300.00',
        currency: 'KES',
      },
    });
    expect(payout.statusCode, payout.body).toBe(201);
    await runRailWorkerOnce(t.deps, (transfer) => railPartnerDirectory(t.deps).forTransfer(transfer));
    await sim.whenIdle();
    expect(await transferOf(payout.data.id)).toMatchObject({ status: 'settled' });

    const { settlement } = sim.settle({ currency: 'NGN' });
    expect(settlement).toMatchObject({ gross_amount: 6950.5, net_amount: 6950.5, transaction_count: 3 });
    const csv = await settlementCsv(settlement.id);
    const imported = await importCsv(csv);
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.data).toMatchObject({ lines: 3, matched: 2, exceptions: 1 });
    const credited = (
      (await api(t, 'GET', `/v1/transfers?wallet=${wallet}&limit=10`, { key: org.key })).data.data as {
        id: string;
        rail_reference: string;
        ledger_state: string;
      }[]
    ).filter((transfer) => charges.some((charge) => String(charge.id) === transfer.rail_reference));
    expect(credited.map((transfer) => transfer.ledger_state)).toEqual(['matched', 'matched']);
    expect(await openExceptions()).toEqual([
      expect.objectContaining({ kind: 'unmatched_line', transfer: null }),
    ]);
    expect(JSON.stringify(await openExceptions())).toContain(String(unknown.id));
    expect((await transferOf(payout.data.id)).ledger_state).toBe('posted');
    expect((await importCsv(csv)).statusCode).toBe(409);
    await expectLedgerHealthy(t);
  });

  it('refuses a malformed settlement file with each fault’s row and column, writing nothing', async () => {
    const exceptionsBefore = await openExceptions();
    const noAmount = ['settlement_id,id,status,transaction_date,currency', `1,2,successful,${today()},NGN`];
    const header = await importCsv(noAmount.join('\n'));
    expect(header.statusCode).toBe(422);
    expect(header.data).toMatchObject({ code: 'statement_invalid', param: 'header.charged_amount' });
    const rows = [
      'id,charged_amount,app_fee,status,transaction_date,currency',
      `901,100.555,0,successful,${today()},NGN`,
      `902,100,0,settled,${today()},NGN`,
      `903,100,0,successful,2026-02-30,NGN`,
      `904,100,0,successful,${today()},XYZ`,
      `905,-100,0,successful,${today()},NGN`,
    ].join('\n');
    const refused = await importCsv(rows);
    expect(refused.statusCode, refused.body).toBe(422);
    expect(refused.data).toMatchObject({ code: 'statement_invalid', param: 'lines.0.charged_amount' });
    expect(refused.data.errors.map((e: { param: string }) => e.param)).toEqual([
      'lines.0.charged_amount',
      'lines.1.status',
      'lines.2.transaction_date',
      'lines.3.currency',
      'lines.4.charged_amount',
    ]);
    expect(await openExceptions()).toEqual(exceptionsBefore);
  });
});
