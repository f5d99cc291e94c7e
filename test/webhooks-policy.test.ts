/**
 * Webhook policy: which URLs may subscribe (form, and where the host resolves, at subscription time and
 * again at connect time: the same rules in production and in the sandbox, unless the sandbox opts in to
 * private addresses for local development), the retry schedule with its jitter and Retry-After bounds, and
 * the schedule's configuration.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/variables.ts';
import { defaultWebhookSettings } from '../src/config/webhooks.ts';
import { loadConfig } from '../src/config.ts';
import {
  checkResolvedAddresses,
  checkWebhookUrl,
  isReservedAddress,
  nextAttempt,
  parseIpv6,
  parseRetrySchedule,
  WEBHOOK_RETRY_AFTER_SECONDS_MAX,
  WEBHOOK_RETRY_AFTER_SECONDS_MIN,
  WEBHOOK_RETRY_DELAY_SECONDS_MAX,
  WEBHOOK_RETRY_JITTER_FRACTION,
  WEBHOOK_RETRY_SCHEDULE_SECONDS_DEFAULT,
} from '../src/domain/webhooks.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { findSubscription, saveSubscription } from '../src/modules/webhooks/repository/subscriptions.ts';
import { emitTestEvent } from '../src/modules/webhooks/useCases/testEvents.ts';
import { dispatchWebhooksOnce } from '../src/modules/webhooks/workers/dispatcher.ts';
import { httpWebhookSender } from '../src/modules/webhooks/workers/httpSender.ts';
import {
  api,
  BACKENDS,
  ENVIRONMENTS_ON_BACKENDS,
  setWebhookSubscriptions,
  startTestApp,
  type TestApp,
} from './support/harness.ts';
import { type Receiver, startReceiver } from './support/receiver.ts';

describe('isReservedAddress', () => {
  const reserved = [
    // IPv4
    '0.0.0.0',
    '0.1.2.3',
    '10.0.0.1',
    '10.255.255.255',
    '100.64.0.1',
    '100.127.255.254',
    '127.0.0.1',
    '127.255.0.1',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.0.0.8',
    '192.0.2.1',
    '192.88.99.1',
    '192.168.1.1',
    '198.18.0.1',
    '198.19.255.255',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    // IPv6
    '::',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '[::ffff:10.0.0.1]',
    '::ffff:169.254.169.254',
    '::ffff:0:127.0.0.1',
    '::127.0.0.1',
    'fc00::1',
    'fd12:3456:789a::1',
    'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    'fe80::1',
    'fe80::1%eth0',
    'febf::1',
    'fec0::1',
    'ff02::1',
    '64:ff9b::a00:1',
    '64:ff9b::127.0.0.1',
    '64:ff9b:1::1',
    '100::1',
    '2001::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001:2::1',
    '2001:10::1',
    '2001:db8::1',
    '2002:7f00:1::1',
    '2002:c0a8:101::1',
    '3fff::1',
    // Dotted forms that are not canonical are refused rather than guessed at.
    '010.0.0.1',
    '127.1',
  ];
  const publicAddresses = [
    '1.1.1.1',
    '8.8.8.8',
    '9.255.255.255',
    '11.0.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '126.255.255.255',
    '128.0.0.1',
    '169.253.1.1',
    '172.15.255.255',
    '172.32.0.1',
    '192.0.1.1',
    '192.0.78.9',
    '192.169.0.1',
    '198.17.1.1',
    '198.20.0.1',
    '223.255.255.254',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '[2a00:1450:4001:82a::200e]',
    '2001:200::1',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    // Host names are not addresses.
    'example.com',
    'a.b',
    'fc.example',
  ];
  it.each(reserved)('%s is reserved', (address) => {
    expect(isReservedAddress(address)).toBe(true);
  });
  it.each(publicAddresses)('%s is not reserved', (address) => {
    expect(isReservedAddress(address)).toBe(false);
  });
  it('parses IPv6 forms into eight groups, refusing malformed ones', () => {
    expect(parseIpv6('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIpv6('1::')).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIpv6('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
    for (const bad of [
      '1:::2',
      '1::2::3',
      ':1',
      '1:2:3:4:5:6:7:8:9',
      '12345::',
      'g::1',
      '::1.2.3',
      '1.2.3.4',
    ]) {
      expect(parseIpv6(bad), bad).toBeUndefined();
    }
  });
});

describe('checkWebhookUrl', () => {
  it.each([
    'https://hooks.example.com/mkoba',
    'https://hooks.example.com:8443/x?y=1',
    'https://1.1.1.1/hooks',
    'https://[2606:4700:4700::1111]/hooks',
  ])('public_only accepts %s', (url) => {
    expect(checkWebhookUrl(url, 'public_only')).toEqual({ ok: true });
  });
  it.each([
    'http://hooks.example.com/',
    'http://1.1.1.1/',
    'ftp://hooks.example.com/',
    'https://10.0.0.1/',
    'https://127.0.0.1/',
    'https://127.0.0.1:8443/',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[fd00::1]/',
    'https://[fe80::1]/',
    'https://169.254.169.254/latest/meta-data/',
    'https://0x7f000001/',
    'https://2130706433/',
    'https://0.0.0.0/',
    'https://localhost/',
    'https://localhost./',
    'https://LOCALHOST/',
    'https://api.localhost/',
    'https://printer.local/',
    'https://metadata.google.internal/',
    'https://router.home.arpa/',
    'https://intranet/',
    'https://user:pass@hooks.example.com/',
    'https://hooks.example.com/#frag',
    'not a url',
  ])('public_only refuses %s', (url) => {
    expect(checkWebhookUrl(url, 'public_only').ok).toBe(false);
  });
  it.each([
    'http://127.0.0.1:4000/hooks',
    'http://127.0.0.2/hooks',
    'http://localhost:3000/x',
    'http://api.localhost/x',
    'http://[::1]:8080/',
    'http://10.0.0.1/',
    'http://receiver:3000/hooks',
    'http://host.docker.internal/hooks',
    'https://hooks.example.com/',
    'https://127.0.0.1/',
    'https://169.254.169.254/latest/meta-data/',
  ])('allow_private (the sandbox opted in for local development) accepts %s', (url) => {
    expect(checkWebhookUrl(url, 'allow_private')).toEqual({ ok: true });
  });
  it.each([
    'http://hooks.example.com/',
    'http://1.1.1.1/',
    'http://127.evil.example/',
    'http://localhost.evil.example/',
    'ftp://127.0.0.1/',
    'https://user:pass@127.0.0.1/',
  ])('allow_private still refuses %s', (url) => {
    expect(checkWebhookUrl(url, 'allow_private').ok).toBe(false);
  });
  it('judges what a host name resolved to: every address must be public', () => {
    expect(checkResolvedAddresses('h.example', ['1.1.1.1', '2606:4700::1'])).toEqual({ ok: true });
    expect(checkResolvedAddresses('h.example', ['1.1.1.1', '10.0.0.1'])).toMatchObject({ ok: false });
    expect(checkResolvedAddresses('h.example', [])).toMatchObject({ ok: false });
  });
});

describe('retry schedule', () => {
  const now = new Date('2025-01-01T00:00:00Z');
  const delaySeconds = (step: ReturnType<typeof nextAttempt>) => {
    if (step.kind !== 'retry') throw new Error(`expected a retry, got ${step.kind}`);
    return (step.at.getTime() - now.getTime()) / 1000;
  };

  it('spreads each delay within the jitter fraction, reaching both ends', () => {
    const schedule = [10, 300, 1_800];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: schedule.length }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, random) => {
          const base = schedule[attempt - 1] as number;
          const delay = delaySeconds(nextAttempt(attempt, { kind: 'failure' }, schedule, now, random));
          expect(delay).toBeGreaterThanOrEqual(base * (1 - WEBHOOK_RETRY_JITTER_FRACTION) - 0.001);
          expect(delay).toBeLessThanOrEqual(base * (1 + WEBHOOK_RETRY_JITTER_FRACTION) + 0.001);
        },
      ),
    );
    expect(delaySeconds(nextAttempt(1, { kind: 'failure' }, [100], now, 0))).toBe(80);
    expect(delaySeconds(nextAttempt(1, { kind: 'failure' }, [100], now, 0.5))).toBe(100);
    expect(delaySeconds(nextAttempt(1, { kind: 'failure' }, [100], now, 0.999_999))).toBeCloseTo(120, 2);
  });

  it('ends on success, and is exhausted after the last scheduled retry', () => {
    expect(nextAttempt(1, { kind: 'success' }, [5], now, 0.5)).toEqual({ kind: 'done' });
    expect(nextAttempt(1, { kind: 'failure' }, [5], now, 0.5).kind).toBe('retry');
    expect(nextAttempt(2, { kind: 'failure' }, [5], now, 0.5)).toEqual({ kind: 'exhausted' });
    expect(nextAttempt(1, { kind: 'failure' }, [], now, 0.5)).toEqual({ kind: 'exhausted' });
  });

  it('honours Retry-After within [1 s, 1 h], never sooner than the schedule', () => {
    const waitAfter = (retryAfterSeconds: number, schedule = [0]) =>
      delaySeconds(nextAttempt(1, { kind: 'failure', retryAfterSeconds }, schedule, now, 0.5));
    expect(waitAfter(0)).toBe(WEBHOOK_RETRY_AFTER_SECONDS_MIN);
    expect(waitAfter(120)).toBe(120);
    expect(waitAfter(10_000_000)).toBe(WEBHOOK_RETRY_AFTER_SECONDS_MAX);
    expect(waitAfter(5, [300])).toBe(300);
    expect(waitAfter(10_000_000, [7_200])).toBe(7_200);
  });

  it('lasts about three days by default', () => {
    const total = WEBHOOK_RETRY_SCHEDULE_SECONDS_DEFAULT.reduce((a, b) => a + b, 0);
    expect(total / 86_400).toBeGreaterThan(2.5);
    expect(total / 86_400).toBeLessThan(3.5);
  });

  it('parses MKOBA_WEBHOOK_RETRY_SCHEDULE, refusing anything else by name', () => {
    expect(parseRetrySchedule('5,300,1800')).toEqual([5, 300, 1_800]);
    expect(parseRetrySchedule(' 0 , 0.5,2 ')).toEqual([0, 0.5, 2]);
    expect(loadConfig({ MKOBA_WEBHOOK_RETRY_SCHEDULE: '1,2,3' }).webhooks.retryScheduleSeconds).toEqual([
      1, 2, 3,
    ]);
    expect(loadConfig({}).webhooks.retryScheduleSeconds).toEqual(WEBHOOK_RETRY_SCHEDULE_SECONDS_DEFAULT);
    expect(loadConfig({ MKOBA_WEBHOOK_RETRY_SCHEDULE: '  ' }).webhooks.retryScheduleSeconds).toEqual(
      WEBHOOK_RETRY_SCHEDULE_SECONDS_DEFAULT,
    );
    for (const bad of [
      '5,,10',
      'abc',
      '-1',
      '1e3',
      '5;10',
      '5,',
      String(WEBHOOK_RETRY_DELAY_SECONDS_MAX + 1),
      Array(101).fill('1').join(','),
    ]) {
      expect(() => loadConfig({ MKOBA_WEBHOOK_RETRY_SCHEDULE: bad }), bad).toThrow(ConfigError);
      try {
        loadConfig({ MKOBA_WEBHOOK_RETRY_SCHEDULE: bad });
      } catch (error) {
        expect((error as ConfigError).variable).toBe('MKOBA_WEBHOOK_RETRY_SCHEDULE');
      }
    }
  });

  it('blocks reserved addresses at connect time in production and, by default, in the sandbox', () => {
    expect(defaultWebhookSettings('production').blockReservedAddresses).toBe(true);
    expect(defaultWebhookSettings('sandbox').blockReservedAddresses).toBe(true);
    expect(defaultWebhookSettings('production').timeoutMs).toBe(10_000);
    expect(loadConfig({}).webhooks.blockReservedAddresses).toBe(true);
    expect(loadConfig({ MKOBA_WEBHOOK_ALLOW_PRIVATE: '0' }).webhooks.blockReservedAddresses).toBe(true);
  });

  it('MKOBA_WEBHOOK_ALLOW_PRIVATE=1 lifts the block in the sandbox only; anything else is refused by name', () => {
    expect(loadConfig({ MKOBA_WEBHOOK_ALLOW_PRIVATE: '1' }).webhooks.blockReservedAddresses).toBe(false);
    const production = { MKOBA_ENV: 'production', DATABASE_URL: 'postgres://db/mkoba' };
    for (const env of [
      { ...production, MKOBA_WEBHOOK_ALLOW_PRIVATE: '1' },
      { MKOBA_WEBHOOK_ALLOW_PRIVATE: 'yes' },
    ]) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      try {
        loadConfig(env);
      } catch (error) {
        expect((error as ConfigError).variable).toBe('MKOBA_WEBHOOK_ALLOW_PRIVATE');
      }
    }
  });
});

describe.each(ENVIRONMENTS_ON_BACKENDS)('production address rules in %s on %s', (environment, backend) => {
  let t: TestApp;
  let receiver: Receiver;
  /** Host names the test controls; anything else does not resolve. */
  const dns = new Map<string, string[]>();
  const lookups: string[] = [];
  beforeAll(async () => {
    t = await startTestApp(backend, environment);
    // Production organizations subscribe once the operator enables it.
    await setWebhookSubscriptions(t, t.organizationId, true);
    t.deps.resolveHost = async (hostname) => {
      lookups.push(hostname);
      const addresses = dns.get(hostname);
      if (!addresses)
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return addresses;
    };
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });
  beforeEach(() => {
    dns.clear();
    lookups.length = 0;
    receiver.received.length = 0;
  });

  const subscribe = (url: string) =>
    api(t, 'POST', '/v1/webhook-subscriptions', { body: { url, events: ['transfer.created'] } });

  it.each([
    'http://hooks.example.com/',
    'http://127.0.0.1:4000/hooks',
    'https://10.0.0.1/',
    'https://127.0.0.1/',
    'https://127.0.0.1:6379/',
    'https://[::1]/',
    'https://169.254.169.254/',
    'https://169.254.169.254/latest/meta-data/',
    'https://localhost/',
    'https://localhost./',
  ])('refuses %s with a 400 naming url', async (url) => {
    const response = await subscribe(url);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.data).toMatchObject({ code: 'validation_error', param: 'url' });
    // Only the sandbox has an opt-in to point at, and names it for what the opt-in would accept.
    const hinted = environment === 'sandbox' && url !== 'http://hooks.example.com/';
    expect(response.data.detail.includes('MKOBA_WEBHOOK_ALLOW_PRIVATE=1'), response.data.detail).toBe(hinted);
  });

  it('refuses a host name that resolves to a loopback or private address, accepting a public one', async () => {
    dns.set('sneaky.example.com', ['127.0.0.1']);
    dns.set('mixed.example.com', ['93.184.215.14', '10.1.2.3']);
    dns.set('v6.example.com', ['::1']);
    dns.set('hooks.example.com', ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
    for (const host of ['sneaky.example.com', 'mixed.example.com', 'v6.example.com']) {
      const response = await subscribe(`https://${host}/hooks`);
      expect(response.statusCode, host).toBe(400);
      expect(response.data.param).toBe('url');
      expect(response.data.detail).toContain(host);
    }
    const fine = await subscribe('https://hooks.example.com/hooks');
    expect(fine.statusCode, fine.body).toBe(201);
    expect(lookups).toEqual([
      'sneaky.example.com',
      'mixed.example.com',
      'v6.example.com',
      'hooks.example.com',
    ]);

    // A change of URL is checked the same way.
    const patched = await api(t, 'PATCH', `/v1/webhook-subscriptions/${fine.data.id}`, {
      body: { url: 'https://sneaky.example.com/hooks' },
    });
    expect(patched.statusCode).toBe(400);
    expect(patched.data.param).toBe('url');
    expect((await api(t, 'GET', `/v1/webhook-subscriptions/${fine.data.id}`)).data.url).toBe(
      'https://hooks.example.com/hooks',
    );
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${fine.data.id}`);
  });

  it('refuses a host name that does not resolve, naming url', async () => {
    const response = await subscribe('https://nowhere.example.com/hooks');
    expect(response.statusCode).toBe(400);
    expect(response.data).toMatchObject({ code: 'validation_error', param: 'url' });
    expect(response.data.detail).toContain('does not resolve');
  });

  it('accepts a public literal address without resolving it', async () => {
    const response = await subscribe('https://93.184.215.14/hooks');
    expect(response.statusCode, response.body).toBe(201);
    expect(lookups).toEqual([]);
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${response.data.id}`);
  });

  it('the production sender refuses, at connect time, a name or literal that is now loopback', async () => {
    const port = new URL(receiver.url).port;
    const blocking = httpWebhookSender({ timeoutMs: 5_000, blockReservedAddresses: true });
    for (const url of [`http://localhost:${port}/hooks`, `http://127.0.0.1:${port}/hooks`]) {
      const result = await blocking(url, '{}', { 'content-type': 'application/json' });
      expect(result, url).toMatchObject({ kind: 'error', errorClass: 'blocked_address' });
    }
    expect(receiver.received).toHaveLength(0);
    // The same request without the block reaches the receiver, so the refusal above is the block's doing.
    const open = httpWebhookSender({ timeoutMs: 5_000, blockReservedAddresses: false });
    expect(await open(`http://localhost:${port}/hooks`, '{}', {})).toMatchObject({
      kind: 'response',
      statusCode: 200,
    });
    expect(receiver.received).toHaveLength(1);
  });

  it('a subscription whose host later points at loopback gets blocked_address attempts, never a request', async () => {
    dns.set('hooks.example.com', ['93.184.215.14']);
    const issued = await issueApiKey(t.deps, { organizationName: `Rebind ${backend}` });
    await setWebhookSubscriptions(t, issued.record.organizationId, true);
    const created = await api(t, 'POST', '/v1/webhook-subscriptions', {
      key: issued.key,
      body: { url: 'https://hooks.example.com/hooks', events: ['*'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    // DNS changes after subscribing: the row now points at a name that resolves to 127.0.0.1.
    const organizationId = issued.record.organizationId;
    const row = await findSubscription(t.deps.store, organizationId, created.data.id);
    if (!row) throw new Error('subscription row missing');
    await saveSubscription(t.deps.store, {
      ...row,
      url: `http://localhost:${new URL(receiver.url).port}/hooks`,
    });
    const event = await t.deps.store.transaction((tx) =>
      emitTestEvent(tx, t.deps, organizationId, 'transfer.created'),
    );
    const settings = { ...defaultWebhookSettings(environment), retryScheduleSeconds: [3_600] };
    const attempted = await dispatchWebhooksOnce(t.deps, {
      settings,
      sender: httpWebhookSender({
        timeoutMs: 5_000,
        blockReservedAddresses: settings.blockReservedAddresses,
      }),
      random: () => 0.5,
    });
    expect(attempted).toBe(1);
    expect(receiver.received).toHaveLength(0);
    const deliveries = await api(t, 'GET', `/v1/events/${event.id}/deliveries`, { key: issued.key });
    expect(deliveries.data.data).toHaveLength(1);
    expect(deliveries.data.data[0]).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_status_code: null,
    });
    expect(deliveries.data.data[0].attempt_log).toEqual([
      expect.objectContaining({ attempt: 1, status_code: null, error_class: 'blocked_address' }),
    ]);
  });
});

describe.each(BACKENDS)('the sandbox with MKOBA_WEBHOOK_ALLOW_PRIVATE=1 on %s', (backend) => {
  let t: TestApp;
  let production: TestApp;
  const lookups: string[] = [];
  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
    t.deps.resolveHost = async (hostname) => {
      lookups.push(hostname);
      return ['10.0.0.1'];
    };
    // Production never takes the opt-in, even handed it directly.
    production = await startTestApp(backend, 'production', { allowPrivateWebhookUrls: true });
    await setWebhookSubscriptions(production, production.organizationId, true);
  });
  afterAll(async () => {
    await t.close();
    await production.close();
  });

  const subscribe = (app: TestApp, url: string) =>
    api(app, 'POST', '/v1/webhook-subscriptions', { body: { url, events: ['transfer.created'] } });

  it.each([
    'http://127.0.0.1:4000/hooks',
    'http://localhost:3000/hooks',
    'http://10.0.0.1/hooks',
    'https://169.254.169.254/latest/meta-data/',
    'https://hooks.example.com/hooks',
  ])('accepts %s without resolving it', async (url) => {
    const response = await subscribe(t, url);
    expect(response.statusCode, response.body).toBe(201);
    expect(lookups).toEqual([]);
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${response.data.id}`);
  });

  it('still refuses plain HTTP to a public host', async () => {
    const response = await subscribe(t, 'http://hooks.example.com/hooks');
    expect(response.statusCode).toBe(400);
    expect(response.data).toMatchObject({ code: 'validation_error', param: 'url' });
  });

  it.each(['http://127.0.0.1:4000/hooks', 'https://169.254.169.254/'])(
    'is ignored in production: %s is refused',
    async (url) => {
      const response = await subscribe(production, url);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.data.param).toBe('url');
    },
  );
});
