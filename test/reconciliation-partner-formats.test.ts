/**
 * Partner statement formats through HTTP: an M-Pesa organization statement and an MTN MoMo transaction
 * report, as the sandbox produces them, imported as CSV uploads; payouts and collections (money in) both
 * reconcile; a wrong amount, a line the ledger does not know and a collection the statement leaves out each
 * open the right exception; malformed rows are refused with their row and column, nothing written; local
 * partner times are read as UTC.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCollectionWorkerOnce, simulatedCollectionRail } from '../src/modules/collections/index.ts';
import {
  MOMO_REPORT_COLUMNS,
  MPESA_STATEMENT_COLUMNS,
} from '../src/modules/treasury/domain/partnerStatements.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { drainRails, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';

const DAY_MS = 86_400_000;
const CSV = { 'content-type': 'text/csv' };

describe.each(BACKENDS)('partner statement formats on %s', (backend) => {
  let t: TestApp;
  const realNow = () => new Date();
  const today = () => new Date().toISOString().slice(0, 10);
  const yesterday = () => new Date(Date.now() - DAY_MS).toISOString().slice(0, 10);

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await t.close();
  });

  const collectionRail = simulatedCollectionRail();
  const work = () => runCollectionWorkerOnce(t.deps, async () => collectionRail, { log: () => {} });

  async function payout(key: string, wallet: string, destination: object, amount: string, currency: string) {
    const created = await api(t, 'POST', '/v1/transfers', {
      key,
      body: { source: wallet, destination, amount, currency },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.data.id as string;
  }

  /** A collection the simulated payer approves: its inbound transfer's id. */
  async function collection(key: string, wallet: string, phone: string, amount: string, network: string) {
    const created = await api(t, 'POST', '/v1/collections', {
      key,
      body: { wallet, amount, payer: { type: 'mobile_money', phone, network } },
    });
    expect(created.statusCode, created.body).toBe(201);
    await work();
    await work();
    const done = (await api(t, 'GET', `/v1/collections/${created.data.id}`, { key })).data;
    expect(done.status).toBe('succeeded');
    return done.transfer as string;
  }

  const transferOf = async (key: string, id: string) =>
    (await api(t, 'GET', `/v1/transfers/${id}`, { key })).data;

  const sandboxStatement = (key: string, format: string, mismatches: string[] = []) =>
    api(t, 'POST', '/v1/sandbox/statements', {
      key,
      body: { rail: 'mobile_money', from: today(), to: today(), format, mismatches },
    });

  /** Imports a CSV upload in `format`, as if `daysLater` days from now. */
  async function importCsv(key: string, format: string, csv: string, daysLater = 0) {
    t.deps.now = () => new Date(Date.now() + daysLater * DAY_MS);
    try {
      return await api(
        t,
        'POST',
        `/v1/reconciliation/statements?rail=mobile_money&from=${today()}&to=${today()}&format=${format}`,
        { key, body: csv, headers: CSV },
      );
    } finally {
      t.deps.now = realNow;
    }
  }

  const openExceptions = async (key: string) =>
    (await api(t, 'GET', '/v1/reconciliation/exceptions?status=open', { key })).data.data as {
      id: string;
      kind: string;
      transfer: string | null;
      line: number | null;
      details: Record<string, unknown>;
    }[];

  it('reconciles an M-Pesa organization statement of payouts and collections, both ways', async () => {
    const { key } = await newOrganization(t);
    const wallet = await fundedWallet(t, '2000.00', 'KES', key);
    const payouts = [
      await payout(key, wallet, mobileMoney('+254711000901', 'mpesa'), '1250.00', 'KES'),
      await payout(key, wallet, mobileMoney('+254711000902', 'mpesa'), '11.00', 'KES'),
    ];
    await drainRails(t);
    const paybill = { type: 'paybill', business_number: '888880', account_reference: 'INV-1' };
    payouts.push(await payout(key, wallet, paybill, '30.00', 'KES'));
    await drainRails(t);
    const credit = await collection(key, wallet, '+254700000000', '25.00', 'mpesa');
    // Another network's payout is not on M-Pesa's statement.
    const mtn = await fundedWallet(t, '500000', 'UGX', key);
    await payout(key, mtn, mobileMoney('+256772000009', 'mtn'), '1000', 'UGX');
    await drainRails(t);

    const statement = await sandboxStatement(key, 'mpesa_org_statement');
    expect(statement.statusCode, statement.body).toBe(200);
    expect(statement.data).toMatchObject({ object: 'statement', format: 'mpesa_org_statement' });
    expect(statement.data.lines).toHaveLength(4);
    const content = statement.data.content as string;
    expect(content.split('\r\n')[0]).toBe(MPESA_STATEMENT_COLUMNS.join(','));
    expect(content).toContain('"-1,250.00"');
    expect(content).toContain(`simcol_`);

    const wrongRail = await api(
      t,
      'POST',
      `/v1/reconciliation/statements?rail=bank&from=${today()}&to=${today()}&format=mpesa_org_statement`,
      { key, body: content, headers: CSV },
    );
    expect(wrongRail.statusCode).toBe(400);
    expect(wrongRail.data).toMatchObject({ code: 'validation_error', param: 'rail' });

    const imported = await importCsv(key, 'mpesa_org_statement', content);
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.data).toMatchObject({ lines: 4, matched: 4, exceptions: 0 });
    for (const id of [...payouts, credit]) expect((await transferOf(key, id)).ledger_state).toBe('matched');
    expect(await openExceptions(key)).toEqual([]);
    const again = await importCsv(key, 'mpesa_org_statement', content);
    expect(again.statusCode).toBe(409);
    await expectLedgerHealthy(t);
  });

  it('reconciles an MTN MoMo transaction report, and our own lines carry money in too', async () => {
    const { key } = await newOrganization(t);
    const wallet = await fundedWallet(t, '500000', 'UGX', key);
    const sent = await payout(key, wallet, mobileMoney('+256772000001', 'mtn'), '15000', 'UGX');
    await drainRails(t);
    const credit = await collection(key, wallet, '+256772000002', '7000', 'mtn');

    const own = await sandboxStatement(key, 'mkoba_json');
    expect(own.data.format).toBe('mkoba_json');
    expect(own.data.lines.map((l: { direction: string }) => l.direction).sort()).toEqual([
      'inbound',
      'outbound',
    ]);

    const report = await sandboxStatement(key, 'momo_transaction_report');
    expect(report.statusCode, report.body).toBe(200);
    const content = report.data.content as string;
    const [header, ...rows] = content.trim().split('\r\n');
    expect(header).toBe(MOMO_REPORT_COLUMNS.join(','));
    expect(rows).toHaveLength(2);
    expect(rows.find((r) => r.includes(sent))).toContain(',-15000,UGX,');

    const imported = await importCsv(key, 'momo_transaction_report', content);
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.data).toMatchObject({ lines: 2, matched: 2, exceptions: 0 });
    expect((await transferOf(key, sent)).ledger_state).toBe('matched');
    expect((await transferOf(key, credit)).ledger_state).toBe('matched');

    // The JSON lines, imported after, agree with what the report matched: nothing new to say.
    const json = await api(t, 'POST', '/v1/reconciliation/statements', {
      key,
      body: { rail: 'mobile_money', from: today(), to: today(), lines: own.data.lines },
    });
    expect(json.statusCode, json.body).toBe(201);
    expect(json.data).toMatchObject({ lines: 2, matched: 2, exceptions: 0 });
    // The same lines as our CSV (a `direction` column) are the same statement: imported once only.
    const columns = ['rail_reference', 'amount', 'currency', 'value_date', 'status', 'fees', 'direction'];
    const csv = [
      columns.join(','),
      ...own.data.lines.map((l: Record<string, string>) => columns.map((c) => l[c]).join(',')),
    ].join('\n');
    const asCsv = await importCsv(key, 'mkoba_json', csv);
    expect(asCsv.statusCode, asCsv.body).toBe(409);
    expect(asCsv.data.code).toBe('statement_already_imported');
    await expectLedgerHealthy(t);
  });

  it('opens the right exception for a wrong amount, an unknown receipt, a charge and a missing collection', async () => {
    const { key } = await newOrganization(t);
    const wallet = await fundedWallet(t, '1000.00', 'KES', key);
    const sent = await payout(key, wallet, mobileMoney('+254711000903', 'mpesa'), '40.00', 'KES');
    await drainRails(t);
    const paidIn = await collection(key, wallet, '+254700000000', '30.00', 'mpesa');
    const missing = await collection(key, wallet, '+254700000000', '31.00', 'mpesa');
    const sentRef = (await transferOf(key, sent)).rail_reference;
    const paidInRef = (await transferOf(key, paidIn)).rail_reference;
    // The portal's preamble, then its header; times are Nairobi's (UTC+3).
    const csv = [
      'Organization Name,Mkoba Test',
      `Time Period,${today()} - ${today()}`,
      'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance,Reason Type,Linked Transaction ID',
      `${sentRef},${today()} 12:00:00,Business Payment,Completed,,-40.00,,Business Payment,`,
      `${sentRef},${today()} 12:00:00,Charge,Completed,,-0.50,,Business Payment Charge,${sentRef}`,
      `${paidInRef},${today()} 12:00:00,Customer Payment,Completed,30.01,,,Customer Payment,`,
      `QZX0UNKNOWN,${today()} 02:30:00,Customer Payment,Completed,"1,999.00",,,Customer Payment,`,
    ].join('\n');
    const imported = await importCsv(key, 'mpesa_org_statement', csv, 2);
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.data).toMatchObject({ lines: 3, matched: 0, exceptions: 4 });

    const open = await openExceptions(key);
    const byKind = Object.fromEntries(open.map((e) => [e.kind, e]));
    expect(Object.keys(byKind).sort()).toEqual([
      'amount_mismatch',
      'fee_mismatch',
      'missing_from_statement',
      'unmatched_line',
    ]);
    expect(byKind.fee_mismatch).toMatchObject({ transfer: sent, line: 1, details: { fees_minor: '50' } });
    expect(byKind.amount_mismatch).toMatchObject({
      transfer: paidIn,
      line: 3,
      details: { statement_amount_minor: '3001', ledger_amount_minor: '3000', direction: 'inbound' },
    });
    // 02:30 in Nairobi is 23:30 UTC the day before.
    expect(byKind.unmatched_line).toMatchObject({
      transfer: null,
      line: 4,
      details: {
        rail_reference: 'QZX0UNKNOWN',
        amount_minor: '199900',
        value_date: yesterday(),
        direction: 'inbound',
      },
    });
    expect(byKind.missing_from_statement).toMatchObject({
      transfer: missing,
      details: { direction: 'inbound' },
    });
    expect((await transferOf(key, paidIn)).ledger_state).toBe('exception');
    expect((await transferOf(key, missing)).ledger_state).toBe('exception');

    // Money in is resolved the other way round: more received than credited is a gain into the float
    // the credit landed in; there is no paying wallet to refund.
    const resolve = (id: string, body: Record<string, unknown>) =>
      api(t, 'POST', `/v1/reconciliation/exceptions/${id}/resolve`, { key, body });
    const refund = await resolve(String(byKind.missing_from_statement?.id), { action: 'refund', note: 'x' });
    expect(refund.statusCode, refund.body).toBe(422);
    const entriesOf = async (transfer: string) =>
      (await api(t, 'GET', `/v1/ledger/entries?transfer=${transfer}`, { key })).data.data as {
        id: string;
        postings: { account: string; side: string; amount: string }[];
      }[];
    const [creditEntry] = await entriesOf(paidIn);
    const float = creditEntry?.postings.find((p) => p.side === 'debit')?.account;
    const writeOff = await resolve(String(byKind.amount_mismatch?.id), {
      action: 'write_off',
      note: 'rounding',
    });
    expect(writeOff.statusCode, writeOff.body).toBe(200);
    const adjustment = (await entriesOf(paidIn)).find((e) => e.id === writeOff.data.journal_entry);
    expect(adjustment?.postings).toContainEqual(
      expect.objectContaining({ account: float, side: 'debit', amount: '0.01' }),
    );
    expect((await transferOf(key, paidIn)).ledger_state).toBe('matched');
    const unknown = await resolve(String(byKind.unmatched_line?.id), {
      action: 'write_off',
      note: 'a payer we cannot name',
    });
    expect(unknown.statusCode, unknown.body).toBe(200);
    await expectLedgerHealthy(t);
  });

  it('a sandbox statement with deliberate differences opens them in the partner formats too', async () => {
    const { key } = await newOrganization(t);
    const wallet = await fundedWallet(t, '1000.00', 'KES', key);
    await payout(key, wallet, mobileMoney('+254711000904', 'mpesa'), '20.00', 'KES');
    await drainRails(t);
    const statement = await sandboxStatement(key, 'mpesa_org_statement', ['fee', 'unknown']);
    expect(statement.data.content).toContain('Business Payment Charge');
    const imported = await importCsv(key, 'mpesa_org_statement', statement.data.content);
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.data).toMatchObject({ lines: 2, matched: 0, exceptions: 2 });
    const kinds = (await openExceptions(key)).map((e) => e.kind).sort();
    expect(kinds).toEqual(['fee_mismatch', 'unmatched_line']);
  });

  it('refuses malformed rows with their row and column, and writes nothing', async () => {
    const { key } = await newOrganization(t);
    const wallet = await fundedWallet(t, '1000.00', 'KES', key);
    const sent = await payout(key, wallet, mobileMoney('+254711000905', 'mpesa'), '12.00', 'KES');
    await drainRails(t);
    const ref = (await transferOf(key, sent)).rail_reference;
    const mpesa = [
      'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance',
      `${ref},${today()} 10:00:00,Business Payment,Completed,,-12.00,`,
      `QZX0BAD1,${today()} 10:00:00,Customer Payment,Completed,12.345,,`,
      `QZX0BAD2,${today()} 25:00:00,Customer Payment,Completed,1.00,,`,
      `QZX0BAD3,${today()} 10:00:00,Customer Payment,Completed,1.00,-1.00,`,
      `QZX0BAD4,${today()} 10:00:00,Customer Payment,Pending,1.00,,`,
    ].join('\r\n');
    const refused = await importCsv(key, 'mpesa_org_statement', mpesa);
    expect(refused.statusCode, refused.body).toBe(422);
    expect(refused.data.code).toBe('statement_invalid');
    expect(refused.data.param).toBe('lines.1.Paid In');
    expect(
      refused.data.errors.map((e: { row: number; param: string; code: string }) => [e.row, e.param, e.code]),
    ).toEqual([
      [2, 'lines.1.Paid In', 'too_precise'],
      [3, 'lines.2.Completion Time', 'invalid_format'],
      [4, 'lines.3.Paid In', 'invalid_value'],
      [5, 'lines.4.Transaction Status', 'invalid_value'],
    ]);
    expect((await transferOf(key, sent)).ledger_state).toBe('posted');
    expect(await openExceptions(key)).toEqual([]);

    const noCurrency = ['Id,Date,Status,Amount', `123,${today()} 10:00:00,SUCCESSFUL,-100`].join('\n');
    const header = await importCsv(key, 'momo_transaction_report', noCurrency);
    expect(header.statusCode).toBe(422);
    expect(header.data.errors).toEqual([
      expect.objectContaining({ row: 0, param: 'header.Currency', code: 'missing' }),
    ]);
    const momo = [
      'Id,External Transaction Id,Date,Status,Amount,Currency,Fee',
      `124,,${today()} 10:00:00,DONE,-100,UGX,0`,
      `125,,${today()} 10:00:00,SUCCESSFUL,-100.5,UGX,0`,
      `126,,${today()} 10:00:00,PENDING,-100,UGX,0`,
    ].join('\n');
    const rows = await importCsv(key, 'momo_transaction_report', momo);
    expect(rows.statusCode).toBe(422);
    expect(rows.data.errors.map((e: { param: string }) => e.param)).toEqual([
      'lines.0.Status',
      'lines.1.Amount',
    ]);

    const jsonWithPartnerFormat = await api(
      t,
      'POST',
      '/v1/reconciliation/statements?format=mpesa_org_statement',
      { key, body: { rail: 'mobile_money', from: today(), to: today(), lines: [] } },
    );
    expect(jsonWithPartnerFormat.statusCode).toBe(400);
    expect(jsonWithPartnerFormat.data).toMatchObject({ code: 'validation_error', param: 'format' });
    expect((await transferOf(key, sent)).ledger_state).toBe('posted');
  });
});
