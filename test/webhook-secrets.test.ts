/**
 * Webhook secrets at rest and in rotation: no secret in clear in its table nor in the stored idempotent
 * response of create and rotate-secret (a replay still returns it), deliveries signed with the sealed
 * secrets, master-key rotation and re-wrapping, secrets an earlier version stored in clear sealed on start,
 * and the bound on secrets that sign at once.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import { type Deps, systemDeps } from '../src/app/deps.ts';
import { openResponseText } from '../src/app/encryption.ts';
import { missingMasterKeys, sealClearSecrets } from '../src/app/secretsAtRest.ts';
import { defaultWebhookSettings } from '../src/config/webhooks.ts';
import { requestFingerprint } from '../src/domain/idempotency.ts';
import { keyringOf, MASTER_KEY_BYTES, masterKeyId } from '../src/domain/sealing.ts';
import {
  formatWebhookSecret,
  verifySignatureHeader,
  WEBHOOK_SECRET_RANDOM_BYTES,
  WEBHOOK_SIGNING_SECRETS_MAX,
} from '../src/domain/signing.ts';
import { buildApp } from '../src/http/app.ts';
import { activeSecrets } from '../src/modules/webhooks/repository/secrets.ts';
import { dispatchWebhooksOnce } from '../src/modules/webhooks/workers/dispatcher.ts';
import { httpWebhookSender } from '../src/modules/webhooks/workers/httpSender.ts';
import { listMigrations, migrate } from '../src/store/migrate.ts';
import { findIdempotencyRecord } from '../src/store/repositories/idempotency.ts';
import {
  api,
  BACKENDS,
  newOrganizationKey,
  openTestDatabase,
  startTestApp,
  type TestApp,
  type TestDatabase,
} from './support/harness.ts';
import { type Receiver, startReceiver } from './support/receiver.ts';

const dispatcher = {
  settings: { ...defaultWebhookSettings('sandbox'), blockReservedAddresses: false },
  sender: httpWebhookSender({ timeoutMs: 10_000, blockReservedAddresses: false }),
  random: () => 0.5,
};

async function drain(deps: Deps): Promise<void> {
  for (let pass = 0; pass < 10; pass++) if ((await dispatchWebhooksOnce(deps, dispatcher)) === 0) return;
}

/** Everything the database holds about secrets, as text. */
async function storedText(t: { deps: Deps }): Promise<string> {
  const secrets = await t.deps.store.query('SELECT * FROM webhook_secrets');
  const responses = await t.deps.store.query('SELECT response_text AS body FROM idempotency_records');
  return JSON.stringify([secrets, responses]);
}

const newKey = () => new Uint8Array(randomBytes(MASTER_KEY_BYTES));

describe.each(BACKENDS)('webhook secrets at rest on %s', (backend) => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    // The receiver listens on 127.0.0.1: local development's opt-in (MKOBA_WEBHOOK_ALLOW_PRIVATE=1).
    t = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });
  beforeEach(() => {
    receiver.received.length = 0;
  });

  /** The last delivery verifies with exactly these of the given secrets. */
  function verifiedBy(secrets: readonly string[]): string[] {
    const request = receiver.received.at(-1);
    if (!request) throw new Error('nothing delivered');
    const header = request.headers['service-signature'] as string;
    const now = Math.floor(Date.now() / 1000);
    return secrets.filter((s) => verifySignatureHeader(request.body, header, [s], now).ok);
  }

  it('stores neither the secret nor the create and rotate answers in clear; a replay still returns the secret', async () => {
    const body = { url: receiver.url, events: ['transfer.settled'] };
    const headers = { 'idempotency-key': `create-${backend}` };
    const created = await api(t, 'POST', '/v1/webhook-subscriptions', { headers, body });
    expect(created.statusCode, created.body).toBe(201);
    const secret = created.data.secret as string;
    expect(secret).toMatch(/^whsec_/);

    const rotateHeaders = { 'idempotency-key': `rotate-${backend}` };
    const rotatePath = `/v1/webhook-subscriptions/${created.data.id}/rotate-secret`;
    const rotated = await api(t, 'POST', rotatePath, { headers: rotateHeaders });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.data.secrets_retired_early).toEqual([]);
    const next = rotated.data.secret as string;

    const stored = await storedText(t);
    expect(stored).not.toContain('whsec_');
    for (const s of [secret, next]) expect(stored).not.toContain(s.slice('whsec_'.length));
    const rows = await t.deps.store.query<{ key_id: string; legacy_plaintext_secret: string | null }>(
      'SELECT key_id, legacy_plaintext_secret FROM webhook_secrets WHERE subscription_id = $1',
      [created.data.id],
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.key_id).toBe(t.deps.keyring.current?.id);
      expect(row.legacy_plaintext_secret).toBeNull();
    }

    // Stripe's semantics: the retry of a create (or a rotation) answers as the original did, secret included.
    const replay = await api(t, 'POST', '/v1/webhook-subscriptions', { headers, body });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.data).toEqual(created.data);
    const rotateReplay = await api(t, 'POST', rotatePath, { headers: rotateHeaders });
    expect(rotateReplay.statusCode).toBe(200);
    expect(rotateReplay.headers['idempotent-replayed']).toBe('true');
    expect(rotateReplay.data).toEqual(rotated.data);

    // The sealed secrets sign deliveries: one v1 for each.
    await api(t, 'POST', '/v1/sandbox/events', { body: { type: 'transfer.settled' } });
    await drain(t.deps);
    expect(verifiedBy([secret, next, formatWebhookSecret(randomBytes(32))])).toEqual([secret, next]);
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${created.data.id}`);
  });

  it('a rotation past the bound retires the oldest secret at once and says which; deliveries go on', async () => {
    const key = await newOrganizationKey(t);
    const created = await api(t, 'POST', '/v1/webhook-subscriptions', {
      key,
      body: { url: receiver.url, events: ['transfer.created'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const secrets = [created.data.secret as string];
    const rotate = () =>
      api(t, 'POST', `/v1/webhook-subscriptions/${created.data.id}/rotate-secret`, {
        key,
        body: { grace_period_hours: 24 },
      });
    for (let i = 1; i < WEBHOOK_SIGNING_SECRETS_MAX; i++) {
      const rotated = await rotate();
      expect(rotated.statusCode, rotated.body).toBe(200);
      expect(rotated.data.secrets_retired_early).toEqual([]);
      secrets.push(rotated.data.secret);
    }
    // Five sign now; the next rotation would make six.
    for (const expectedRetired of [secrets[0], secrets[1]] as string[]) {
      const rotated = await rotate();
      expect(rotated.statusCode, rotated.body).toBe(200);
      secrets.push(rotated.data.secret);
      expect(rotated.data.secrets_retired_early).toEqual([
        { last4: expectedRetired.slice(-4), created_at: expect.any(String) },
      ]);
    }
    const now = new Date();
    expect(await activeSecrets(t.deps.store, t.deps.keyring, created.data.id, now)).toEqual(
      secrets.slice(2).reverse(),
    );

    const event = await api(t, 'POST', '/v1/sandbox/events', { key, body: { type: 'transfer.created' } });
    await drain(t.deps);
    expect(verifiedBy(secrets)).toEqual(secrets.slice(2));
    const deliveries = await api(t, 'GET', `/v1/events/${event.data.id}/deliveries`, { key });
    expect(deliveries.data.data[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${created.data.id}`, { key });
  });

  it('signs with the newest secrets within the bound even when more are live (rows an earlier version wrote)', async () => {
    const key = await newOrganizationKey(t);
    const created = await api(t, 'POST', '/v1/webhook-subscriptions', {
      key,
      body: { url: receiver.url, events: ['transfer.created'] },
    });
    const extra = Array.from({ length: WEBHOOK_SIGNING_SECRETS_MAX + 1 }, () =>
      formatWebhookSecret(randomBytes(WEBHOOK_SECRET_RANDOM_BYTES)),
    );
    for (const [i, secret] of extra.entries()) {
      await t.deps.store.query(
        'INSERT INTO webhook_secrets (subscription_id, legacy_plaintext_secret, created_at) VALUES ($1, $2, $3)',
        [created.data.id, secret, new Date(Date.now() + 1_000 * (i + 1))],
      );
    }
    await api(t, 'POST', '/v1/sandbox/events', { key, body: { type: 'transfer.created' } });
    await drain(t.deps);
    const request = receiver.received.at(-1);
    expect(request?.headers['service-signature']?.toString().match(/v1=/g)).toHaveLength(
      WEBHOOK_SIGNING_SECRETS_MAX,
    );
    expect(verifiedBy(extra)).toEqual(extra.slice(-WEBHOOK_SIGNING_SECRETS_MAX));
    await t.deps.store.query('DELETE FROM webhook_secrets WHERE legacy_plaintext_secret IS NOT NULL');
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${created.data.id}`, { key });
  });

  it('rotates the master key: the previous key opens, rewrap moves every secret, then the old key can go', async () => {
    const key = await newOrganizationKey(t);
    const headers = { 'idempotency-key': `before-rotation-${backend}` };
    const body = { url: receiver.url, events: ['transfer.created'] };
    const created = await api(t, 'POST', '/v1/webhook-subscriptions', { key, headers, body });
    expect(created.statusCode, created.body).toBe(201);
    const secret = created.data.secret as string;
    const oldKey = t.deps.keyring.current;
    if (!oldKey) throw new Error('the test app has no master key');

    const replacement = newKey();
    const rotating: Deps = { ...t.deps, keyring: keyringOf(replacement, [oldKey.bytes]) };
    expect(await missingMasterKeys(rotating)).toEqual([]);
    await api(t, 'POST', '/v1/sandbox/events', { key, body: { type: 'transfer.created' } });
    await drain(rotating);
    expect(verifiedBy([secret])).toEqual([secret]);

    const result = await runAdminCommand(rotating, { name: 'encryption.rewrap' });
    expect(result).toMatchObject({ name: 'encryption.rewrap', keyId: masterKeyId(replacement) });
    if (result.name !== 'encryption.rewrap') throw new Error('unexpected result');
    expect(result.secrets).toBeGreaterThanOrEqual(1);
    expect(result.responses).toBeGreaterThanOrEqual(1);
    const stored = await storedText(t);
    expect(stored).not.toContain(oldKey.id);
    expect(stored).toContain(masterKeyId(replacement));
    expect(stored).not.toContain('whsec_');

    // The old key is gone: everything still opens, signs and replays.
    const rotated: Deps = { ...t.deps, keyring: keyringOf(replacement) };
    expect(await missingMasterKeys(rotated)).toEqual([]);
    receiver.received.length = 0;
    await api(t, 'POST', '/v1/sandbox/events', { key, body: { type: 'transfer.created' } });
    await drain(rotated);
    expect(verifiedBy([secret])).toEqual([secret]);
    const app = await buildApp({ deps: rotated });
    try {
      const replay = await api({ ...t, app, deps: rotated }, 'POST', '/v1/webhook-subscriptions', {
        key,
        headers,
        body,
      });
      expect(replay.statusCode, replay.body).toBe(201);
      expect(replay.data.secret).toBe(secret);
    } finally {
      await app.close();
    }

    // A process with neither key is told which key it lacks (start-up refuses it: see encryption-keys.test.ts).
    const stranger: Deps = { ...t.deps, keyring: keyringOf(newKey()) };
    expect(await missingMasterKeys(stranger)).toContain(masterKeyId(replacement));
    // Back to the app's own key for the tests after this one.
    expect(
      (
        await runAdminCommand(
          { ...t.deps, keyring: keyringOf(oldKey.bytes, [replacement]) },
          {
            name: 'encryption.rewrap',
          },
        )
      ).name,
    ).toBe('encryption.rewrap');
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${created.data.id}`, { key });
  });
});

describe.each(BACKENDS)('secrets an earlier version stored in clear, on %s', (backend) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await openTestDatabase(backend, { empty: true });
  });
  afterAll(async () => {
    await db.close();
  });

  it('are sealed on the first start after the upgrade, and still sign and replay', async () => {
    const before = (await listMigrations()).filter((m) => m.version < '0006');
    await migrate(db.store, before);
    const secret = formatWebhookSecret(randomBytes(WEBHOOK_SECRET_RANDOM_BYTES));
    const now = new Date();
    const organizationId = 'org_01legacy0000000000000000';
    const subscriptionId = 'whsub_01legacy0000000000000000';
    const requestBody = { url: 'https://hooks.example.com/x', events: ['*'] };
    const answer = { id: subscriptionId, object: 'webhook_subscription', secret };
    await db.store.query('INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)', [
      organizationId,
      'Legacy Ltd',
      now,
    ]);
    await db.store.query(
      `INSERT INTO webhook_subscriptions (id, organization_id, url, events, payload_format, status, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'snake_case', 'enabled', $5, $5)`,
      [subscriptionId, organizationId, requestBody.url, requestBody.events, now],
    );
    await db.store.query(
      'INSERT INTO webhook_secrets (subscription_id, secret, created_at) VALUES ($1, $2, $3)',
      [subscriptionId, secret, now],
    );
    await db.store.query(
      `INSERT INTO idempotency_records (organization_id, idempotency_key, fingerprint, method, path, response_status, response_body, created_at)
       VALUES ($1, 'legacy-create', $2, 'POST', '/v1/webhook-subscriptions', 201, $3::jsonb, $4)`,
      [
        organizationId,
        requestFingerprint('POST', '/v1/webhook-subscriptions', requestBody),
        JSON.stringify(answer),
        now,
      ],
    );

    await migrate(db.store);
    const deps = systemDeps(db.store, 'sandbox', { keyring: keyringOf(newKey()) });
    // Until sealed, the row in clear still signs.
    expect(await activeSecrets(db.store, deps.keyring, subscriptionId, new Date())).toEqual([secret]);
    expect(await sealClearSecrets(deps)).toEqual({ secrets: 1, responses: 1 });
    expect(await sealClearSecrets(deps)).toEqual({ secrets: 0, responses: 0 });
    expect(await storedText({ deps })).not.toContain('whsec_');
    expect(await activeSecrets(db.store, deps.keyring, subscriptionId, new Date())).toEqual([secret]);
    const record = await findIdempotencyRecord(db.store, organizationId, 'legacy-create');
    expect(record?.createdAt.getTime()).toBe(now.getTime());
    expect(
      JSON.parse(
        openResponseText(deps, { organizationId, key: 'legacy-create' }, record?.responseText ?? ''),
      ),
    ).toEqual(answer);
  });
});
