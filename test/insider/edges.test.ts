/**
 * An insider's smaller edges, replayed through the real HTTP layer and store: rail partner base URLs that
 * point the service (and the partner's credentials) at loopback, cloud metadata or a private network; a
 * partner adapter steered there after its URL was accepted; /metrics open to anyone with every
 * organization's ids; write routes that took unknown fields. Each holds now.
 */
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.ts';
import { createServiceMetrics } from '../../src/metrics.ts';
import { PARTNER_RAIL_FACTORIES } from '../../src/modules/railPartners/partners/factories.ts';
import { BlockedAddressError, guardedFetch, guardedLookup } from '../../src/outbound/guard.ts';
import { DARAJA_SIMULATOR_DEFAULT_CREDENTIALS } from '../../src/simulators/mpesaDaraja/index.ts';
import { api, BACKENDS, startTestApp, type TestApp } from '../support/harness.ts';
import { newOrganization } from '../support/organizations.ts';

const METRICS_TOKEN = 'm'.repeat(40);

function darajaBody(baseUrl: string) {
  return {
    partner: 'mpesa_daraja',
    settings: {
      base_url: baseUrl,
      short_code: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.shortCode,
      initiator_name: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.initiatorName,
    },
    credentials: {
      consumer_key: 'insider-key',
      consumer_secret: 'insider-secret',
      security_credential: 'c',
      passkey: 'p',
    },
  };
}

/** A server on this machine that records what reaches it (a stand-in for 169.254.169.254 and friends). */
async function listener(): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server = http.createServer((request, response) => {
    hits.push(`${request.method} ${request.url} ${request.headers.authorization ?? ''}`);
    response.writeHead(500).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const REFUSED_EVERYWHERE = [
  'https://169.254.169.254/latest/meta-data',
  'https://10.0.0.7',
  'https://[fd00::1]',
  'http://partner.example.com',
  'https://192.168.1.20:8443',
];
const REFUSED_OUTSIDE_THE_SANDBOX = ['http://127.0.0.1:9', 'https://[::1]', 'http://localhost:9'];

describe.each(BACKENDS)('rail partner base URLs go through the outbound guard (%s)', (backend) => {
  let sandbox: TestApp;
  let production: TestApp;
  beforeAll(async () => {
    sandbox = await startTestApp(backend, 'sandbox');
    production = await startTestApp(backend, 'production');
  });
  afterAll(async () => {
    await sandbox?.close();
    await production?.close();
  });

  async function configure(t: TestApp, baseUrl: string) {
    const org = await newOrganization(t);
    return api(t, 'POST', '/v1/rail-partners', { key: org.key, body: darajaBody(baseUrl) });
  }

  function expectRefused(response: Awaited<ReturnType<typeof configure>>, url: string) {
    expect(response.statusCode, `${url}: ${response.body}`).toBe(400);
    expect(response.data).toMatchObject({
      code: 'validation_error',
      param: 'settings.base_url',
      errors: [{ param: 'settings.base_url', code: 'invalid_url' }],
    });
  }

  it('production refuses loopback, metadata, private and plain-HTTP addresses', async () => {
    for (const url of [...REFUSED_EVERYWHERE, ...REFUSED_OUTSIDE_THE_SANDBOX]) {
      expectRefused(await configure(production, url), url);
    }
  });

  it('the sandbox allows its own machine (its simulators) and nothing else that is not public', async () => {
    for (const url of REFUSED_EVERYWHERE) expectRefused(await configure(sandbox, url), url);
    const local = await configure(sandbox, 'http://127.0.0.1:9');
    expect(local.statusCode, local.body).toBe(201);
  });

  it('a public-looking name that resolves to a private address is refused when configured', async () => {
    const resolve = production.deps.resolveHost;
    production.deps.resolveHost = async (host) =>
      host === 'partner.example.com' ? ['93.184.216.34', '10.1.2.3'] : (resolve?.(host) ?? []);
    try {
      const refused = await configure(production, 'https://partner.example.com');
      expectRefused(refused, 'https://partner.example.com');
      expect(refused.data.detail).toContain('10.1.2.3');
    } finally {
      production.deps.resolveHost = resolve;
    }
  });

  it('an update is held to the same rule', async () => {
    const org = await newOrganization(sandbox);
    const created = await api(sandbox, 'POST', '/v1/rail-partners', {
      key: org.key,
      body: darajaBody('http://127.0.0.1:9'),
    });
    expect(created.statusCode, created.body).toBe(201);
    const moved = await api(sandbox, 'PATCH', `/v1/rail-partners/${created.data.id}`, {
      key: org.key,
      body: { settings: { base_url: 'https://169.254.169.254' } },
    });
    expectRefused(moved, 'https://169.254.169.254');
  });
});

describe('the partner adapters call out through the guard, checked at connect time', () => {
  const collection = {
    idempotencyReference: 'col_00000000000000000000000000',
    amountMinor: 100n,
    currency: 'KES' as const,
    payerPhone: '+254700000000',
    reference: 'r',
    description: 'd',
  };

  it('outside the sandbox, an adapter whose stored base URL is loopback never sends the credentials', async () => {
    const target = await listener();
    try {
      const adapter = (addressPolicy: 'public_only' | 'allow_loopback') =>
        PARTNER_RAIL_FACTORIES.mpesa_daraja(
          { ...darajaBody(target.url), addressPolicy },
          { baseUrl: 'https://mkoba.example.com/v1/rails/mobile_money/callbacks/x' },
        );
      await expect(adapter('public_only').collect(collection, new Date())).rejects.toThrow(
        /127\.0\.0\.1|must be HTTPS/,
      );
      expect(target.hits).toEqual([]);
      // The same adapter under the sandbox's rule reaches this machine: the refusal above is the guard's.
      await adapter('allow_loopback')
        .collect(collection, new Date())
        .catch(() => undefined);
      expect(target.hits.length).toBeGreaterThan(0);
      expect(target.hits[0]).toContain('Basic');
    } finally {
      await target.close();
    }
  });

  it('a name is checked when its connection opens (DNS rebinding cannot steer a call)', async () => {
    const lookup = guardedLookup('public_only');
    if (!lookup) throw new Error('public_only has a resolver');
    const error = await new Promise<unknown>((resolve) =>
      lookup('localhost', {}, (failure) => resolve(failure)),
    );
    expect(error).toBeInstanceOf(BlockedAddressError);
    const loopback = guardedLookup('allow_loopback');
    const address = await new Promise<string>((resolve, reject) =>
      loopback?.('localhost', {}, (failure, found) => (failure ? reject(failure) : resolve(String(found)))),
    );
    expect(['127.0.0.1', '::1']).toContain(address);
  });

  it('a literal forbidden address is refused before connecting, whatever the URL form allows', async () => {
    const target = await listener();
    try {
      const sandboxFetch = guardedFetch('allow_loopback');
      await expect(sandboxFetch('https://169.254.169.254/latest/meta-data')).rejects.toBeInstanceOf(
        BlockedAddressError,
      );
      await expect(sandboxFetch('http://10.0.0.1/')).rejects.toBeInstanceOf(BlockedAddressError);
      const answered = await sandboxFetch(`${target.url}/ping`);
      expect(answered.status).toBe(500);
      await expect(guardedFetch('public_only')(`${target.url}/ping`)).rejects.toBeInstanceOf(
        BlockedAddressError,
      );
      expect(target.hits).toHaveLength(1);
    } finally {
      await target.close();
    }
  });
});

describe('every outbound call of the server goes through the guard', () => {
  it('no file of the server calls fetch or http(s).request without the guard', () => {
    const root = fileURLToPath(new URL('../../src/', import.meta.url));
    // The CLI runs on an operator's machine against a URL they give; the simulators are the sandbox's own.
    const exempt = ['outbound/', 'cli/', 'simulators/'];
    const offenders: string[] = [];
    for (const file of readdirSync(root, { recursive: true }) as string[]) {
      if (!file.endsWith('.ts') || exempt.some((dir) => file.startsWith(dir))) continue;
      const text = readFileSync(`${root}${file}`, 'utf8');
      const calls = /(?<![\w.])fetch\(|\bhttps?\.(request|get)\(|from 'undici'/.test(text);
      if (calls && !text.includes("outbound/guard.ts'")) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });
});

describe.each(BACKENDS)('smaller edges (%s)', (backend) => {
  let sandbox: TestApp;
  let production: TestApp;
  beforeAll(async () => {
    sandbox = await startTestApp(backend, 'sandbox');
    production = await startTestApp(backend, 'production');
  });
  afterAll(async () => {
    await sandbox?.close();
    await production?.close();
  });

  it('/metrics is not served in production without MKOBA_METRICS_TOKEN', async () => {
    const open = await api(production, 'GET', '/metrics', { key: null });
    expect(open.statusCode).toBe(404);
  });

  it('/metrics with a token answers only a scrape bearing it (production and sandbox alike)', async () => {
    for (const t of [production, sandbox]) {
      const app = await buildApp({ deps: t.deps, metricsToken: METRICS_TOKEN });
      try {
        const scrape = (authorization?: string) =>
          app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
        const none = await scrape();
        expect(none.statusCode).toBe(401);
        expect(JSON.parse(none.body)).toMatchObject({
          code: 'metrics_token_invalid',
          param: 'Authorization',
        });
        expect((await scrape(`Bearer ${'n'.repeat(40)}`)).statusCode).toBe(401);
        expect((await scrape(`Bearer ${METRICS_TOKEN}x`)).statusCode).toBe(401);
        expect((await scrape(`Bearer ${t.key}`)).statusCode).toBe(401);
        const ok = await scrape(`Bearer ${METRICS_TOKEN}`);
        expect(ok.statusCode).toBe(200);
        expect(ok.body).toContain('mkoba_http_requests_total');
      } finally {
        await app.close();
      }
    }
  });

  it('the sandbox serves /metrics openly by default, for local development', async () => {
    expect((await api(sandbox, 'GET', '/metrics', { key: null })).statusCode).toBe(200);
  });

  it('metrics carry no rail partner ids by default (opt-in keeps them)', async () => {
    const plain = createServiceMetrics(sandbox.db.store);
    plain.setRailPartnerPaused('mpesa_daraja', 'rp_01hzzzzzzzzzzzzzzzzzzzzzzz', true);
    plain.setRailPartnerPaused('mpesa_daraja', 'rp_01hyyyyyyyyyyyyyyyyyyyyyyy', true);
    const text = await plain.registry.metrics();
    expect(text).toContain('mkoba_rail_partner_paused{partner="mpesa_daraja"} 2');
    expect(text).not.toContain('rp_01h');
    const labelled = createServiceMetrics(sandbox.db.store, undefined, { resourceLabels: true });
    labelled.setRailPartnerPaused('mpesa_daraja', 'rp_01hzzzzzzzzzzzzzzzzzzzzzzz', true);
    expect(await labelled.registry.metrics()).toContain('rail_partner="rp_01hzzzzzzzzzzzzzzzzzzzzzzz"');
  });

  it('virtual-account and account-details refuse unknown body fields, naming them', async () => {
    const owner = await api(sandbox, 'POST', '/v1/customers', { body: { type: 'individual', name: 'Asha' } });
    const wallet = await api(sandbox, 'POST', '/v1/wallets', {
      body: { owner: owner.data.id, currency: 'KES' },
    });
    expect(wallet.statusCode, wallet.body).toBe(201);
    for (const path of ['virtual-account', 'account-details']) {
      const refused = await api(sandbox, 'POST', `/v1/wallets/${wallet.data.id}/${path}`, {
        body: { bank_code: '01', account_number: '1234' },
      });
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.data).toMatchObject({
        code: 'validation_error',
        param: 'bank_code',
        errors: [{ param: 'bank_code', code: 'unknown_field' }],
      });
    }
  });
});
