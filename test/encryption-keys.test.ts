/**
 * Master keys as a server process meets them (startServer, in this process): the embedded sandbox's
 * generated key file, a missing or wrong key refused at start with one ConfigError naming
 * MKOBA_ENCRYPTION_KEY, and a rotation on PostgreSQL (new key current, old key previous, rewrap, old key
 * retired) with every secret still usable.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import { ConfigError } from '../src/config/variables.ts';
import { loadConfig } from '../src/config.ts';
import { MASTER_KEY_BYTES, masterKeyId, parseMasterKey } from '../src/domain/sealing.ts';
import { type RunningServer, startServer } from '../src/main.ts';
import { createSchema, dropSchema } from '../src/store/postgres.ts';
import { TEST_DATABASE_URL } from './support/harness.ts';

/** Creating an embedded database takes seconds of CPU; several starts on a busy machine take a while. */
const EMBEDDED_TEST_TIMEOUT_MS = 240_000;
const quiet = () => {};

async function call(
  server: RunningServer,
  method: string,
  route: string,
  body?: unknown,
  idempotencyKey?: string,
) {
  const response = await fetch(`${server.url}/v1${route}`, {
    method,
    headers: {
      authorization: `Bearer ${server.sandboxApiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

// A public literal address: accepted without a DNS look-up; no event is ever sent to it here.
const SUBSCRIPTION = { url: 'https://93.184.215.14/hooks', events: ['transfer.settled'] };

async function refusal(start: Promise<RunningServer>): Promise<ConfigError> {
  const error = await start.then(
    async (server) => {
      await server.stop();
      throw new Error('the server started');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

describe('the embedded sandbox without MKOBA_ENCRYPTION_KEY', () => {
  const parent = mkdtempSync(path.join(tmpdir(), 'mkoba-keys-'));
  const dataDir = path.join(parent, 'data');
  const env = { MKOBA_DATA_DIR: dataDir, PORT: '0' };
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  it('generates a key in the data directory (mode 0600), keeps it, and refuses to start without it', {
    timeout: EMBEDDED_TEST_TIMEOUT_MS,
  }, async () => {
    let server = await startServer(loadConfig(env), quiet);
    const file = path.join(dataDir, 'encryption-key');
    let created: { status: number; body: Record<string, any> };
    try {
      expect(statSync(file).mode & 0o777).toBe(0o600);
      created = await call(server, 'POST', '/webhook-subscriptions', SUBSCRIPTION, 'embedded-create');
      expect(created.status).toBe(201);
    } finally {
      await server.stop();
    }
    const generated = parseMasterKey(readFileSync(file, 'utf8'));
    if (!generated) throw new Error('the key file does not hold a key');

    // The same key on the next start: the secret replays.
    server = await startServer(loadConfig(env), quiet);
    try {
      const replay = await call(server, 'POST', '/webhook-subscriptions', SUBSCRIPTION, 'embedded-create');
      expect(replay.body.secret).toBe(created.body.secret);
    } finally {
      await server.stop();
    }

    // The key is lost: a start would seal with a new one and never open the stored secrets again.
    rmSync(file);
    const lost = await refusal(startServer(loadConfig(env), quiet));
    expect(lost.variable).toBe('MKOBA_ENCRYPTION_KEY');
    expect(lost.message).toContain(masterKeyId(generated));
    expect(lost.message.split('\n')).toHaveLength(1);

    // Given back as MKOBA_ENCRYPTION_KEY, it starts again.
    const restored = { ...env, MKOBA_ENCRYPTION_KEY: Buffer.from(generated).toString('base64') };
    server = await startServer(loadConfig(restored), quiet);
    try {
      const replay = await call(server, 'POST', '/webhook-subscriptions', SUBSCRIPTION, 'embedded-create');
      expect(replay.body.secret).toBe(created.body.secret);
    } finally {
      await server.stop();
    }
  });
});

describe('MKOBA_ENCRYPTION_KEY is required', () => {
  it.each([
    [{ MKOBA_ENV: 'production', DATABASE_URL: 'postgres://127.0.0.1:1/none' }, 'when MKOBA_ENV=production'],
    [{ DATABASE_URL: 'postgres://127.0.0.1:1/none' }, 'with DATABASE_URL'],
  ])('%o: the start stops, before opening anything, naming it', async (env, where) => {
    const error = await refusal(startServer(loadConfig(env), quiet));
    expect(error.variable).toBe('MKOBA_ENCRYPTION_KEY');
    expect(error.message).toContain(where);
  });
});

describe.runIf(TEST_DATABASE_URL)('rotating the master key on PostgreSQL', () => {
  const schema = `keys_${randomBytes(6).toString('hex')}`;
  let databaseUrl = '';
  const oldKey = randomBytes(MASTER_KEY_BYTES);
  const newKey = randomBytes(MASTER_KEY_BYTES);
  beforeAll(async () => {
    await createSchema(TEST_DATABASE_URL as string, schema);
    const url = new URL(TEST_DATABASE_URL as string);
    url.searchParams.set('options', `-c search_path=${schema}`);
    databaseUrl = url.toString();
  });
  afterAll(async () => {
    await dropSchema(TEST_DATABASE_URL as string, schema);
  });

  const config = (keys: { current: Buffer; previous?: Buffer[] }) =>
    loadConfig({
      DATABASE_URL: databaseUrl,
      PORT: '0',
      MKOBA_SANDBOX_API_KEY: 'sk_sandbox_rotation_test_key_0001',
      MKOBA_ENCRYPTION_KEY: keys.current.toString('hex'),
      MKOBA_ENCRYPTION_KEYS_PREVIOUS: (keys.previous ?? []).map((k) => k.toString('base64')).join(','),
    });

  it('refuses the new key alone, runs with the old one as previous, re-wraps, then needs only the new one', {
    timeout: 120_000,
  }, async () => {
    let server = await startServer(config({ current: oldKey }), quiet);
    let created: { status: number; body: Record<string, any> };
    try {
      created = await call(server, 'POST', '/webhook-subscriptions', SUBSCRIPTION, 'pg-create');
      expect(created.status).toBe(201);
    } finally {
      await server.stop();
    }

    const refused = await refusal(startServer(config({ current: newKey }), quiet));
    expect(refused.variable).toBe('MKOBA_ENCRYPTION_KEY');
    expect(refused.message).toContain(`sealed under master key ${masterKeyId(oldKey)}`);

    server = await startServer(config({ current: newKey, previous: [oldKey] }), quiet);
    try {
      const replay = await call(server, 'POST', '/webhook-subscriptions', SUBSCRIPTION, 'pg-create');
      expect(replay.body.secret).toBe(created.body.secret);
      expect(await runAdminCommand(server.deps, { name: 'encryption.rewrap' })).toMatchObject({
        keyId: masterKeyId(newKey),
        secrets: 1,
        responses: 1,
      });
    } finally {
      await server.stop();
    }

    server = await startServer(config({ current: newKey }), quiet);
    try {
      const replay = await call(server, 'POST', '/webhook-subscriptions', SUBSCRIPTION, 'pg-create');
      expect(replay.status).toBe(201);
      expect(replay.body.secret).toBe(created.body.secret);
      const rotated = await call(server, 'POST', `/webhook-subscriptions/${created.body.id}/rotate-secret`);
      expect(rotated.status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
