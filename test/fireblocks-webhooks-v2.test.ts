/**
 * Fireblocks' webhooks v2 and transactions that change after COMPLETED, through the service's callback
 * route over real HTTP, with the Fireblocks simulator (a real server) signing its webhooks with a detached
 * JWS and publishing its JWKS. A configuration accepting v2 verifies each webhook against the JWKS (fetched
 * through the outbound guard, cached, refetched for a rotated key at most once an interval) before anything
 * is stored: a tampered body, a forged `kid`, `none` and HS256 are refused; a JWKS out of reach is a 503 and
 * polling recovers the payout; a replay changes nothing twice. A completed payout or deposit Fireblocks later
 * reports failed opens a reconciliation exception and moves no money.
 */
import { createHmac, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FireblocksConfig,
  fireblocksRequest,
} from '../src/modules/railPartners/partners/fireblocks/connection.ts';
import {
  FIREBLOCKS_JWKS_MAX_AGE_MS,
  FIREBLOCKS_JWKS_REFRESH_MIN_INTERVAL_MS,
  FireblocksJwksCache,
  verifyFireblocksWebhookJws,
} from '../src/modules/railPartners/partners/fireblocks/webhookJwks.ts';
import { runDepositWorkerOnce } from '../src/modules/stablecoins/workers.ts';
import { CallbackVerificationUnavailableError, MalformedCallbackError } from '../src/rails/partner.ts';
import {
  type FireblocksSimulator,
  type FireblocksWebhookDelivery,
  startFireblocksSimulator,
  webhookJws,
} from '../src/simulators/fireblocks/index.ts';
import { eventually } from './support/eventually.ts';
import { fireblocksPayouts, fundedTreasury, listeningSandboxApp } from './support/fireblocks.ts';
import { api, BACKENDS, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';

/** A key no JWKS publishes: a forger's. */
const FORGER_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const b64url = (value: object | string) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe.each(BACKENDS)('Fireblocks webhooks v2 on %s', (backend) => {
  let t: TestApp;
  let sim: FireblocksSimulator;
  let config: FireblocksConfig;
  let vaultAccountId: string;

  let payouts: ReturnType<typeof fireblocksPayouts>;

  beforeAll(async () => {
    t = await listeningSandboxApp(backend);
    sim = await startFireblocksSimulator({ stepMs: 5, webhookSignatures: 'v2' });
    ({ config, vaultAccountId } = await fundedTreasury(sim));
    payouts = fireblocksPayouts(t);
  });
  afterAll(async () => {
    await sim?.close();
    await t?.close();
  });

  /** A new organization whose Fireblocks accepts v2 only (or `signatures`), against the simulator's JWKS (or `jwksUrl`). */
  async function configured(jwksUrl = sim.jwksUrl, signatures = 'v2') {
    const org = await newOrganization(t);
    const created = await api(t, 'POST', '/v1/rail-partners', {
      key: org.key,
      body: {
        partner: 'fireblocks',
        settings: {
          base_url: sim.baseUrl,
          source_vault_account_id: vaultAccountId,
          webhook_signatures: signatures,
          webhook_jwks_url: jwksUrl,
          ...(signatures === 'v2' ? {} : { webhook_public_key: sim.webhookPublicKey }),
        },
        credentials: { api_key: sim.credentials.apiKey, private_key: sim.credentials.secretKey },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const callbackUrl = `${created.data.callback_url}/webhook`;
    sim.setWebhookUrl(callbackUrl);
    const wallet = await fundedWallet(t, '500.000000', 'USDC', org.key);
    return { key: org.key, wallet, callbackUrl };
  }

  const work = () => payouts.work();
  const send = (key: string, wallet: string, amount: string) => payouts.send(key, wallet, amount);
  const transferOf = (key: string, id: string) => payouts.transferOf(key, id);
  const final = (key: string, id: string) => payouts.final(key, id);
  const webhooksOf = (externalTxId: string) => sim.webhooks.filter((w) => w.externalTxId === externalTxId);
  /** POSTs a webhook body with the given signature headers to the service, as Fireblocks would. */
  const post = (url: string, body: string, headers: Record<string, string>) =>
    fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });
  const callbacksOf = async (key: string, transferId: string) =>
    (await api(t, 'GET', `/v1/rail-callbacks?transfer=${transferId}`, { key })).data.data as Array<{
      status: string;
    }>;
  const exceptionsOf = async (key: string, query: string) =>
    (await api(t, 'GET', `/v1/reconciliation/exceptions?${query}`, { key })).data.data as Array<{
      kind: string;
      transfer: string | null;
      details: Record<string, unknown>;
    }>;

  /** A payout settled by v2 webhooks: its transfer id and the webhook that completed it. */
  async function settledPayout(key: string, wallet: string, amount = '5.000000') {
    const id = await send(key, wallet, amount);
    await work();
    await sim.whenIdle();
    expect((await final(key, id)).status).toBe('settled');
    const completed = webhooksOf(id).find((w) => w.status === 'COMPLETED') as FireblocksWebhookDelivery;
    expect(completed.headers['Fireblocks-Webhook-Signature']).toMatch(/^[\w-]+\.\.[\w-]+$/);
    expect(completed.responseStatus).toBe(200);
    if (completed.headers['Fireblocks-Signature'] === undefined) {
      expect(JSON.parse(completed.body)).toMatchObject({
        eventType: 'transaction.status.updated',
        resourceId: completed.transactionId,
        data: { id: completed.transactionId, status: 'COMPLETED' },
      });
    }
    return { id, completed };
  }

  it('settles a payout by webhooks signed only with v2, verified against the JWKS; a replay changes nothing twice', async () => {
    const { key, wallet, callbackUrl } = await configured();
    const { id, completed } = await settledPayout(key, wallet);
    expect((await callbacksOf(key, id)).map((c) => c.status)).toContain('applied');
    const entries = async () =>
      ((await api(t, 'GET', `/v1/ledger/entries?transfer=${id}`, { key })).data.data as unknown[]).length;
    const before = await entries();
    const replay = await post(callbackUrl, completed.body, completed.headers);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ status: 'duplicate' });
    expect(await entries()).toBe(before);
    await expectLedgerHealthy(t);
  });

  it('refuses a tampered body, `none`, HS256 keyed with the public key, and a v1-only webhook', async () => {
    const { key, wallet, callbackUrl } = await configured();
    const { id, completed } = await settledPayout(key, wallet);
    const jws = completed.headers['Fireblocks-Webhook-Signature'] as string;
    const tampered = completed.body.replace('"COMPLETED"', '"FAILED"');
    const [header] = jws.split('.');
    const kid = JSON.parse(Buffer.from(header as string, 'base64url').toString()).kid as string;
    const none = `${b64url({ alg: 'none', kid })}..`;
    // The classic confusion: HS256 with the RSA public key (as published) for the secret.
    const jwks = (await (await fetch(sim.jwksUrl)).json()) as { keys: Array<Record<string, string>> };
    const publicPem = createPublicKey({ key: jwks.keys[0] as never, format: 'jwk' })
      .export({ type: 'spki', format: 'pem' })
      .toString();
    const hsHeader = b64url({ alg: 'HS256', kid });
    const hs = `${hsHeader}..${createHmac('sha256', publicPem)
      .update(`${hsHeader}.${b64url(tampered)}`)
      .digest('base64url')}`;
    const tries: Array<Record<string, string>> = [
      { 'Fireblocks-Webhook-Signature': jws },
      { 'Fireblocks-Webhook-Signature': none },
      { 'Fireblocks-Webhook-Signature': hs },
      { 'Fireblocks-Signature': completed.signature || 'AAAA' },
    ];
    for (const [i, headers] of tries.entries()) {
      // Each its own bytes: the same bytes again would be stored as a duplicate of the first refusal.
      const refused = await post(callbackUrl, `${tampered}${' '.repeat(i)}`, headers);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ code: 'callback_malformed' });
    }
    expect((await transferOf(key, id)).status).toBe('settled');
    expect(await exceptionsOf(key, `transfer=${id}`)).toEqual([]);
  });

  it('a rotated key is fetched once; made-up kids after it are answered 503 without fetching the JWKS again', async () => {
    const { key, wallet, callbackUrl } = await configured();
    await settledPayout(key, wallet);
    const newKid = sim.rotateWebhookKey();
    const fetchesBefore = sim.jwksRequests;
    const { id, completed } = await settledPayout(key, wallet, '6.000000');
    expect(completed.headers['Fireblocks-Webhook-Signature']).toContain(
      b64url({ alg: 'RS512', kid: newKid }),
    );
    expect(sim.jwksRequests).toBe(fetchesBefore + 1);
    // A forger's kid: the set was refetched moments ago, so it is not fetched again for it.
    const body = completed.body.replace(id, `${id}x`);
    for (let i = 0; i < 5; i++) {
      const forged = webhookJws(body, FORGER_KEY, `forged-${i}`);
      const answer = await post(callbackUrl, body, { 'Fireblocks-Webhook-Signature': forged }).catch(
        () => undefined,
      );
      expect(answer?.status ?? 503).toBe(503);
    }
    expect(sim.jwksRequests).toBe(fetchesBefore + 1);
  });

  it('a JWKS out of reach refuses webhooks with a retryable 503, stores nothing, and polling settles the payout', async () => {
    // Another URL of the same JWKS: a key set this process has not fetched yet.
    const { key, wallet } = await configured(`${sim.jwksUrl}?unreachable`);
    sim.setJwksAvailable(false);
    try {
      const id = await send(key, wallet, '7.000000');
      await work();
      await sim.whenIdle();
      const answered = webhooksOf(id).map((w) => w.responseStatus);
      expect(answered.length).toBeGreaterThan(0);
      expect(new Set(answered)).toEqual(new Set([503]));
      expect(await callbacksOf(key, id)).toEqual([]);
      expect((await transferOf(key, id)).status).not.toBe('settled');
      await payouts.dueNow(id);
      await work();
      expect((await final(key, id)).status).toBe('settled');
    } finally {
      sim.setJwksAvailable(true);
    }
    await expectLedgerHealthy(t);
  });

  it('v1_or_v2 takes both signatures during the migration, and falls back to v1 while the JWKS is out of reach', async () => {
    sim.setWebhookSignatures('both');
    try {
      const { key, wallet } = await configured(sim.jwksUrl, 'v1_or_v2');
      const { completed } = await settledPayout(key, wallet);
      expect(JSON.parse(completed.body)).toMatchObject({ type: 'TRANSACTION_STATUS_UPDATED' });
      expect(completed.headers['Fireblocks-Signature']).toBeTruthy();
      const unreachable = await configured(`${sim.jwksUrl}?v1-fallback`, 'v1_or_v2');
      sim.setJwksAvailable(false);
      const { id } = await settledPayout(unreachable.key, unreachable.wallet);
      expect((await callbacksOf(unreachable.key, id)).map((c) => c.status)).toContain('applied');
    } finally {
      sim.setJwksAvailable(true);
      sim.setWebhookSignatures('v2');
    }
  });

  it('a settled payout Fireblocks later reports FAILED opens a late_callback exception and stays settled', async () => {
    const { key, wallet } = await configured();
    const { id } = await settledPayout(key, wallet);
    const txId = webhooksOf(id)[0]?.transactionId as string;
    sim.changeCompletedStatus(txId, 'FAILED', 'INTERNAL_ERROR');
    await sim.whenIdle();
    const exceptions = await eventually(
      () => exceptionsOf(key, `transfer=${id}`),
      (list) => list.length === 1,
    );
    expect(exceptions[0]).toMatchObject({ kind: 'late_callback', details: { reported: 'failed' } });
    expect((await transferOf(key, id)).status).toBe('settled');
    const events = (await api(t, 'GET', '/v1/events?type=reconciliation.exception.opened', { key })).data
      .data as unknown[];
    expect(events).toHaveLength(1);
    // The poll answers the new status too.
    const polled = await fireblocksRequest(config, 'GET', `/transactions/${txId}`);
    expect(polled.body).toMatchObject({ status: 'FAILED' });
    await expectLedgerHealthy(t);
  });

  it('a credited deposit Fireblocks later reports REJECTED opens an exception once; the wallet keeps the credit', async () => {
    const { key } = await configured();
    const wallet = await fundedWallet(t, '0', 'USDC', key);
    const issued = await api(t, 'POST', `/v1/wallets/${wallet}/deposit-addresses`, {
      key,
      body: { network: 'ethereum' },
    });
    expect(issued.statusCode, issued.body).toBe(201);
    const name = encodeURIComponent(`mkoba ${wallet}`);
    const vaults = await fireblocksRequest(config, 'GET', `/vault/accounts_paged?namePrefix=${name}`);
    const vaultId = (vaults.body as { accounts: Array<{ id: string }> }).accounts[0]?.id ?? '';
    const deposit = sim.deposit({ vaultAccountId: vaultId, assetId: 'USDC', amount: '42.5' });
    await sim.whenIdle();
    await eventually(
      async () => (await api(t, 'GET', `/v1/deposits?wallet=${wallet}`, { key })).data.data as unknown[],
      (list) => list.length === 1,
    );
    for (let i = 0; i < 3; i++) await runDepositWorkerOnce(t.deps, { log: () => {} });
    const credited = (await api(t, 'GET', `/v1/deposits?wallet=${wallet}`, { key })).data.data[0];
    expect(credited.status).toBe('credited');
    sim.changeCompletedStatus(deposit.id, 'REJECTED', 'REJECTED_BY_USER');
    await sim.whenIdle();
    const exceptions = await eventually(
      () => exceptionsOf(key, 'kind=late_callback'),
      (list) => list.length === 1,
    );
    expect(exceptions[0]).toMatchObject({
      transfer: credited.transfer,
      details: { direction: 'deposit', deposit_id: credited.id, reported_status: 'REJECTED' },
    });
    // The same webhook again: a duplicate, no second exception.
    const last = sim.webhooks
      .filter((w) => w.transactionId === deposit.id)
      .at(-1) as FireblocksWebhookDelivery;
    const again = await post(last.url, last.body, last.headers);
    expect(await again.json()).toMatchObject({ status: 'duplicate' });
    expect(await exceptionsOf(key, 'kind=late_callback')).toHaveLength(1);
    const balance = await api(t, 'GET', `/v1/wallets/${wallet}`, { key });
    expect(balance.data.balance).toMatchObject({ available: '42.500000' });
    await expectLedgerHealthy(t);
  });

  it('checks the webhook settings: a scheme it knows, a public key unless v2 alone', async () => {
    const org = await newOrganization(t);
    const base = { base_url: sim.baseUrl, source_vault_account_id: vaultAccountId };
    const credentials = { api_key: sim.credentials.apiKey, private_key: sim.credentials.secretKey };
    const tries: Array<[Record<string, string>, string]> = [
      [{ ...base, webhook_signatures: 'v3', webhook_public_key: 'k' }, 'settings.webhook_signatures'],
      [{ ...base, webhook_signatures: 'v1_or_v2' }, 'settings.webhook_public_key'],
      [
        { ...base, webhook_signatures: 'v2', webhook_jwks_url: 'ftp://keys.example' },
        'settings.webhook_jwks_url',
      ],
    ];
    for (const [settings, param] of tries) {
      const refused = await api(t, 'POST', '/v1/rail-partners', {
        key: org.key,
        body: { partner: 'fireblocks', settings, credentials },
      });
      expect(refused.statusCode, refused.body).toBe(400);
      expect(JSON.stringify(refused.data)).toContain(param);
    }
  });
});

describe('Fireblocks JWKS cache', () => {
  it('refetches for an unknown kid at most once an interval, and fails retryably when the JWKS is out of reach', async () => {
    const sim = await startFireblocksSimulator({ webhookSignatures: 'v2' });
    try {
      let now = 1_000_000;
      const cache = new FireblocksJwksCache(() => now);
      const fetchIt = (url: string, init?: object) => fetch(url, init as RequestInit);
      const body = '{"type":"TRANSACTION_CREATED"}';
      const signed = (kid: string) => webhookJws(body, FORGER_KEY, kid);
      await expect(
        verifyFireblocksWebhookJws(cache, fetchIt, sim.jwksUrl, signed('unknown'), body),
      ).rejects.toBeInstanceOf(MalformedCallbackError);
      expect(sim.jwksRequests).toBe(1);
      await expect(
        verifyFireblocksWebhookJws(cache, fetchIt, sim.jwksUrl, signed('unknown'), body),
      ).rejects.toBeInstanceOf(MalformedCallbackError);
      expect(sim.jwksRequests).toBe(2);
      await expect(
        verifyFireblocksWebhookJws(cache, fetchIt, sim.jwksUrl, signed('unknown-2'), body),
      ).rejects.toBeInstanceOf(CallbackVerificationUnavailableError);
      expect(sim.jwksRequests).toBe(2);
      now += FIREBLOCKS_JWKS_REFRESH_MIN_INTERVAL_MS;
      sim.setJwksAvailable(false);
      await expect(
        verifyFireblocksWebhookJws(cache, fetchIt, sim.jwksUrl, signed('unknown-3'), body),
      ).rejects.toBeInstanceOf(CallbackVerificationUnavailableError);
      expect(sim.jwksRequests).toBe(3);
      // Down: not fetched again within the interval.
      await expect(
        verifyFireblocksWebhookJws(cache, fetchIt, sim.jwksUrl, signed('unknown-4'), body),
      ).rejects.toBeInstanceOf(CallbackVerificationUnavailableError);
      expect(sim.jwksRequests).toBe(3);
    } finally {
      await sim.close();
    }
  });

  it('fetches once for concurrent webhooks, and keeps serving an expired set while the JWKS is down', async () => {
    let now = 1_000_000;
    let fetches = 0;
    let up = true;
    const jwk = {
      ...createPublicKey(FORGER_KEY).export({ format: 'jwk' }),
      kid: 'k1',
      use: 'sig',
      alg: 'RS512',
    };
    // The JWKS as Fireblocks publishes it, counted, and down on demand.
    const jwksFetch = async () => {
      fetches += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return up ? Response.json({ keys: [jwk] }) : new Response('down', { status: 503 });
    };
    const cache = new FireblocksJwksCache(() => now);
    const body = '{"eventType":"transaction.created"}';
    const verifyOnce = () =>
      verifyFireblocksWebhookJws(
        cache,
        jwksFetch,
        'https://keys.example/jwks',
        webhookJws(body, FORGER_KEY, 'k1'),
        body,
      );
    await Promise.all([verifyOnce(), verifyOnce(), verifyOnce()]);
    expect(fetches).toBe(1);
    now += FIREBLOCKS_JWKS_MAX_AGE_MS;
    up = false;
    await verifyOnce();
    await verifyOnce();
    expect(fetches).toBe(2);
  });
});
