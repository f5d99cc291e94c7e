/**
 * Exports through HTTP: queued, run by the worker page by page to a file, downloaded with the SHA-256 it
 * recorded; CSV per RFC 4180 (CRLF records, checked byte by byte) with formula cells neutralised, JSON lines
 * in the API's wire form; ranges; the evidence export is for operators; a dead worker's export is taken
 * over; files expire.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { EXPORT_LEASE_MS, EXPORT_RETENTION_MS } from '../src/modules/exports/domain.ts';
import { leaseExport } from '../src/modules/exports/repository.ts';
import { exportFormatters } from '../src/modules/exports/routes/formats.ts';
import { runExportWorkerOnce } from '../src/modules/exports/useCases/run.ts';
import { rfc4180Rows } from './support/csv.ts';
import {
  api,
  BACKENDS,
  complianceKey,
  newOrganizationKey,
  startTestApp,
  type TestApp,
} from './support/harness.ts';
import { fundedWallet, mobileMoney } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';

describe.each(BACKENDS)('exports on %s', (backend) => {
  let t: TestApp;
  const realNow = () => new Date();
  const work = () => runExportWorkerOnce(t.deps, exportFormatters('sandbox'));

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await t.close();
  });

  async function download(id: string, key = t.key) {
    const response = await t.app.inject({
      method: 'GET',
      url: `/v1/exports/${id}/download`,
      headers: { authorization: `Bearer ${key}` },
    });
    return response;
  }

  it('writes transfers as RFC 4180 CSV with formula cells neutralised, and the download matches its SHA-256', async () => {
    const key = await newOrganizationKey(t);
    const wallet = await fundedWallet(t, '100.00', 'KES', key);
    const names = ['=HYPERLINK("http://x")', '@SUM(A1)', 'Plain Name'];
    for (const [i, metadata] of [{ note: '=cmd' }, { note: 'a, "quoted"\nline' }, { note: '+1' }].entries()) {
      const created = await api(t, 'POST', '/v1/transfers', {
        key,
        body: {
          source: wallet,
          destination: { ...mobileMoney('+254711000701'), name: names[i] },
          amount: '1.00',
          currency: 'KES',
          metadata,
        },
      });
      expect(created.statusCode, created.body).toBe(201);
    }
    const started = await api(t, 'POST', '/v1/exports', {
      key,
      body: { type: 'transfers', format: 'csv' },
      headers: { 'idempotency-key': 'export-1' },
    });
    expect(started.statusCode, started.body).toBe(202);
    expect(started.data).toMatchObject({
      object: 'export',
      status: 'queued',
      type: 'transfers',
      format: 'csv',
    });
    const replay = await api(t, 'POST', '/v1/exports', {
      key,
      body: { type: 'transfers', format: 'csv' },
      headers: { 'idempotency-key': 'export-1' },
    });
    expect(replay.data.id).toBe(started.data.id);
    expect((await download(started.data.id, key)).statusCode).toBe(409);
    while ((await work()) !== undefined) {}
    const ready = (await api(t, 'GET', `/v1/exports/${started.data.id}`, { key })).data;
    expect(ready).toMatchObject({ status: 'ready', rows_written: 4, rows_estimated: 4 });
    const file = await download(started.data.id, key);
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toMatch(/^text\/csv/);
    expect(file.headers['content-disposition']).toContain(`${started.data.id}.csv`);
    expect(createHash('sha256').update(file.rawPayload).digest('hex')).toBe(ready.sha256);
    expect(file.rawPayload.length).toBe(ready.bytes);
    // RFC 4180 byte for byte: CRLF after every record, the last too; quoted cells with their quotes doubled.
    expect(file.body.endsWith('\r\n')).toBe(true);
    expect(file.body.split('\r\n')).toHaveLength(6);
    expect(file.body.replaceAll('\r\n', '')).not.toMatch(/[\r\n]/);
    expect(file.body).toContain('"{""note"":""a, \\""quoted\\""\\nline""}"');
    expect(file.body).toContain(`,"'=HYPERLINK(""http://x"")",`);
    const rows = rfc4180Rows(file.body);
    expect(rows).toHaveLength(4);
    const notes = rows.map((r) => (r.metadata ? JSON.parse(r.metadata).note : undefined)).filter(Boolean);
    expect(notes).toContain('a, "quoted"\nline');
    expect(notes).toContain('+1');
    expect(
      rows
        .map((r) => r.destination_name)
        .filter(Boolean)
        .sort(),
    ).toEqual(['\'=HYPERLINK("http://x")', "'@SUM(A1)", 'Plain Name']);
    const cellsStartingWithFormula = rows.flatMap((r) => Object.values(r)).filter((v) => /^[=+\-@]/.test(v));
    expect(cellsStartingWithFormula).toEqual([]);
    const funding = rows.find((r) => r.direction === 'inbound');
    expect(funding).toMatchObject({ amount: '100.00', currency: 'KES', status: 'settled' });
    const events = await api(t, 'GET', '/v1/events?type=export.ready', { key });
    expect(events.data.data[0].data).toMatchObject({
      export_id: started.data.id,
      rows: 4,
      sha256: ready.sha256,
    });
  });

  it('writes events as JSON lines in their wire form, within the range asked', async () => {
    const key = await newOrganizationKey(t);
    const before = new Date();
    await fundedWallet(t, '5.00', 'KES', key);
    const started = await api(t, 'POST', '/v1/exports', {
      key,
      body: { type: 'events', format: 'jsonl', from: before.toISOString(), to: new Date().toISOString() },
    });
    while ((await work()) !== undefined) {}
    const file = await download(started.data.id, key);
    expect(file.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = file.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // The funding: its inbound transfer's two events, then its collection's.
    expect(lines.map((e: { type: string }) => e.type)).toEqual([
      'transfer.created',
      'transfer.settled',
      'collection.succeeded',
    ]);
    expect(lines[0]).toMatchObject({ object: 'event', environment: 'sandbox' });
    const api1 = await api(t, 'GET', `/v1/events/${lines[0].id}`, { key });
    expect(lines[0]).toEqual(api1.data);
    const empty = await api(t, 'POST', '/v1/exports', {
      key,
      body: { type: 'events', format: 'jsonl', to: before.toISOString() },
    });
    while ((await work()) !== undefined) {}
    expect((await api(t, 'GET', `/v1/exports/${empty.data.id}`, { key })).data).toMatchObject({
      status: 'ready',
      rows_written: 0,
    });
    const bad = await api(t, 'POST', '/v1/exports', {
      key,
      body: { type: 'events', format: 'jsonl', from: new Date().toISOString(), to: before.toISOString() },
    });
    expect(bad.data).toMatchObject({ status: 400, param: 'to' });
  });

  it('ledger entries become a CSV row per posting; evidence is for operators', async () => {
    const wallet = await fundedWallet(t, '7.00');
    expect(wallet).toMatch(/^wallet_/);
    const refused = await api(t, 'POST', '/v1/exports', { body: { type: 'evidence', format: 'csv' } });
    expect(refused.statusCode).toBe(403);
    const operator = await complianceKey(t);
    const evidence = await api(t, 'POST', '/v1/exports', {
      key: operator,
      body: { type: 'evidence', format: 'jsonl' },
    });
    const entries = await api(t, 'POST', '/v1/exports', { body: { type: 'ledger_entries', format: 'csv' } });
    while ((await work()) !== undefined) {}
    const entriesFile = await download(entries.data.id);
    const rows = rfc4180Rows(entriesFile.body);
    const job = (await api(t, 'GET', `/v1/exports/${entries.data.id}`)).data;
    expect(rows.length).toBe(job.rows_written * 2);
    expect(rows[0]).toHaveProperty('side');
    expect((await download(evidence.data.id)).statusCode).toBe(403);
    const records = (await download(evidence.data.id, operator)).body.trim().split('\n');
    expect(JSON.parse(records[0] as string)).toMatchObject({ object: 'evidence', sequence: 1 });
    const other = await newOrganizationKey(t);
    expect((await api(t, 'GET', `/v1/exports/${entries.data.id}`, { key: other })).statusCode).toBe(404);
  });

  it('exports the reconciliation exception queue, for operators only', async () => {
    const org = await newOrganization(t);
    const day = new Date().toISOString().slice(0, 10);
    const imported = await api(t, 'POST', '/v1/reconciliation/statements', {
      key: org.key,
      body: {
        rail: 'mobile_money',
        from: day,
        to: day,
        lines: [
          {
            rail_reference: '=cmd|calc',
            amount: '5.00',
            currency: 'KES',
            value_date: day,
            status: 'settled',
          },
          {
            rail_reference: 'sim_unknown',
            amount: '6.00',
            currency: 'KES',
            value_date: day,
            status: 'failed',
          },
        ],
      },
    });
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.data.exceptions).toBe(2);
    const integrator = (await issueApiKey(t.deps, { organizationName: org.name, scopes: ['read', 'write'] }))
      .key;
    const refused = await api(t, 'POST', '/v1/exports', {
      key: integrator,
      body: { type: 'reconciliation_exceptions', format: 'csv' },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.data).toMatchObject({ code: 'insufficient_permissions', param: 'type' });
    const csvJob = await api(t, 'POST', '/v1/exports', {
      key: org.key,
      body: { type: 'reconciliation_exceptions', format: 'csv' },
    });
    const jsonJob = await api(t, 'POST', '/v1/exports', {
      key: org.key,
      body: { type: 'reconciliation_exceptions', format: 'jsonl' },
    });
    expect(csvJob.statusCode, csvJob.body).toBe(202);
    while ((await work()) !== undefined) {}
    expect((await download(csvJob.data.id, integrator)).statusCode).toBe(403);
    const rows = rfc4180Rows((await download(csvJob.data.id, org.key)).body);
    expect(rows.map((r) => [r.kind, r.status])).toEqual([
      ['unmatched_line', 'open'],
      ['unmatched_line', 'open'],
    ]);
    expect(JSON.parse(rows[0]?.details as string)).toMatchObject({ rail_reference: '=cmd|calc' });
    const queue = (await api(t, 'GET', '/v1/reconciliation/exceptions', { key: org.key })).data.data;
    const lines = (await download(jsonJob.data.id, org.key)).body.trim().split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual([...queue].reverse());
  });

  it('a dead worker’s export is taken over once its lease runs out; files expire after the retention', async () => {
    const key = await newOrganizationKey(t);
    await fundedWallet(t, '1.00', 'KES', key);
    const started = await api(t, 'POST', '/v1/exports', {
      key,
      body: { type: 'transfers', format: 'jsonl' },
    });
    // A worker takes it and dies.
    expect(await leaseExport(t.deps.store, t.deps.now(), EXPORT_LEASE_MS)).toMatchObject({
      id: started.data.id,
    });
    expect(await work()).toBeUndefined();
    t.deps.now = () => new Date(Date.now() + EXPORT_LEASE_MS + 1_000);
    try {
      expect(await work()).toMatchObject({ id: started.data.id, status: 'ready', rowsWritten: 1 });
    } finally {
      t.deps.now = realNow;
    }
    const [file] = readdirSync(t.deps.exportDirectory, { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith(`${started.data.id}.jsonl`))
      .map((name) => path.join(t.deps.exportDirectory, name));
    expect(file && existsSync(file)).toBe(true);
    t.deps.now = () => new Date(Date.now() + EXPORT_RETENTION_MS + EXPORT_LEASE_MS + 120_000);
    try {
      await work();
    } finally {
      t.deps.now = realNow;
    }
    expect((await api(t, 'GET', `/v1/exports/${started.data.id}`, { key })).data.status).toBe('expired');
    expect((await download(started.data.id, key)).statusCode).toBe(409);
    expect(existsSync(file as string)).toBe(false);
  });
});
