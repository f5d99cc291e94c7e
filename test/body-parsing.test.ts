import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_BODY_BYTES_MAX } from '../src/config.ts';
import { api, BACKENDS, createCustomer, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet } from './support/ledger.ts';

describe.each(BACKENDS)('request bodies on %s', (backend) => {
  let t: TestApp;
  let owner: string;
  beforeAll(async () => {
    t = await startTestApp(backend);
    owner = await createCustomer(t);
  });
  afterAll(async () => {
    await expectLedgerHealthy(t);
    await t.close();
  });

  /** Sends `payload` exactly as given, so numbers keep the spelling a client wrote. */
  const raw = (
    method: 'POST' | 'PATCH',
    url: string,
    payload: string | Buffer,
    headers: Record<string, string> = {},
  ) => api(t, method, url, { body: payload, headers: { 'content-type': 'application/json', ...headers } });

  const fund = (wallet: string, amountJson: string, headers: Record<string, string> = {}) =>
    raw('POST', `/v1/sandbox/wallets/${wallet}/fund`, `{"amount":${amountJson}}`, headers);

  function expectFieldProblem(
    response: Awaited<ReturnType<typeof api>>,
    status: number,
    param: string,
    fieldCode: string,
  ) {
    expect(response.statusCode, response.body).toBe(status);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.data.param, response.body).toBe(param);
    expect(response.data.errors[0]).toMatchObject({ param, code: fieldCode });
  }

  describe('JSON-number amounts are read exactly as written', () => {
    it('judges a number beyond double precision as written, not as the nearest double', async () => {
      const wallet = await fundedWallet(t, '0', 'UGX');
      // As a double this is 1000000000000 exactly, the single-amount cap, and would be funded.
      expectFieldProblem(await fund(wallet, '1000000000000.0000001'), 400, 'amount', 'too_precise');
      // Above the cap as written (as a double, …568): out of range, and the detail names the cap.
      const huge = await fund(wallet, '12345678901234567');
      expectFieldProblem(huge, 400, 'amount', 'out_of_range');
      expect(huge.data.detail).toContain('1000000000000');
      const funded = await fund(wallet, '999999999999');
      expect(funded.statusCode, funded.body).toBe(201);
      expect(await balanceOf(t, wallet)).toMatchObject({ current: '999999999999' });
    });

    it('applies the string rules to every spelling of a number, exponents included', async () => {
      const wallet = await fundedWallet(t, '0');
      for (const [json, code] of [
        ['0.0000001', 'too_precise'],
        ['1E-7', 'too_precise'],
        ['1.0001e1', 'too_precise'],
        ['1e-400', 'too_precise'],
        ['1e400', 'out_of_range'],
        ['92233720368547758.08', 'out_of_range'],
        ['-1.5', 'not_positive'],
      ] as const) {
        const response = await fund(wallet, json);
        expect(response.statusCode, json).toBe(400);
        expect(response.data.errors[0], json).toMatchObject({ param: 'amount', code });
      }
      for (const [json, amount] of [
        ['1.5e3', '1500.00'],
        ['12.50', '12.50'],
        ['0.1', '0.10'],
        ['1250E-2', '12.50'],
      ] as const) {
        const response = await fund(wallet, json);
        expect(response.statusCode, `${json}: ${response.body}`).toBe(201);
        expect(response.data.amount, json).toBe(amount);
      }
      // A string is still a plain decimal: exponents are for JSON numbers only.
      const text = await fund(wallet, '"1e3"');
      expect(text.data.errors[0]).toMatchObject({ param: 'amount', code: 'invalid_format' });
    });

    it('reads a transfer amount exactly too', async () => {
      // A verified business (tier 2), so that a large amount is within its transfer limits.
      const owner = (await api(t, 'POST', '/v1/customers', { body: { type: 'business', name: 'Big Co' } }))
        .data.id;
      const verified = await api(t, 'POST', `/v1/customers/${owner}/verifications`, {
        body: {
          type: 'business',
          legal_name: 'Big Co',
          registration_number: 'PVT-2001-0001',
          country: 'UG',
          beneficial_owners: [
            {
              name: 'Sarah Nakato',
              date_of_birth: '1970-01-01',
              national_id: { type: 'national_id', number: 'CM12345678' },
              ownership_bp: 10_000,
            },
          ],
        },
      });
      expect(verified.data.status).toBe('verified');
      const source = (await api(t, 'POST', '/v1/wallets', { body: { owner, currency: 'UGX' } })).data.id;
      expect((await fund(source, '1000000000000')).statusCode).toBe(201);
      const destination = await fundedWallet(t, '0', 'UGX');
      const body = (amount: string) =>
        `{"source":"${source}","destination":"${destination}","currency":"UGX","amount":${amount}}`;
      const precise = await raw('POST', '/v1/transfers', body('0.0000001'));
      expectFieldProblem(precise, 400, 'amount', 'too_precise');
      expectFieldProblem(
        await raw('POST', '/v1/transfers', body('345678901234.0000001')),
        400,
        'amount',
        'too_precise',
      );
      expectFieldProblem(await raw('POST', '/v1/transfers', body('1e17')), 400, 'amount', 'out_of_range');
      const exact = await raw('POST', '/v1/transfers', body('298765432'));
      expect(exact.statusCode, exact.body).toBe(201);
      expect(exact.data.amount).toBe('298765432');
      expect(await balanceOf(t, source)).toMatchObject({ current: '999701234568' });
    });
  });

  describe('idempotency fingerprints', () => {
    it('two numbers that differ only beyond double precision are different requests', async () => {
      // A funding of a wallet that does not exist is a recorded 404, so the key keeps the first fingerprint.
      const missing = 'wallet_01m80v1f31hmw57sgkdkcnyxra';
      const headers = { 'idempotency-key': `exact-${owner}` };
      expect((await fund(missing, '12345678901234567', headers)).statusCode).toBe(404);
      const same = await fund(missing, '12345678901234567.0', headers);
      expect(same.statusCode).toBe(404);
      expect(same.headers['idempotent-replayed']).toBe('true');
      const other = await fund(missing, '12345678901234568', headers);
      expect(other.statusCode, other.body).toBe(422);
      expect(other.data.code).toBe('idempotency_key_reused');
    });

    it('one value however it is spelt is the same request: 1.5, 1.50 and 15e-1 replay', async () => {
      const wallet = await fundedWallet(t, '0');
      const headers = { 'idempotency-key': `spelling-${wallet}` };
      const first = await fund(wallet, '1.5', headers);
      expect(first.statusCode).toBe(201);
      for (const spelling of ['1.50', '15e-1', '0.15E1']) {
        const again = await fund(wallet, spelling, headers);
        expect(again.statusCode, spelling).toBe(201);
        expect(again.headers['idempotent-replayed'], spelling).toBe('true');
        expect(again.data.id).toBe(first.data.id);
      }
    });

    it('a trailing slash does not change the fingerprint', async () => {
      const headers = { 'idempotency-key': `slash-${owner}` };
      const body = JSON.stringify({ type: 'individual', name: 'Slash' });
      const first = await raw('POST', '/v1/customers', body, headers);
      expect(first.statusCode).toBe(201);
      const again = await raw('POST', '/v1/customers/', body, headers);
      expect(again.statusCode, again.body).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.data.id).toBe(first.data.id);
    });

    it('the content coding does not change the fingerprint', async () => {
      const headers = { 'idempotency-key': `coding-${owner}` };
      const body = JSON.stringify({ type: 'individual', name: 'Coded' });
      const first = await raw('POST', '/v1/customers', body, headers);
      const again = await raw('POST', '/v1/customers', gzipSync(body), {
        ...headers,
        'content-encoding': 'gzip',
      });
      expect(again.statusCode, again.body).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.data.id).toBe(first.data.id);
    });
  });

  describe('characters PostgreSQL cannot store', () => {
    const surrogate = '\ud800';

    it('a lone surrogate anywhere in a body is a 400 naming the field, and writes nothing', async () => {
      const before = (await api(t, 'GET', '/v1/customers?limit=100')).data.data.length;
      let n = 0;
      for (const [body, param] of [
        [{ type: 'individual', name: `A${surrogate}` }, 'name'],
        [{ type: 'individual', name: 'A', metadata: { note: `x${surrogate}y` } }, 'metadata.note'],
        [{ type: 'individual', name: 'A', metadata: { [`k${surrogate}`]: 'v' } }, 'metadata'],
        [{ type: 'individual', name: 'A', metadata: { note: '\udc00' } }, 'metadata.note'],
      ] as const) {
        for (const headers of [{}, { 'idempotency-key': `surrogate-${n++}-${owner}` }] as Record<
          string,
          string
        >[]) {
          const response = await api(t, 'POST', '/v1/customers', { body, headers });
          expectFieldProblem(response, 400, param, 'invalid_character');
        }
      }
      const after = (await api(t, 'GET', '/v1/customers?limit=100')).data.data.length;
      expect(after).toBe(before);
    });

    it('a paired surrogate (an emoji) is stored and read back unchanged', async () => {
      const name = 'Emoji \ud83d\ude00';
      const created = await api(t, 'POST', '/v1/customers', {
        body: { type: 'individual', name, metadata: { note: name } },
        headers: { 'idempotency-key': `emoji-${owner}` },
      });
      expect(created.statusCode, created.body).toBe(201);
      const fetched = await api(t, 'GET', `/v1/customers/${created.data.id}`);
      expect(fetched.data).toMatchObject({ name, metadata: { note: name } });
    });

    it('covers webhook descriptions, nested keys and arrays', async () => {
      const url = 'https://example.com/hooks';
      for (const [body, param] of [
        [{ url, events: ['transfer.settled'], description: `ops${surrogate}` }, 'description'],
        [{ url, events: ['transfer.settled', `transfer${surrogate}`] }, 'events.1'],
        [{ url, events: ['transfer.settled'], metadata: { [`a${surrogate}`]: 'b' } }, 'metadata'],
        [{ url, events: ['transfer.settled'], description: 'ops\u0000' }, 'description'],
      ] as const) {
        const response = await api(t, 'POST', '/v1/webhook-subscriptions', { body });
        expectFieldProblem(response, 400, param, 'invalid_character');
      }
    });

    it('covers the query string, path parameters and the Idempotency-Key header', async () => {
      for (const query of ['status=%00', 'status=active%00']) {
        const response = await api(t, 'GET', `/v1/wallets?${query}`);
        expectFieldProblem(response, 400, 'status', 'invalid_character');
      }
      expectFieldProblem(await api(t, 'GET', '/v1/wallets/wallet_%00'), 400, 'id', 'invalid_character');
      for (const key of ['k\u0000', `k${surrogate}`]) {
        const response = await api(t, 'POST', '/v1/customers', {
          body: { type: 'individual', name: 'Keyed' },
          headers: { 'idempotency-key': key },
        });
        expectFieldProblem(response, 400, 'Idempotency-Key', 'invalid_character');
      }
    });
  });

  describe('content codings', () => {
    const customer = JSON.stringify({ type: 'individual', name: 'Compressed' });

    it('decodes gzip, deflate and br bodies, and takes identity as plain', async () => {
      for (const [coding, payload] of [
        ['gzip', gzipSync(customer)],
        ['x-gzip', gzipSync(customer)],
        ['deflate', deflateSync(customer)],
        ['br', brotliCompressSync(customer)],
        ['identity', Buffer.from(customer)],
        ['GZIP', gzipSync(customer)],
      ] as const) {
        const response = await raw('POST', '/v1/customers', payload, { 'content-encoding': coding });
        expect(response.statusCode, `${coding}: ${response.body}`).toBe(201);
        expect(response.data.name).toBe('Compressed');
      }
    });

    it('refuses a coding it does not know, or more than one, with 415 naming Content-Encoding', async () => {
      for (const coding of ['zstd', 'compress', 'gzip, br', 'rot13']) {
        const response = await raw('POST', '/v1/customers', customer, { 'content-encoding': coding });
        expect(response.statusCode, coding).toBe(415);
        expect(response.data).toMatchObject({ code: 'unsupported_media_type', param: 'Content-Encoding' });
        expect(response.headers['accept-encoding']).toBe('gzip, deflate, br');
      }
    });

    it('a decompression bomb is a 413 without being inflated whole', async () => {
      const zeros = Buffer.alloc(10 * 1024 * 1024);
      for (const [coding, payload] of [
        ['gzip', gzipSync(zeros)],
        ['br', brotliCompressSync(zeros)],
      ] as const) {
        expect(payload.length).toBeLessThan(REQUEST_BODY_BYTES_MAX);
        const response = await raw('POST', '/v1/customers', payload, { 'content-encoding': coding });
        expect(response.statusCode, coding).toBe(413);
        expect(response.data.code).toBe('payload_too_large');
      }
    });

    it('corrupt compressed data is a 400 malformed_json', async () => {
      for (const [coding, payload] of [
        ['gzip', Buffer.from(customer)],
        ['br', Buffer.from('not brotli at all')],
        ['gzip', gzipSync(customer).subarray(0, 20)],
        ['gzip', gzipSync('{"type": ')],
      ] as const) {
        const response = await raw('POST', '/v1/customers', payload, { 'content-encoding': coding });
        expect(response.statusCode, coding).toBe(400);
        expect(response.data.code).toBe('malformed_json');
      }
    });
  });

  describe('the JSON itself', () => {
    it('a key given twice with different values is a 400 naming it', async () => {
      for (const [payload, param] of [
        ['{"type":"individual","name":"A","name":"B"}', 'name'],
        ['{"type":"individual","name":"A","metadata":{"k":"1","k":"2"}}', 'metadata.k'],
      ] as const) {
        expectFieldProblem(await raw('POST', '/v1/customers', payload), 400, param, 'duplicate_key');
      }
    });

    it('a key repeated with the same value is harmless', async () => {
      const response = await raw(
        'POST',
        '/v1/customers',
        '{"type":"individual","name":"Twice","name":"Twice"}',
      );
      expect(response.statusCode, response.body).toBe(201);
    });

    it('prototype keys are refused by name', async () => {
      for (const [payload, param] of [
        [`{"owner":"${owner}","currency":"KES","__proto__":{"admin":true}}`, '__proto__'],
        [`{"owner":"${owner}","currency":"KES","metadata":{"__proto__":"x"}}`, 'metadata.__proto__'],
        [`{"owner":"${owner}","currency":"KES","constructor":{"prototype":{"a":1}}}`, 'constructor'],
      ] as const) {
        expectFieldProblem(await raw('POST', '/v1/wallets', payload), 400, param, 'invalid_key');
      }
      expect(({} as Record<string, unknown>).admin).toBeUndefined();
    });

    it('bytes that are not UTF-8 are a 400 malformed_json, a byte-order mark is allowed', async () => {
      const bad = Buffer.concat([
        Buffer.from('{"type":"individual","name":"'),
        Buffer.from([0xff]),
        Buffer.from('"}'),
      ]);
      const refused = await raw('POST', '/v1/customers', bad);
      expect(refused.statusCode).toBe(400);
      expect(refused.data.code).toBe('malformed_json');
      const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(customerJson('Bom'))]);
      const accepted = await raw('POST', '/v1/customers', bom);
      expect(accepted.statusCode, accepted.body).toBe(201);
    });

    it('nesting too deep to parse is a 400, not a 500', async () => {
      const depth = 100_000;
      const response = await raw('POST', '/v1/customers', `${'['.repeat(depth)}${']'.repeat(depth)}`);
      expect(response.statusCode).toBe(400);
      // Refused by the depth limit before the parser sees it (REQUEST_BODY_DEPTH_MAX).
      expect(response.data).toMatchObject({
        code: 'validation_error',
        param: 'body',
        errors: [{ code: 'body_too_deep' }],
      });
    });
  });
});

function customerJson(name: string): string {
  return JSON.stringify({ type: 'individual', name });
}
