/**
 * The request log: at `info`, one JSON line per request with its method, route pattern, status, duration,
 * request id and problem code, and never a key, a secret, a query string or a body.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemDeps } from '../src/app/deps.ts';
import { SANDBOX_ORGANIZATION_NAME, seedSandbox } from '../src/app/seed.ts';
import { keyringOf, MASTER_KEY_BYTES } from '../src/domain/sealing.ts';
import { buildApp } from '../src/http/app.ts';
import { migrate } from '../src/store/migrate.ts';
import { findOrganizationByName } from '../src/store/repositories/organizations.ts';
import { api, BACKENDS, openTestDatabase, type TestApp, type TestDatabase } from './support/harness.ts';

interface LogLine {
  level: number;
  msg: string;
  method?: string;
  route?: string | null;
  status?: number;
  duration_ms?: number;
  request_id?: string;
  error_code?: string | null;
}

const PINO_INFO = 30;

describe.each(BACKENDS)('the request log on %s', (backend) => {
  let db: TestDatabase;
  let t: TestApp;
  let output = '';
  const lines = (): LogLine[] =>
    output
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as LogLine);

  beforeAll(async () => {
    db = await openTestDatabase(backend);
    const masterKey = randomBytes(MASTER_KEY_BYTES);
    // The log test subscribes 127.0.0.1 (local development's opt-in) and seals its secret.
    const deps = systemDeps(db.store, 'sandbox', {
      keyring: keyringOf(new Uint8Array(masterKey)),
      allowPrivateWebhookUrls: true,
    });
    await migrate(db.store);
    const seeded = await seedSandbox(deps, undefined);
    if (!seeded.apiKey) throw new Error('seed did not return a key');
    const stream = new Writable({
      write(chunk, _encoding, done) {
        output += chunk.toString();
        done();
      },
    });
    const app = await buildApp({ deps, logger: { level: 'info', stream } });
    const organization = await findOrganizationByName(db.store, SANDBOX_ORGANIZATION_NAME);
    t = {
      backend,
      app,
      deps,
      db,
      key: seeded.apiKey,
      organizationId: organization?.id ?? '',
      encryptionKey: masterKey.toString('base64'),
      close: async () => {},
    };
  });
  afterAll(async () => {
    await t.app.close();
    await db.close();
  });

  it('writes exactly one line per request, with what happened and nothing secret', async () => {
    output = '';
    const idempotencyKey = 'log-test-key-7f3a';
    const secretQuery = 'secret-query-value';
    const responses = [
      await api(t, 'GET', `/v1/wallets?limit=5&starting_after=${secretQuery}`),
      await api(t, 'GET', '/v1/customers?limit=1'),
      await api(t, 'POST', '/v1/customers', {
        body: { type: 'individual', name: 'Logged Person', email: 'person@example.com' },
        headers: { 'idempotency-key': idempotencyKey },
      }),
      await api(t, 'POST', '/v1/webhook-subscriptions', {
        body: { url: 'http://127.0.0.1:9/hook', events: ['*'] },
      }),
      await api(t, 'GET', '/v1/wallets', { key: `sk_sandbox_${'Z'.repeat(32)}` }),
      await api(t, 'GET', '/v1/nowhere'),
      await api(t, 'GET', '/v1/wallets/%E0%A4%A'),
      await api(t, 'GET', '/healthz', { key: null }),
    ];
    const secret = responses[3]?.data.secret as string;
    expect(secret).toMatch(/^whsec_/);

    const requestLines = lines().filter((line) => line.msg === 'request');
    expect(lines()).toEqual(requestLines);
    expect(requestLines).toHaveLength(responses.length);
    for (const [i, response] of responses.entries()) {
      const line = requestLines[i] as LogLine;
      expect(line.level, `line ${i}`).toBe(PINO_INFO);
      expect(line.request_id, `line ${i}`).toBe(response.headers['request-id']);
      expect(line.status, `line ${i}`).toBe(response.statusCode);
      expect(line.duration_ms, `line ${i}`).toEqual(expect.any(Number));
      expect(line.error_code, `line ${i}`).toBe(response.statusCode >= 400 ? response.data.code : null);
    }
    expect(
      requestLines.map(({ method, route, status, error_code }) => ({ method, route, status, error_code })),
    ).toEqual([
      { method: 'GET', route: '/v1/wallets', status: 400, error_code: 'validation_error' },
      { method: 'GET', route: '/v1/customers', status: 200, error_code: null },
      { method: 'POST', route: '/v1/customers', status: 201, error_code: null },
      { method: 'POST', route: '/v1/webhook-subscriptions', status: 201, error_code: null },
      { method: 'GET', route: '/v1/wallets', status: 401, error_code: 'invalid_api_key' },
      { method: 'GET', route: null, status: 404, error_code: 'route_not_found' },
      { method: 'GET', route: null, status: 400, error_code: 'validation_error' },
      { method: 'GET', route: '/healthz', status: 200, error_code: null },
    ]);
    for (const text of [t.key, 'Z'.repeat(32), secret, idempotencyKey, secretQuery, 'person@example.com']) {
      expect(output, 'a secret, a key or a value of the request').not.toContain(text);
    }
  });
});
