/**
 * Receipts through HTTP: issued once for a settled transfer, as JSON, as a printable page and as a PDF;
 * verified by code without a key, in any spelling a person types; a returned transfer's receipt says so.
 */
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { api, BACKENDS, newOrganizationKey, startTestApp, type TestApp } from './support/harness.ts';
import { drainRails, fundedWallet, mobileMoney } from './support/ledger.ts';

const ONE_DAY_MS = 24 * 60 * 60 * 1000;
/** A compressed stream's dictionary as PDFKit writes it, up to the first byte of the data. */
const FLATE_STREAM = /\/Length (\d+)\s*\/Filter \/FlateDecode\s*>>\s*stream\r?\n/g;

/**
 * The text a PDFKit document shows, one line per text run: each compressed content stream inflated, and the
 * hex strings of each `TJ` array (split where PDFKit kerns) joined. Enough for the standard fonts' single-byte
 * text, which is ASCII as written here.
 */
function pdfText(pdf: Buffer): string {
  const runs: string[] = [];
  for (const match of pdf.toString('latin1').matchAll(FLATE_STREAM)) {
    const start = (match.index ?? 0) + match[0].length;
    const content = inflateSync(pdf.subarray(start, start + Number(match[1]))).toString('latin1');
    for (const array of content.matchAll(/\[([^\]]*)\]\s*TJ/g)) {
      const hex = [...(array[1] ?? '').matchAll(/<([0-9a-f]*)>/gi)].map((h) => h[1] ?? '').join('');
      runs.push(Buffer.from(hex, 'hex').toString('latin1'));
    }
  }
  return runs.join('\n');
}

describe.each(BACKENDS)('receipts on %s', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    await t.close();
  });

  async function settledPayout(name = '<script>alert(1)</script>') {
    const wallet = await fundedWallet(t, '100.00');
    const created = await api(t, 'POST', '/v1/transfers', {
      body: {
        source: wallet,
        destination: { ...mobileMoney('+254700000000'), name },
        amount: '12.00',
        currency: 'KES',
        metadata: { note: '<b>x</b>' },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.data.id as string;
  }

  it('a transfer that has not settled has no receipt yet', async () => {
    const id = await settledPayout();
    const early = await api(t, 'GET', `/v1/transfers/${id}/receipt`);
    expect(early.statusCode).toBe(409);
    expect(early.data.code).toBe('receipt_unavailable');
    const pdf = await api(t, 'GET', `/v1/transfers/${id}/receipt?format=pdf`);
    expect(pdf.statusCode).toBe(409);
    expect(pdf.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(pdf.data.code).toBe('receipt_unavailable');
  });

  it('issues one receipt per settled transfer, with its journal entry and rail reference, verifiable by anyone', async () => {
    const id = await settledPayout();
    await drainRails(t);
    const receipt = await api(t, 'GET', `/v1/transfers/${id}/receipt`);
    expect(receipt.statusCode, receipt.body).toBe(200);
    expect(receipt.data).toMatchObject({
      object: 'receipt',
      transfer: id,
      amount: '12.00',
      currency: 'KES',
      rail: 'mobile_money',
      status: 'settled',
      organization: 'Mkoba Sandbox',
    });
    expect(receipt.data.code).toMatch(/^MKR(-[0-9A-HJKMNP-TV-Z]{4}){5}$/);
    expect(receipt.data.destination).toMatch(/^mpesa \+254•+00$/);
    const entries = await api(t, 'GET', `/v1/ledger/entries?transfer=${id}`);
    const post = entries.data.data.find((e: { kind: string }) => e.kind === 'post');
    expect(receipt.data.journal_entry).toBe(post.id);
    // The sandbox rail's reference for the payout names the transfer it was asked to pay.
    expect(receipt.data.rail_reference).toContain(id);
    expect((await api(t, 'GET', `/v1/transfers/${id}/receipt`)).data.code).toBe(receipt.data.code);

    const typed = receipt.data.code.toLowerCase().replace(/-/g, '');
    const verified = await api(t, 'GET', `/v1/receipts/verify?code=${typed}`, { key: null });
    expect(verified.statusCode, verified.body).toBe(200);
    // The public check masks the paying wallet like the destination: anyone holding the code sees it.
    const source = receipt.data.source as string;
    expect(verified.data).toEqual({ ...receipt.data, source: `••••••${source.slice(-6)}` });
    expect(verified.body).not.toContain(source);
    const unknown = await api(t, 'GET', '/v1/receipts/verify?code=MKR-0000-0000-0000-0000-0000', {
      key: null,
    });
    expect(unknown.statusCode).toBe(404);
    const malformed = await api(t, 'GET', '/v1/receipts/verify?code=hello', { key: null });
    expect(malformed.data).toMatchObject({ status: 400, param: 'code' });
    const other = await newOrganizationKey(t);
    expect((await api(t, 'GET', `/v1/transfers/${id}/receipt`, { key: other })).statusCode).toBe(404);
  });

  it('prints as a self-contained page with every value escaped', async () => {
    const id = await settledPayout();
    await drainRails(t);
    const page = await api(t, 'GET', `/v1/transfers/${id}/receipt?format=html`);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('<h1>Payment receipt</h1>');
    expect(page.body).toContain('12.00 KES');
    expect(page.body).not.toMatch(/<script/);
    const code = (await api(t, 'GET', `/v1/transfers/${id}/receipt`)).data.code;
    expect(page.body).toContain(code);
    expect(page.body).toContain(`/v1/receipts/verify?code=${code}`);
    const negotiated = await api(t, 'GET', `/v1/transfers/${id}/receipt`, {
      headers: { accept: 'text/html' },
    });
    expect(negotiated.headers['content-type']).toMatch(/^text\/html/);
  });

  it('renders as a PDF with the same facts, the same bytes every time, for its organization only', async () => {
    const id = await settledPayout();
    await drainRails(t);
    const receipt = (await api(t, 'GET', `/v1/transfers/${id}/receipt`)).data;
    const pdf = await api(t, 'GET', `/v1/transfers/${id}/receipt?format=pdf`);
    expect(pdf.statusCode, pdf.body).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.headers['content-disposition']).toBe(`inline; filename="receipt-${receipt.code}.pdf"`);
    expect(pdf.rawPayload.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const text = pdfText(pdf.rawPayload);
    for (const fact of [
      'Payment receipt',
      'Mkoba Sandbox',
      '12.00 KES',
      'settled',
      receipt.settled_at,
      receipt.source,
      'mpesa +254',
      receipt.rail_reference,
      receipt.journal_entry,
      receipt.issued_at,
      receipt.code,
      `/v1/receipts/verify?code=${receipt.code}`,
    ]) {
      expect(text).toContain(fact);
    }
    // Dated by the receipt, not the clock: a day later, by Accept instead of format, the same bytes.
    const issued = receipt.issued_at.replace(/[-:T]/g, '').slice(0, 14);
    expect(pdf.rawPayload.toString('latin1')).toContain(`(D:${issued}Z)`);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + ONE_DAY_MS });
    try {
      const again = await api(t, 'GET', `/v1/transfers/${id}/receipt`, {
        headers: { accept: 'application/pdf' },
      });
      expect(again.headers['content-type']).toBe('application/pdf');
      expect(again.rawPayload.equals(pdf.rawPayload)).toBe(true);
    } finally {
      vi.useRealTimers();
    }

    const other = await newOrganizationKey(t);
    const foreign = await api(t, 'GET', `/v1/transfers/${id}/receipt?format=pdf`, { key: other });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.rawPayload.subarray(0, 5).toString('latin1')).not.toBe('%PDF-');
  });

  it('a returned transfer keeps its receipt, which now says returned', async () => {
    const id = await settledPayout();
    await drainRails(t);
    const code = (await api(t, 'GET', `/v1/transfers/${id}/receipt`)).data.code;
    const returned = await api(t, 'POST', `/v1/sandbox/transfers/${id}/return`);
    expect(returned.statusCode, returned.body).toBe(200);
    const verified = await api(t, 'GET', `/v1/receipts/verify?code=${code}`, { key: null });
    expect(verified.data.status).toBe('returned');
  });
});
