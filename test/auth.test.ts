import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_CACHE_TTL_MS } from '../src/app/apiKeyAuthentication.ts';
import { issueApiKey, revokeKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { api, BACKENDS, newOrganizationKey, startTestApp, type TestApp } from './support/harness.ts';

/** Every authenticated route, so each auth check runs against all of them. */
const ROUTES: { method: 'GET' | 'POST'; url: string; scope: 'read' | 'write'; body?: unknown }[] = [
  { method: 'GET', url: '/v1/customers', scope: 'read' },
  { method: 'GET', url: '/v1/customers/cus_01m80v1f31hmw57sgkdkcnyxra', scope: 'read' },
  { method: 'POST', url: '/v1/customers', scope: 'write', body: { type: 'individual', name: 'A' } },
  { method: 'GET', url: '/v1/wallets', scope: 'read' },
  { method: 'GET', url: '/v1/wallets/wallet_01m80v1f31hmw57sgkdkcnyxra', scope: 'read' },
  { method: 'GET', url: '/v1/wallets/wallet_01m80v1f31hmw57sgkdkcnyxra/balance', scope: 'read' },
  {
    method: 'POST',
    url: '/v1/wallets',
    scope: 'write',
    body: { owner: 'cus_01m80v1f31hmw57sgkdkcnyxra', currency: 'KES' },
  },
  { method: 'GET', url: '/v1/transfers', scope: 'read' },
  { method: 'GET', url: '/v1/transfers/tr_01m80v1f31hmw57sgkdkcnyxra', scope: 'read' },
  {
    method: 'POST',
    url: '/v1/transfers',
    scope: 'write',
    body: {
      source: 'wallet_01m80v1f31hmw57sgkdkcnyxra',
      destination: 'wallet_01m80v1f31hmw57sgkdkcnyxrb',
      amount: '1.00',
      currency: 'KES',
    },
  },
  { method: 'POST', url: '/v1/transfers/tr_01m80v1f31hmw57sgkdkcnyxra/cancel', scope: 'write' },
  {
    method: 'POST',
    url: '/v1/sandbox/wallets/wallet_01m80v1f31hmw57sgkdkcnyxra/fund',
    scope: 'write',
    body: { amount: '1.00' },
  },
  { method: 'POST', url: '/v1/sandbox/transfers/tr_01m80v1f31hmw57sgkdkcnyxra/settle', scope: 'write' },
  { method: 'GET', url: '/v1/events', scope: 'read' },
  { method: 'GET', url: '/v1/events/evt_01m80v1f31hmw57sgkdkcnyxra', scope: 'read' },
  { method: 'GET', url: '/v1/ledger/entries', scope: 'read' },
  { method: 'GET', url: '/v1/ledger/accounts', scope: 'read' },
];

describe.each(BACKENDS)('authentication on %s', (backend) => {
  let t: TestApp;
  let revoked: string;
  let readOnly: string;
  beforeAll(async () => {
    t = await startTestApp(backend);
    const issued = await issueApiKey(t.deps, { organizationName: 'Revoked Org' });
    await revokeKey(t.deps, issued.record.id);
    revoked = issued.key;
    readOnly = await newOrganizationKey(t, ['read']);
  });
  afterAll(() => t.close());

  const cases: [string, (t: TestApp) => Record<string, string>, string][] = [
    ['missing', () => ({}), 'api_key_missing'],
    ['empty', () => ({ authorization: '' }), 'api_key_missing'],
    ['not bearer', (t) => ({ authorization: `Basic ${t.key}` }), 'api_key_malformed'],
    [
      'bad prefix',
      () => ({ authorization: 'Bearer pk_test_abcdefghijklmnopqrstuvwxyz' }),
      'api_key_malformed',
    ],
    ['too short', () => ({ authorization: 'Bearer sk_sandbox_abc' }), 'api_key_malformed'],
    ['unknown', () => ({ authorization: `Bearer sk_sandbox_${'Z'.repeat(32)}` }), 'invalid_api_key'],
    [
      'live key in sandbox',
      () => ({ authorization: `Bearer sk_live_${'Z'.repeat(32)}` }),
      'api_key_environment_mismatch',
    ],
  ];

  for (const route of ROUTES) {
    it(`${route.method} ${route.url}: refuses bad keys with distinct 401 codes`, async () => {
      for (const [label, headers, code] of cases) {
        const response = await api(t, route.method, route.url, {
          key: null,
          headers: headers(t),
          body: route.body,
        });
        expect(response.statusCode, label).toBe(401);
        expect(response.headers['content-type'], label).toContain('application/problem+json');
        expect(response.data.code, label).toBe(code);
        expect(response.data.request_id, label).toBe(response.headers['request-id']);
      }
      const revokedResponse = await api(t, route.method, route.url, { key: revoked, body: route.body });
      expect(revokedResponse.statusCode).toBe(401);
      expect(revokedResponse.data.code).toBe('api_key_revoked');
    });

    it(`${route.method} ${route.url}: checks the '${route.scope}' scope`, async () => {
      const response = await api(t, route.method, route.url, { key: readOnly, body: route.body });
      if (route.scope === 'write') {
        expect(response.statusCode).toBe(403);
        expect(response.data.code).toBe('insufficient_permissions');
      } else {
        expect([200, 404]).toContain(response.statusCode);
      }
    });
  }

  it('answers every 401 with a Bearer challenge, naming invalid_token when a key was sent (RFC 6750)', async () => {
    const refusedKey = /^Bearer realm="mkoba", error="invalid_token", error_description="[^"\\]+"$/;
    for (const route of ROUTES) {
      for (const [label, headers, code] of cases) {
        const at = `${route.method} ${route.url}: ${label}`;
        const response = await api(t, route.method, route.url, {
          key: null,
          headers: headers(t),
          body: route.body,
        });
        expect(response.statusCode, at).toBe(401);
        const challenge = response.headers['www-authenticate'];
        if (code === 'api_key_missing') expect(challenge, at).toBe('Bearer realm="mkoba"');
        else expect(challenge, at).toMatch(refusedKey);
      }
      const revokedResponse = await api(t, route.method, route.url, { key: revoked, body: route.body });
      expect(revokedResponse.headers['www-authenticate']).toBe(
        'Bearer realm="mkoba", error="invalid_token", error_description="The API key has been revoked."',
      );
    }
  });

  it('says precisely what is wrong with a malformed key, never contradicting what was sent', async () => {
    const malformed: [string, string, string, RegExp][] = [
      [`Basic ${t.key}`, 'bearer_scheme', "it does not start with 'Bearer '", /^The Authorization header/],
      [t.key, 'bearer_scheme', "it does not start with 'Bearer '", /^The Authorization header/],
      ['Bearer', 'bearer_scheme', "no key follows 'Bearer '", /^The Authorization header/],
      [
        `Bearer ${t.key} extra`,
        'bearer_scheme',
        "more than one word follows 'Bearer '",
        /^The Authorization/,
      ],
      [
        'Bearer pk_test_abcdefghijklmnopqrstuvwxyz',
        'key_prefix',
        'starts with none of them',
        /^An API key starts with sk_sandbox_, sk_pilot_, sk_live_;/,
      ],
      [
        'Bearer sk_sandbox_abc',
        'key_length',
        'the key sent has 3.',
        /^After 'sk_sandbox_' an API key has 16 to 128/,
      ],
      [`Bearer sk_live_${'a'.repeat(129)}`, 'key_length', 'the key sent has 129.', /^After 'sk_live_'/],
      [
        `Bearer sk_pilot_${'a'.repeat(20)}!`,
        'key_characters',
        'the key sent has others.',
        /^After 'sk_pilot_'/,
      ],
    ];
    for (const [authorization, code, why, opening] of malformed) {
      const response = await api(t, 'GET', '/v1/wallets', { key: null, headers: { authorization } });
      expect(response.statusCode, authorization).toBe(401);
      expect(response.data, authorization).toMatchObject({
        code: 'api_key_malformed',
        param: 'Authorization',
        errors: [{ param: 'Authorization', code, message: response.data.detail }],
      });
      expect(response.data.detail, authorization).toMatch(opening);
      expect(response.data.detail, authorization).toContain(why);
      // The key is never echoed back, in the problem or in the challenge.
      expect(JSON.stringify(response.data), authorization).not.toContain(t.key);
      expect(response.headers['www-authenticate'], authorization).toBe(
        `Bearer realm="mkoba", error="invalid_token", error_description="${response.data.detail}"`,
      );
    }
  });

  it('names the missing scope in a 403 challenge, and sends no challenge once the key is accepted', async () => {
    const forbidden = await api(t, 'POST', '/v1/customers', {
      key: readOnly,
      body: { type: 'individual', name: 'A' },
    });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.headers['www-authenticate']).toBe(
      'Bearer realm="mkoba", error="insufficient_scope", scope="write"',
    );
    const missing = await api(t, 'GET', '/v1/customers/cus_01m80v1f31hmw57sgkdkcnyxra');
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['www-authenticate']).toBeUndefined();
    const invalid = await api(t, 'POST', '/v1/customers', { body: { type: 'nobody' } });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.headers['www-authenticate']).toBeUndefined();
  });

  it('rejects the request before validating its body', async () => {
    const response = await api(t, 'POST', '/v1/wallets', { key: null, body: { nonsense: true } });
    expect(response.statusCode).toBe(401);
  });

  it('leaves health, readiness, docs and the OpenAPI document public', async () => {
    for (const url of ['/healthz', '/readyz', '/v1/openapi.json', '/metrics']) {
      const response = await api(t, 'GET', url, { key: null });
      expect(response.statusCode, url).toBe(200);
    }
  });
});

describe.each(BACKENDS)('a production deployment on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend, 'production');
  });
  afterAll(() => t.close());

  it('accepts live keys and refuses sandbox keys with api_key_environment_mismatch', async () => {
    expect(t.key).toMatch(/^sk_live_/);
    expect((await api(t, 'GET', '/v1/wallets')).statusCode).toBe(200);
    const sandbox = await api(t, 'GET', '/v1/wallets', { key: `sk_sandbox_${'A'.repeat(32)}` });
    expect(sandbox.statusCode).toBe(401);
    expect(sandbox.data.code).toBe('api_key_environment_mismatch');
    expect(sandbox.headers['www-authenticate']).toBe(
      'Bearer realm="mkoba", error="invalid_token", error_description="This is the production environment; the key belongs to sandbox."',
    );
  });
});

describe.each(BACKENDS)('API keys kept in process on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(() => t.close());

  it('a key revoked by another process stops working within API_KEY_CACHE_TTL_MS; in this one, at once', async () => {
    const realNow = t.deps.now;
    try {
      const elsewhere = await issueApiKey(t.deps, { organizationName: `Elsewhere ${backend}` });
      expect((await api(t, 'GET', '/v1/wallets', { key: elsewhere.key })).statusCode).toBe(200);
      // Revoked by another process: a statement on the shared database, which this process does not see.
      await t.db.store.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [elsewhere.record.id]);
      expect((await api(t, 'GET', '/v1/wallets', { key: elsewhere.key })).statusCode).toBe(200);
      const start = realNow().getTime();
      t.deps.now = () => new Date(start + API_KEY_CACHE_TTL_MS);
      const later = await api(t, 'GET', '/v1/wallets', { key: elsewhere.key });
      expect(later.statusCode).toBe(401);
      expect(later.data.code).toBe('api_key_revoked');

      const here = await issueApiKey(t.deps, { organizationName: `Here ${backend}` });
      expect((await api(t, 'GET', '/v1/wallets', { key: here.key })).statusCode).toBe(200);
      await revokeKey(t.deps, here.record.id);
      expect((await api(t, 'GET', '/v1/wallets', { key: here.key })).data.code).toBe('api_key_revoked');
    } finally {
      t.deps.now = realNow;
    }
  });

  it('an unknown key is not remembered: once issued, it works at once', async () => {
    const unknown = `sk_sandbox_${'Q'.repeat(32)}`;
    expect((await api(t, 'GET', '/v1/wallets', { key: unknown })).data.code).toBe('invalid_api_key');
    const created = await issueApiKey(t.deps, { organizationName: `Later ${backend}`, key: unknown });
    expect(created.key).toBe(unknown);
    expect((await api(t, 'GET', '/v1/wallets', { key: unknown })).statusCode).toBe(200);
  });
});
