import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_BODY_BYTES_MAX } from '../src/config.ts';
import { api, BACKENDS, createCustomer, startTestApp, type TestApp } from './support/harness.ts';

describe.each(BACKENDS)('bad input on %s', (backend) => {
  let t: TestApp;
  let owner: string;
  beforeAll(async () => {
    t = await startTestApp(backend);
    owner = await createCustomer(t);
  });
  afterAll(() => t.close());

  const raw = (payload: string, contentType = 'application/json', url = '/v1/wallets') =>
    api(t, 'POST', url, { body: payload, headers: { 'content-type': contentType } });

  function expectProblem(response: Awaited<ReturnType<typeof api>>, status: number, code: string) {
    expect(response.statusCode).toBe(status);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(response.data).toMatchObject({ status, code, type: `urn:mkoba:error:${code}` });
    expect(typeof response.data.title).toBe('string');
    expect(typeof response.data.detail).toBe('string');
    expect(Array.isArray(response.data.errors)).toBe(true);
    expect(response.data.request_id).toBe(response.headers['request-id']);
  }

  it('malformed JSON is a 400 malformed_json', async () => {
    expectProblem(await raw('{"owner": '), 400, 'malformed_json');
    expectProblem(await raw('{owner: 1}'), 400, 'malformed_json');
    expectProblem(await raw(''), 400, 'malformed_json');
  });

  it('a body that is not an object is a validation error', async () => {
    for (const payload of ['null', '[]', '"text"', '42', 'true']) {
      const response = await raw(payload);
      expectProblem(response, 400, 'validation_error');
    }
  });

  it('a wrong Content-Type is a 415', async () => {
    const response = await raw(JSON.stringify({ owner, currency: 'KES' }), 'text/plain');
    expectProblem(response, 415, 'unsupported_media_type');
    expect(response.data.param).toBe('Content-Type');
    expectProblem(await raw('owner=x', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
  });

  it('a body over the size limit is a 413 and writes nothing', async () => {
    const huge = JSON.stringify({
      owner,
      currency: 'KES',
      metadata: { big: 'x'.repeat(REQUEST_BODY_BYTES_MAX) },
    });
    const response = await raw(huge);
    expectProblem(response, 413, 'payload_too_large');
    // The problem states the limit, so a client knows what to send instead.
    expect(response.data.detail).toContain(`(${REQUEST_BODY_BYTES_MAX} bytes)`);
  });

  it('wrong types name the field', async () => {
    for (const [body, param] of [
      [{ owner: 123, currency: 'KES' }, 'owner'],
      [{ owner, currency: ['KES'] }, 'currency'],
      [{ owner, currency: 'KES', metadata: 'x' }, 'metadata'],
      [{ owner, currency: 'KES', metadata: { a: null } }, 'metadata.a'],
      [{ owner, currency: null }, 'currency'],
    ] as const) {
      const response = await api(t, 'POST', '/v1/wallets', { body });
      expectProblem(response, 400, 'validation_error');
      expect(response.data.param, JSON.stringify(body)).toBe(param);
    }
  });

  it('prototype pollution attempts are refused, not executed', async () => {
    const response = await raw(`{"owner":"${owner}","currency":"KES","__proto__":{"admin":true}}`);
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('customers: type, name, email and phone are validated', async () => {
    for (const [body, param] of [
      [{ type: 'robot', name: 'R2' }, 'type'],
      [{ type: 'individual' }, 'name'],
      [{ type: 'individual', name: '' }, 'name'],
      [{ type: 'individual', name: 'x'.repeat(201) }, 'name'],
      [{ type: 'individual', name: 'A', email: 'not-an-email' }, 'email'],
      [{ type: 'individual', name: 'A', phone: '0712345678' }, 'phone'],
      [{ type: 'individual', name: 'A', kyc_status: 'verified' }, 'kyc_status'],
    ] as const) {
      const response = await api(t, 'POST', '/v1/customers', { body });
      expectProblem(response, 400, 'validation_error');
      expect(response.data.param, JSON.stringify(body)).toBe(param);
    }
  });

  it('unknown routes are 404 route_not_found and wrong methods 405 with Allow', async () => {
    expectProblem(await api(t, 'GET', '/v1/nothing-here'), 404, 'route_not_found');
    expectProblem(await api(t, 'GET', '/nope', { key: null }), 404, 'route_not_found');
    const wrongMethod = await api(t, 'DELETE', '/v1/wallets');
    expectProblem(wrongMethod, 405, 'method_not_allowed');
    expect(wrongMethod.headers.allow).toContain('GET');
    expect(wrongMethod.headers.allow).toContain('POST');
    const patchWallet = await api(t, 'PUT', '/v1/wallets/wallet_01m80v1f31hmw57sgkdkcnyxra');
    expectProblem(patchWallet, 405, 'method_not_allowed');
  });

  it('no failed write leaves a partial record behind', async () => {
    const before = (await api(t, 'GET', '/v1/wallets?limit=100')).data.data.length;
    await raw('{"owner": ');
    await api(t, 'POST', '/v1/wallets', { body: { owner, currency: 'XXX' } });
    await api(t, 'POST', '/v1/wallets', {
      body: { owner: 'cus_01m80v1f31hmw57sgkdkcnyxra', currency: 'KES' },
    });
    const after = (await api(t, 'GET', '/v1/wallets?limit=100')).data.data.length;
    expect(after).toBe(before);
  });

  it('a NUL character in any string or key is a 400 naming the field, and writes nothing', async () => {
    for (const [body, param] of [
      [{ type: 'individual', name: 'A\u0000B' }, 'name'],
      [{ type: 'individual', name: 'A', metadata: { note: 'x\u0000' } }, 'metadata.note'],
      [{ type: 'individual', name: 'A', metadata: { 'k\u0000': 'v' } }, 'metadata'],
    ] as const) {
      const response = await api(t, 'POST', '/v1/customers', { body });
      expectProblem(response, 400, 'validation_error');
      expect(response.data.param, JSON.stringify(body)).toBe(param);
    }
  });

  it('created-range bounds PostgreSQL cannot hold are a 400 naming the parameter', async () => {
    for (const [query, param] of [
      ['created[gte]=0000-01-01T00:00:00Z', 'created[gte]'],
      ['created[lte]=2024-12-31T23:59:60Z', 'created[lte]'],
    ]) {
      for (const path of ['/v1/wallets', '/v1/transfers', '/v1/events', '/v1/customers']) {
        const response = await api(t, 'GET', `${path}?${query}`);
        expectProblem(response, 400, 'validation_error');
        expect(response.data.param, `${path}?${query}`).toBe(param);
      }
    }
  });

  it('a path that cannot be decoded is a problem, not a framework error', async () => {
    const response = await api(t, 'GET', '/v1/wallets/%E0%A4%A');
    expectProblem(response, 400, 'validation_error');
    expect(response.data.param).toBe('path');
  });

  it('a request Node cannot parse (an unknown method) gets a problem body over a real socket', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () =>
        socket.write('FOO /v1/wallets HTTP/1.1\r\nHost: x\r\n\r\n'),
      );
      let text = '';
      socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8');
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('Content-Type: application/problem+json');
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(body).toMatchObject({
      status: 400,
      code: 'validation_error',
      type: 'urn:mkoba:error:validation_error',
    });
    expect(body.request_id).toMatch(/^req_/);
  });
});
