/**
 * What is checked before a subscription is written: the organization may subscribe (the operator's switch,
 * on by default in the sandbox and off in production), and the URL's host resolves to public addresses.
 * Those checks run before the write's transaction opens and are never recorded against the
 * Idempotency-Key, so a transient DNS failure is not replayed for a day; a retry of a recorded outcome is
 * answered first, without checking again.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import {
  api,
  BACKENDS,
  ENVIRONMENTS_ON_BACKENDS,
  setWebhookSubscriptions,
  startTestApp,
  type TestApp,
} from './support/harness.ts';

describe.each(ENVIRONMENTS_ON_BACKENDS)('subscription URL checks in %s on %s', (environment, backend) => {
  let t: TestApp;
  /** Host names the test controls; a name mapped to an Error fails with it. */
  const dns = new Map<string, string[] | Error>();
  let onLookup: () => Promise<void> = async () => {};
  let openTransactions = 0;
  beforeAll(async () => {
    t = await startTestApp(backend, environment);
    await setWebhookSubscriptions(t, t.organizationId, true);
    // Counts the transactions open through the store: the only way the app opens one.
    const transaction = t.deps.store.transaction.bind(t.deps.store);
    t.deps.store.transaction = async (fn) => {
      openTransactions++;
      try {
        return await transaction(fn);
      } finally {
        openTransactions--;
      }
    };
    t.deps.resolveHost = async (hostname) => {
      await onLookup();
      const answer = dns.get(hostname);
      if (answer instanceof Error) throw answer;
      if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return answer;
    };
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => {
    dns.clear();
    onLookup = async () => {};
  });

  const create = (url: string, key: string) =>
    api(t, 'POST', '/v1/webhook-subscriptions', {
      headers: { 'idempotency-key': key },
      body: { url, events: ['transfer.created'] },
    });

  it('a DNS failure is not recorded: the same key succeeds once the name resolves', async () => {
    const key = `dns-${environment}-${backend}`;
    dns.set('flaky.example.com', Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' }));
    const failed = await create('https://flaky.example.com/hooks', key);
    expect(failed.statusCode, failed.body).toBe(400);
    expect(failed.data).toMatchObject({ code: 'validation_error', param: 'url' });
    expect(failed.data.detail).toContain('EAI_AGAIN');

    dns.set('flaky.example.com', ['93.184.215.14']);
    const retried = await create('https://flaky.example.com/hooks', key);
    expect(retried.statusCode, retried.body).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();

    // Recorded now: a retry is answered from the record before anything is checked, even if DNS changed.
    dns.set('flaky.example.com', ['10.0.0.1']);
    const replayed = await create('https://flaky.example.com/hooks', key);
    expect(replayed.statusCode).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.data).toEqual(retried.data);
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${retried.data.id}`);
  });

  it('resolves with no transaction open', async () => {
    const openAtLookup: number[] = [];
    onLookup = async () => {
      openAtLookup.push(openTransactions);
    };
    dns.set('hooks.example.com', ['93.184.215.14']);
    const key = `tx-${environment}-${backend}`;
    const created = await create('https://hooks.example.com/hooks', key);
    expect(created.statusCode, created.body).toBe(201);
    const changed = await api(t, 'PATCH', `/v1/webhook-subscriptions/${created.data.id}`, {
      headers: { 'idempotency-key': `${key}-patch` },
      body: { url: 'https://hooks.example.com/other' },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(openAtLookup).toEqual([0, 0]);
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${created.data.id}`);
  });

  it('a URL change that fails DNS is not recorded either', async () => {
    dns.set('hooks.example.com', ['93.184.215.14']);
    const created = await create('https://hooks.example.com/hooks', `patch-base-${environment}-${backend}`);
    expect(created.statusCode, created.body).toBe(201);
    const key = `patch-dns-${environment}-${backend}`;
    const patch = () =>
      api(t, 'PATCH', `/v1/webhook-subscriptions/${created.data.id}`, {
        headers: { 'idempotency-key': key },
        body: { url: 'https://later.example.com/hooks' },
      });
    const failed = await patch();
    expect(failed.statusCode).toBe(400);
    dns.set('later.example.com', ['93.184.215.14']);
    const retried = await patch();
    expect(retried.statusCode, retried.body).toBe(200);
    expect(retried.data.url).toBe('https://later.example.com/hooks');
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${created.data.id}`);
  });
});

describe.each(BACKENDS)('the per-organization webhook switch on %s', (backend) => {
  let production: TestApp;
  let sandbox: TestApp;
  beforeAll(async () => {
    production = await startTestApp(backend, 'production');
    sandbox = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    await production.close();
    await sandbox.close();
  });

  // A public literal address: accepted without a DNS look-up.
  const body = { url: 'https://93.184.215.14/hooks', events: ['transfer.created'] };
  const create = (t: TestApp, key: string, idempotencyKey: string) =>
    api(t, 'POST', '/v1/webhook-subscriptions', {
      key,
      headers: { 'idempotency-key': idempotencyKey },
      body,
    });

  it('is off for a new production organization: 403 subscriptions_not_enabled, not recorded; on, it subscribes', async () => {
    const refused = await create(production, production.key, 'gate-1');
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.data).toMatchObject({ code: 'subscriptions_not_enabled', status: 403 });
    expect(refused.data.detail).toContain(production.organizationId);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);

    const result = await runAdminCommand(production.deps, {
      name: 'orgs.set-webhooks',
      organizationId: production.organizationId,
      enabled: true,
    });
    expect(result).toEqual({
      name: 'orgs.set-webhooks',
      found: true,
      organizationName: 'Production Org',
      enabled: true,
    });
    const created = await create(production, production.key, 'gate-1');
    expect(created.statusCode, created.body).toBe(201);
    expect(created.headers['idempotent-replayed']).toBeUndefined();

    // Off again: no new subscriptions; the existing one stays, and its retry still replays.
    await setWebhookSubscriptions(production, production.organizationId, false);
    expect((await create(production, production.key, 'gate-2')).statusCode).toBe(403);
    expect((await create(production, production.key, 'gate-1')).statusCode).toBe(201);
    const existing = await api(production, 'GET', `/v1/webhook-subscriptions/${created.data.id}`);
    expect(existing.statusCode).toBe(200);
    expect(existing.data.status).toBe('enabled');
  });

  it('is on for a new sandbox organization, and the operator can turn it off', async () => {
    const issued = await issueApiKey(sandbox.deps, { organizationName: `Switch ${backend}` });
    const created = await create(sandbox, issued.key, 'sandbox-1');
    expect(created.statusCode, created.body).toBe(201);
    await setWebhookSubscriptions(sandbox, issued.record.organizationId, false);
    const refused = await create(sandbox, issued.key, 'sandbox-2');
    expect(refused.statusCode).toBe(403);
    expect(refused.data.code).toBe('subscriptions_not_enabled');
    // Another organization is not affected.
    expect((await create(sandbox, sandbox.key, 'sandbox-3')).statusCode).toBe(201);
  });

  it('reports an unknown organization', async () => {
    expect(
      await runAdminCommand(sandbox.deps, {
        name: 'orgs.set-webhooks',
        organizationId: 'org_01nobody000000000000000000',
        enabled: true,
      }),
    ).toMatchObject({ found: false, organizationName: null });
  });
});
