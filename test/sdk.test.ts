/**
 * The SDK package (@mkoba/sdk): its generated types and client are current with openapi.json, it stands
 * alone (no server code, no runtime dependencies, runs from its build in plain Node), its webhook receiver
 * follows the interface's receiver rules, and its typed client drives a real server over HTTP.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  GENERATED_FILE,
  generate,
  type OpenApiDocument,
  operationsOf,
  readDocument,
} from '../packages/sdk/scripts/generate.ts';
import {
  createClient,
  createWebhookReceiver,
  type Event,
  MkobaApiError,
  type MkobaClient,
  MkobaConnectionError,
  OPERATIONS,
  type ProcessedEventStore,
  paginate,
  type Transfer,
  verifyWebhook,
  type WebhookReceiverResponse,
} from '../packages/sdk/src/index.ts';
import { defaultWebhookSettings } from '../src/config/webhooks.ts';
import { formatWebhookSecret, signatureHeader, unixSeconds } from '../src/domain/signing.ts';
import { dispatchWebhooksOnce } from '../src/modules/webhooks/workers/dispatcher.ts';
import { httpWebhookSender } from '../src/modules/webhooks/workers/httpSender.ts';
import { BACKENDS, startTestApp, type TestApp } from './support/harness.ts';

const run = promisify(execFile);
const SDK_DIR = fileURLToPath(new URL('../packages/sdk/', import.meta.url));
const TSC_BIN = fileURLToPath(new URL('../node_modules/.bin/tsc', import.meta.url));
const BUILD_TIMEOUT_MS = 60_000;
const UNKNOWN_WALLET = 'wallet_01jcz3m5e7x8y9a0b1c2d3e4f5';
const SETTLING_PHONE = '+254700000000';
const API_KEY = `sk_sandbox_${'x'.repeat(32)}`;

describe('the SDK package', () => {
  let document: OpenApiDocument;
  beforeAll(() => {
    document = readDocument();
  });

  it('generated.ts is what the generator makes from openapi.json', async () => {
    const committed = await readFile(GENERATED_FILE, 'utf8');
    expect(generate(document) === committed, 'stale: run `npm run generate -w @mkoba/sdk`').toBe(true);
  });

  it('has one client method per operationId of openapi.json, and no other', () => {
    const operationIds = operationsOf(document).map(({ operation }) => operation.operationId);
    const client = createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: API_KEY });
    expect(Object.keys(client).sort()).toEqual([...operationIds].sort());
    expect(Object.keys(OPERATIONS).sort()).toEqual([...operationIds].sort());
    for (const { method, path, operation } of operationsOf(document)) {
      const spec = OPERATIONS[operation.operationId as keyof typeof OPERATIONS];
      expect(spec, operation.operationId).toMatchObject({ method, path });
      expect(typeof client[operation.operationId as keyof MkobaClient]).toBe('function');
    }
  });

  it('imports only its own files and Node built-ins, and has no runtime dependencies', async () => {
    const manifest = JSON.parse(await readFile(join(SDK_DIR, 'package.json'), 'utf8'));
    expect(manifest.name).toBe('@mkoba/sdk');
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});
    const files = (await readdir(join(SDK_DIR, 'src'))).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const source = await readFile(join(SDK_DIR, 'src', file), 'utf8');
      const specifiers = [...source.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map(
        (m) => m[1] as string,
      );
      for (const specifier of specifiers) {
        expect(
          specifier.startsWith('node:') || /^\.\/[\w.-]+\.ts$/.test(specifier),
          `${file} imports ${specifier}`,
        ).toBe(true);
      }
    }
  });

  it(
    'builds to JavaScript that plain Node imports from outside the repository',
    async () => {
      const outDir = await mkdtemp(join(tmpdir(), 'mkoba-sdk-'));
      try {
        await run(TSC_BIN, ['-p', join(SDK_DIR, 'tsconfig.build.json'), '--outDir', outDir]);
        const script = `
          const sdk = await import(process.argv[1]);
          const secret = 'whsec_example';
          const body = JSON.stringify({ id: 'evt_1', type: 'transfer.settled', data: {} });
          const event = sdk.verifyWebhook(body, { 'Service-Signature': sdk.signWebhook(body, secret) }, secret);
          console.log(JSON.stringify({ exports: Object.keys(sdk).sort(), id: event.id }));`;
        const { stdout } = await run(process.execPath, [
          '--input-type=module',
          '-e',
          script,
          join(outDir, 'index.js'),
        ]);
        const result = JSON.parse(stdout);
        expect(result.id).toBe('evt_1');
        expect(result.exports).toEqual(
          expect.arrayContaining([
            'API_VERSION',
            'MkobaApiError',
            'MkobaConnectionError',
            'OPERATIONS',
            'WEBHOOK_EVENT_ID_HEADER',
            'WEBHOOK_SIGNATURE_HEADER',
            'WebhookVerificationError',
            'createClient',
            'createWebhookReceiver',
            'paginate',
            'signWebhook',
            'verifyWebhook',
          ]),
        );
        const declarations = await readdir(outDir);
        expect(declarations).toContain('index.d.ts');
      } finally {
        await rm(outDir, { recursive: true, force: true });
      }
    },
    BUILD_TIMEOUT_MS,
  );
});

// ---------------------------------------------------------------------------------------------------------
// The receiver helper

const SECRET = formatWebhookSecret(new Uint8Array(32).fill(7));
const NEXT_SECRET = formatWebhookSecret(new Uint8Array(32).fill(9));
const NOW_MS = Date.UTC(2026, 10, 22, 6, 0, 0);

function eventBody(id = 'evt_01jcz3m5e7x8y9a0b1c2d3e4f5', status = 'settled'): string {
  return JSON.stringify({
    id,
    object: 'event',
    type: `transfer.${status}`,
    created_at: new Date(NOW_MS).toISOString(),
    environment: 'sandbox',
    product: 'mkoba',
    api_version: '2026-11-22',
    data: {
      transfer_id: 'tr_01jcz3m5e7x8y9a0b1c2d3e4f5',
      status,
      rail: 'mobile_money',
      ledger_state: 'posted',
    },
  });
}

/** A delivery as the dispatcher sends it: signed afresh at `atMs`. */
function delivery(body: string, secrets = [SECRET], atMs = NOW_MS): Record<string, string> {
  return {
    'content-type': 'application/json',
    'service-event-id': JSON.parse(body).id,
    'service-signature': signatureHeader(body, secrets, unixSeconds(new Date(atMs))),
  };
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(error: Error): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** An in-memory store that logs every call, with hooks to delay or fail them. */
function memoryStore() {
  const ids = new Set<string>();
  const log: string[] = [];
  const hooks: { has?: () => Promise<void>; add?: () => Promise<void> } = {};
  const store: ProcessedEventStore = {
    async has(id) {
      log.push(`has ${id}`);
      await hooks.has?.();
      return ids.has(id);
    },
    async add(id) {
      log.push(`add ${id}`);
      await hooks.add?.();
      ids.add(id);
    },
  };
  return { store, ids, log, hooks };
}

function receiverWith(
  store: ProcessedEventStore,
  handle: (event: Event) => Promise<void> | void,
  extra: { secrets?: string[]; onError?: (error: unknown, context: { stage: string }) => void } = {},
) {
  return createWebhookReceiver({
    secrets: extra.secrets ?? [SECRET],
    store,
    handle,
    now: () => NOW_MS,
    ...(extra.onError ? { onError: extra.onError } : {}),
  });
}

describe('createWebhookReceiver', () => {
  it('verifies, handles, stores, then answers 200', async () => {
    const { store, ids, log } = memoryStore();
    const handled: Event[] = [];
    const receive = receiverWith(store, (event) => {
      log.push(`handle ${event.id}`);
      handled.push(event);
    });
    const body = eventBody();
    const response = await receive(body, delivery(body));
    expect(response).toEqual({
      status: 200,
      body: { received: true, event_id: 'evt_01jcz3m5e7x8y9a0b1c2d3e4f5', duplicate: false },
    });
    expect(handled).toEqual([JSON.parse(body)]);
    expect(handled[0]?.data.status).toBe('settled');
    expect(log).toEqual([
      'has evt_01jcz3m5e7x8y9a0b1c2d3e4f5',
      'handle evt_01jcz3m5e7x8y9a0b1c2d3e4f5',
      'add evt_01jcz3m5e7x8y9a0b1c2d3e4f5',
    ]);
    expect([...ids]).toEqual(['evt_01jcz3m5e7x8y9a0b1c2d3e4f5']);
  });

  it('answers a redelivery of a stored event 200 without processing it again', async () => {
    const { store } = memoryStore();
    const handle = vi.fn();
    const receive = receiverWith(store, handle);
    const body = eventBody();
    expect((await receive(body, delivery(body))).body).toMatchObject({ duplicate: false });
    // The retry is signed afresh, a minute later.
    const retry = await receive(body, delivery(body, [SECRET], NOW_MS + 60_000));
    expect(retry).toEqual({
      status: 200,
      body: { received: true, event_id: 'evt_01jcz3m5e7x8y9a0b1c2d3e4f5', duplicate: true },
    });
    expect(handle).toHaveBeenCalledTimes(1);
  });

  it('verifies first: an unsigned, forged, tampered or stale delivery touches neither store nor handler', async () => {
    const { store, log } = memoryStore();
    const handle = vi.fn();
    const errors: string[] = [];
    const receive = receiverWith(store, handle, { onError: (_e, context) => errors.push(context.stage) });
    const body = eventBody();
    const cases: [Record<string, string>, string, number, string][] = [
      [{ 'content-type': 'application/json' }, body, 400, 'missing_header'],
      [{ 'service-signature': 'v1=abc' }, body, 400, 'malformed_header'],
      [delivery(body, [NEXT_SECRET]), body, 401, 'no_matching_signature'],
      [delivery(body), body.replace('settled', 'failed'), 401, 'no_matching_signature'],
      [delivery(body, [SECRET], NOW_MS - 301_000), body, 401, 'timestamp_outside_tolerance'],
      [delivery(body, [SECRET], NOW_MS + 301_000), body, 401, 'timestamp_outside_tolerance'],
      [{ ...delivery(body), 'service-event-id': 'evt_other' }, body, 400, 'invalid_payload'],
    ];
    for (const [headers, received, status, reason] of cases) {
      const response = await receive(received, headers);
      expect(response.status, reason).toBe(status);
      expect(response.body).toMatchObject({ error: reason });
    }
    expect(log).toEqual([]);
    expect(handle).not.toHaveBeenCalled();
    expect(errors).toEqual(cases.map(() => 'verify'));
  });

  it('accepts either secret during a rotation', async () => {
    const { store } = memoryStore();
    const receive = receiverWith(store, () => {}, { secrets: [SECRET, NEXT_SECRET] });
    const first = eventBody('evt_01jcz3m5e7x8y9a0b1c2d3e4f1');
    const second = eventBody('evt_01jcz3m5e7x8y9a0b1c2d3e4f2');
    const third = eventBody('evt_01jcz3m5e7x8y9a0b1c2d3e4f3');
    expect((await receive(first, delivery(first, [SECRET]))).status).toBe(200);
    expect((await receive(second, delivery(second, [SECRET, NEXT_SECRET]))).status).toBe(200);
    expect((await receive(third, delivery(third, [NEXT_SECRET]))).status).toBe(200);
  });

  it('answers 2xx only after the store call resolves', async () => {
    const { store, ids, hooks } = memoryStore();
    const adding = deferred();
    hooks.add = () => adding.promise;
    const receive = receiverWith(store, () => {});
    const body = eventBody();
    let answered: WebhookReceiverResponse | undefined;
    const pending = receive(body, delivery(body)).then((response) => {
      answered = response;
      return response;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toBeUndefined();
    expect(ids.size).toBe(0);
    adding.resolve();
    expect((await pending).status).toBe(200);
    expect(ids.has('evt_01jcz3m5e7x8y9a0b1c2d3e4f5')).toBe(true);
  });

  it('answers 500 when the handler fails, stores nothing, and processes the retry', async () => {
    const { store, ids } = memoryStore();
    let failures = 1;
    const handle = vi.fn(async () => {
      if (failures-- > 0) throw new Error('database down');
    });
    const stages: string[] = [];
    const receive = receiverWith(store, handle, { onError: (_e, context) => stages.push(context.stage) });
    const body = eventBody();
    const failed = await receive(body, delivery(body));
    expect(failed).toEqual({ status: 500, body: { error: 'handler_failed', message: expect.any(String) } });
    expect(JSON.stringify(failed.body)).not.toContain('database down');
    expect(ids.size).toBe(0);
    expect(stages).toEqual(['handle']);
    const retried = await receive(body, delivery(body, [SECRET], NOW_MS + 30_000));
    expect(retried.status).toBe(200);
    expect(handle).toHaveBeenCalledTimes(2);
    expect(ids.size).toBe(1);
  });

  it('answers 500 when the store fails, before or after handling, so the sender retries', async () => {
    const body = eventBody();
    const before = memoryStore();
    before.hooks.has = () => Promise.reject(new Error('store down'));
    const notCalled = vi.fn();
    expect(await receiverWith(before.store, notCalled)(body, delivery(body))).toMatchObject({
      status: 500,
      body: { error: 'store_failed' },
    });
    expect(notCalled).not.toHaveBeenCalled();

    const after = memoryStore();
    after.hooks.add = () => Promise.reject(new Error('store down'));
    const handle = vi.fn();
    expect(await receiverWith(after.store, handle)(body, delivery(body))).toMatchObject({
      status: 500,
      body: { error: 'store_failed' },
    });
    expect(handle).toHaveBeenCalledTimes(1);
    expect(after.ids.size).toBe(0);
  });

  it('processes concurrent deliveries of one event once, and of different events in parallel', async () => {
    const { store } = memoryStore();
    const gate = deferred();
    const handled: string[] = [];
    const receive = receiverWith(store, async (event) => {
      handled.push(event.id);
      await gate.promise;
    });
    const a = eventBody('evt_01jcz3m5e7x8y9a0b1c2d3e4fa');
    const b = eventBody('evt_01jcz3m5e7x8y9a0b1c2d3e4fb');
    const responses = [
      receive(a, delivery(a)),
      receive(a, delivery(a, [SECRET], NOW_MS + 1000)),
      receive(b, delivery(b)),
      receive(a, delivery(a, [SECRET], NOW_MS + 2000)),
    ];
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(handled.sort()).toEqual(['evt_01jcz3m5e7x8y9a0b1c2d3e4fa', 'evt_01jcz3m5e7x8y9a0b1c2d3e4fb']);
    gate.resolve();
    const bodies = (await Promise.all(responses)).map((r) => r.body);
    expect(bodies.map((body) => ('duplicate' in body ? body.duplicate : body.error))).toEqual([
      false,
      true,
      false,
      true,
    ]);
    expect(handled).toHaveLength(2);
  });

  it('refuses to start without a secret', () => {
    const { store } = memoryStore();
    expect(() => createWebhookReceiver({ secrets: [], store, handle: () => {} })).toThrow(TypeError);
    expect(() => createWebhookReceiver({ secrets: '', store, handle: () => {} })).toThrow(TypeError);
  });
});

// ---------------------------------------------------------------------------------------------------------
// The client's HTTP behaviour, against a scripted fetch

interface Call {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const type = status >= 400 ? 'application/problem+json' : 'application/json';
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': type, ...headers } });
}

function problem(status: number, code: string, extra: Record<string, unknown> = {}) {
  return {
    type: `urn:mkoba:error:${code}`,
    title: code,
    status,
    detail: `detail of ${code}`,
    code,
    errors: [],
    request_id: 'req_01jcz3m5e7x8y9a0b1c2d3e4f5',
    ...extra,
  };
}

/** A fetch that answers from a script, one entry per call; an Error entry is thrown as a network failure. */
function scriptedFetch(script: (Response | Error | 'hang')[]) {
  const calls: Call[] = [];
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    calls.push({
      url: String(input),
      method: init?.method ?? 'GET',
      headers,
      body: init?.body as string | undefined,
    });
    const next = script.shift();
    if (next === undefined) throw new Error('script exhausted');
    if (next === 'hang') {
      return new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      });
    }
    if (next instanceof Error) throw next;
    return next;
  }) as typeof fetch;
  return { calls, fetchImpl };
}

describe('the client over HTTP (scripted)', () => {
  const transferLike = { id: 'tr_01jcz3m5e7x8y9a0b1c2d3e4f5', object: 'transfer' };

  it('sends the key, JSON and an Idempotency-Key on POST; none of the latter two on GET', async () => {
    const { calls, fetchImpl } = scriptedFetch([json(201, transferLike), json(200, transferLike)]);
    const client = createClient({
      baseUrl: 'https://api.example.test/v1/',
      apiKey: API_KEY,
      fetch: fetchImpl,
    });
    await client.createTransfer({
      source: UNKNOWN_WALLET,
      destination: UNKNOWN_WALLET,
      amount: '1.00',
      currency: 'KES',
    });
    await client.getTransfer('tr_01jcz3m5e7x8y9a0b1c2d3e4f5');
    const [post, get] = calls as [Call, Call];
    expect(post.url).toBe('https://api.example.test/v1/transfers');
    expect(post.method).toBe('POST');
    expect(post.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(post.headers['content-type']).toBe('application/json');
    expect(post.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(post.body as string)).toEqual({
      source: UNKNOWN_WALLET,
      destination: UNKNOWN_WALLET,
      amount: '1.00',
      currency: 'KES',
    });
    expect(get.url).toBe('https://api.example.test/v1/transfers/tr_01jcz3m5e7x8y9a0b1c2d3e4f5');
    expect(get.headers['idempotency-key']).toBeUndefined();
    expect(get.headers['content-type']).toBeUndefined();
    expect(get.body).toBeUndefined();
  });

  it('builds query strings, with dates as RFC 3339, and encodes path parameters', async () => {
    const page = { object: 'list', data: [], has_more: false, next_cursor: null };
    const { calls, fetchImpl } = scriptedFetch([json(200, page), json(200, transferLike)]);
    const client = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: API_KEY, fetch: fetchImpl });
    await client.listTransfers({
      status: 'settled',
      limit: 5,
      'created[gte]': new Date(NOW_MS),
      starting_after: undefined,
    });
    await client.getTransfer('tr_/../x');
    expect(calls[0]?.url).toBe(
      'http://127.0.0.1:9/v1/transfers?status=settled&limit=5&created%5Bgte%5D=2026-11-22T06%3A00%3A00.000Z',
    );
    expect(calls[1]?.url).toBe('http://127.0.0.1:9/v1/transfers/tr_%2F..%2Fx');
  });

  it('retries a 503 with the same Idempotency-Key, and uses the one given', async () => {
    const { calls, fetchImpl } = scriptedFetch([
      json(503, problem(503, 'service_unavailable'), { 'retry-after': '0' }),
      json(201, transferLike),
    ]);
    const client = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: API_KEY, fetch: fetchImpl });
    const body = {
      source: UNKNOWN_WALLET,
      destination: UNKNOWN_WALLET,
      amount: '1.00',
      currency: 'KES',
    } as const;
    expect((await client.createTransfer(body, { idempotencyKey: 'order-7' })).id).toBe(transferLike.id);
    expect(calls.map((c) => c.headers['idempotency-key'])).toEqual(['order-7', 'order-7']);
  });

  it('retries 409 idempotency_key_in_flight after Retry-After, but not other conflicts or 4xx', async () => {
    const inFlight = scriptedFetch([
      json(409, problem(409, 'idempotency_key_in_flight'), { 'retry-after': '0' }),
      json(200, transferLike),
    ]);
    const client = createClient({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: API_KEY,
      fetch: inFlight.fetchImpl,
    });
    await client.cancelTransfer('tr_01jcz3m5e7x8y9a0b1c2d3e4f5');
    expect(inFlight.calls).toHaveLength(2);
    expect(inFlight.calls[0]?.headers['idempotency-key']).toBe(inFlight.calls[1]?.headers['idempotency-key']);

    for (const [status, code] of [
      [409, 'invalid_state_transition'],
      [422, 'insufficient_funds'],
      [400, 'validation_error'],
    ] as const) {
      const once = scriptedFetch([json(status, problem(status, code)), json(200, transferLike)]);
      const c = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: API_KEY, fetch: once.fetchImpl });
      await expect(c.cancelTransfer('tr_01jcz3m5e7x8y9a0b1c2d3e4f5')).rejects.toMatchObject({ status, code });
      expect(once.calls).toHaveLength(1);
    }
  });

  it('gives up when Retry-After is too long to wait', async () => {
    const { calls, fetchImpl } = scriptedFetch([
      json(429, problem(429, 'rate_limited'), { 'retry-after': '60' }),
      json(200, transferLike),
    ]);
    const client = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: API_KEY, fetch: fetchImpl });
    await expect(client.getTransfer('tr_01jcz3m5e7x8y9a0b1c2d3e4f5')).rejects.toMatchObject({
      code: 'rate_limited',
      retryAfterSeconds: 60,
    });
    expect(calls).toHaveLength(1);
  });

  it('retries network failures, then throws MkobaConnectionError', async () => {
    const { calls, fetchImpl } = scriptedFetch([
      new TypeError('fetch failed'),
      new TypeError('fetch failed'),
    ]);
    const client = createClient({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: API_KEY,
      fetch: fetchImpl,
      maxRetries: 1,
    });
    const error = await client.getTransfer('tr_01jcz3m5e7x8y9a0b1c2d3e4f5').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MkobaConnectionError);
    expect((error as MkobaConnectionError).timedOut).toBe(false);
    expect((error as Error).message).toMatch(/fetch failed/);
    expect(calls).toHaveLength(2);
  });

  it('times out an attempt, and stops at once when the caller aborts', async () => {
    const slow = scriptedFetch(['hang']);
    const client = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: API_KEY, fetch: slow.fetchImpl });
    const error = await client
      .getTransfer('tr_01jcz3m5e7x8y9a0b1c2d3e4f5', { timeoutMs: 30, maxRetries: 0 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MkobaConnectionError);
    expect((error as MkobaConnectionError).timedOut).toBe(true);

    const aborted = scriptedFetch(['hang', json(200, transferLike)]);
    const c = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: API_KEY, fetch: aborted.fetchImpl });
    const controller = new AbortController();
    const pending = c.getTransfer('tr_01jcz3m5e7x8y9a0b1c2d3e4f5', { signal: controller.signal });
    controller.abort(new Error('caller gave up'));
    await expect(pending).rejects.toThrow('caller gave up');
    expect(aborted.calls).toHaveLength(1);
  });

  it('reports an answer that is not a problem document with its status and request id', async () => {
    const { fetchImpl } = scriptedFetch([
      new Response('<html>Bad gateway</html>', { status: 502, headers: { 'request-id': 'req_proxy' } }),
    ]);
    const client = createClient({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: API_KEY,
      fetch: fetchImpl,
      maxRetries: 0,
    });
    await expect(client.health()).rejects.toMatchObject({
      name: 'MkobaApiError',
      status: 502,
      code: 'unexpected_response',
      requestId: 'req_proxy',
      problem: null,
    });
  });

  it('paginates through every page', async () => {
    const pages = [
      { object: 'list', data: [{ id: 'tr_3' }, { id: 'tr_2' }], has_more: true, next_cursor: 'tr_2' },
      { object: 'list', data: [{ id: 'tr_1' }], has_more: false, next_cursor: null },
    ];
    const { calls, fetchImpl } = scriptedFetch(pages.map((page) => json(200, page)));
    const client = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: API_KEY, fetch: fetchImpl });
    const ids: string[] = [];
    for await (const transfer of paginate((after) =>
      client.listTransfers({ limit: 2, starting_after: after }),
    )) {
      ids.push(transfer.id);
    }
    expect(ids).toEqual(['tr_3', 'tr_2', 'tr_1']);
    expect(calls.map((c) => new URL(c.url).search)).toEqual(['?limit=2', '?limit=2&starting_after=tr_2']);
  });
});

// ---------------------------------------------------------------------------------------------------------
// The client against a real server

describe.each(BACKENDS)('the client against the API on %s', (backend) => {
  let t: TestApp;
  let client: MkobaClient;
  let baseUrl: string;
  beforeAll(async () => {
    // Its webhook receiver listens on 127.0.0.1: local development's opt-in (MKOBA_WEBHOOK_ALLOW_PRIVATE=1).
    t = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    baseUrl = `http://127.0.0.1:${port}`;
    // The spec's base address includes /v1; the client accepts it either way.
    client = createClient({ baseUrl: `${baseUrl}/v1`, apiKey: t.key, maxRetries: 0 });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function fundedWallet(amount: string) {
    const customer = await client.createCustomer({
      type: 'individual',
      name: 'Amina Njeri',
      phone: '+254712345678',
    });
    const wallet = await client.createWallet({ owner: customer.id, currency: 'KES' });
    if (amount !== '0') await client.sandboxFundWallet(wallet.id, { amount });
    return wallet;
  }

  it('creates a customer and a wallet, funds it and makes a transfer', async () => {
    const customer = await client.createCustomer({
      type: 'business',
      name: 'Duka Ltd',
      metadata: { ref: 'c-1' },
    });
    expect(customer).toMatchObject({
      object: 'customer',
      type: 'business',
      name: 'Duka Ltd',
      kyc_status: expect.any(String),
    });
    expect(await client.getCustomer(customer.id)).toEqual(customer);

    const wallet = await client.createWallet({ owner: customer.id, currency: 'KES' });
    expect(wallet).toMatchObject({ object: 'wallet', owner: customer.id, currency: 'KES', status: 'active' });
    const funding = await client.sandboxFundWallet(wallet.id, { amount: '1000.00' });
    expect(funding).toMatchObject({
      object: 'transfer',
      direction: 'inbound',
      status: 'settled',
      amount: '1000.00',
    });

    const payee = await fundedWallet('0');
    const transfer: Transfer = await client.createTransfer({
      source: wallet.id,
      destination: payee.id,
      amount: '250.50',
      currency: 'KES',
      metadata: { customer_ref: 'INV-7' },
    });
    expect(transfer).toMatchObject({
      rail: 'internal',
      status: 'settled',
      amount: '250.50',
      source: wallet.id,
    });
    expect(await client.getWalletBalance(wallet.id)).toMatchObject({
      available: '749.50',
      current: '749.50',
      pending: '0.00',
    });
    expect((await client.getWallet(payee.id)).balance.available).toBe('250.50');
    expect((await client.getTransfer(transfer.id)).id).toBe(transfer.id);
  });

  it('drives a rail transfer through the sandbox, and reads its events and ledger', async () => {
    const wallet = await fundedWallet('500.00');
    const body = {
      source: wallet.id,
      destination: { type: 'mobile_money', network: 'mpesa', phone: SETTLING_PHONE },
      amount: 120,
      currency: 'KES',
    } as const;
    const transfer = await client.createTransfer(body);
    expect(transfer).toMatchObject({ rail: 'mobile_money', amount: '120.00', ledger_state: 'pending' });
    expect((await client.getWalletBalance(wallet.id)).pending).toBe('120.00');
    const settled = await client.sandboxSettleTransfer(transfer.id);
    expect(settled).toMatchObject({ status: 'settled', ledger_state: 'posted' });
    const returned = await client.sandboxReturnTransfer(transfer.id);
    expect(returned.status).toBe('returned');

    const events = await client.listEvents({ resource: transfer.id, limit: 100 });
    expect(events.object).toBe('list');
    expect(events.data.map((e) => e.type).reverse()).toEqual([
      'transfer.created',
      'transfer.settled',
      'transfer.returned',
    ]);
    const first = events.data[0] as Event;
    expect(await client.getEvent(first.id)).toEqual(first);
    expect(first.data.transfer_id).toBe(transfer.id);

    const entries = await client.listLedgerEntries({ transfer: transfer.id });
    expect(entries.data.map((e) => e.kind).sort()).toEqual(['hold', 'post', 'reversal']);
    const accounts = await client.listLedgerAccounts({ kind: 'wallet', currency: 'KES', limit: 100 });
    expect(accounts.data.some((a) => a.id === wallet.id)).toBe(true);
  });

  it('cancels and fails transfers through their methods', async () => {
    const wallet = await fundedWallet('500.00');
    const payout = () =>
      client.createTransfer({
        source: wallet.id,
        destination: { type: 'mobile_money', network: 'mpesa', phone: SETTLING_PHONE },
        amount: '10.00',
        currency: 'KES',
      });
    expect((await client.cancelTransfer((await payout()).id)).status).toBe('canceled');
    const failed = await client.sandboxFailTransfer((await payout()).id);
    expect(failed).toMatchObject({
      status: 'failed',
      failure_code: 'sandbox_forced_failure',
      ledger_state: 'voided',
    });
    const coded = await client.sandboxFailTransfer((await payout()).id, {
      failure_code: 'recipient_not_registered',
    });
    expect(coded.failure_code).toBe('recipient_not_registered');
    expect((await client.getWalletBalance(wallet.id)).available).toBe('500.00');
  });

  it('lists with filters and pages with paginate', async () => {
    const wallet = await fundedWallet('100.00');
    const payee = await fundedWallet('0');
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push(
        (
          await client.createTransfer({
            source: wallet.id,
            destination: payee.id,
            amount: '1.00',
            currency: 'KES',
          })
        ).id,
      );
    }
    const seen: string[] = [];
    for await (const transfer of paginate((after) =>
      client.listTransfers({ wallet: wallet.id, status: 'settled', limit: 2, starting_after: after }),
    )) {
      seen.push(transfer.id);
    }
    // Newest first; the wallet's funding is one more settled transfer.
    expect(seen.slice(0, 5)).toEqual([...made].reverse());
    expect(seen).toHaveLength(6);
    const owned = await client.listWallets({ owner: wallet.owner });
    expect(owned.data.map((w) => w.id)).toEqual([wallet.id]);
    expect((await client.listCustomers({ limit: 1 })).data).toHaveLength(1);
    const since = await client.listEvents({
      'created[gte]': new Date(Date.now() - 60_000),
      type: 'transfer.settled',
    });
    expect(since.data.length).toBeGreaterThan(0);
  });

  it('makes a POST with an Idempotency-Key once, and replays it', async () => {
    const wallet = await fundedWallet('100.00');
    const payee = await fundedWallet('0');
    const body = { source: wallet.id, destination: payee.id, amount: '40.00', currency: 'KES' } as const;
    const key = `order-${backend}-${Date.now()}`;
    const first = await client.createTransfer(body, { idempotencyKey: key });
    const again = await client.createTransfer(body, { idempotencyKey: key });
    expect(again).toEqual(first);
    expect((await client.getWalletBalance(wallet.id)).available).toBe('60.00');
    const reused = await client
      .createTransfer({ ...body, amount: '41.00' }, { idempotencyKey: key })
      .catch((e: unknown) => e);
    expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
  });

  it('maps problems to MkobaApiError with code, param, status and request id', async () => {
    const wallet = await fundedWallet('10.00');
    const payee = await fundedWallet('0');
    const poor = await client
      .createTransfer({ source: wallet.id, destination: payee.id, amount: '10.01', currency: 'KES' })
      .catch((e: unknown) => e);
    expect(poor).toBeInstanceOf(MkobaApiError);
    expect(poor).toMatchObject({ name: 'MkobaApiError', status: 422, code: 'insufficient_funds' });
    expect((poor as MkobaApiError).requestId).toMatch(/^req_/);
    expect((poor as MkobaApiError).problem?.request_id).toBe((poor as MkobaApiError).requestId);

    const invalid = (await client
      .createWallet({ owner: wallet.owner, currency: 'XYZ' as 'KES' })
      .catch((e: unknown) => e)) as MkobaApiError;
    expect(invalid).toMatchObject({ status: 400, code: 'validation_error', param: 'currency' });
    expect(invalid.errors).toEqual([expect.objectContaining({ param: 'currency', code: 'invalid_value' })]);
    expect(invalid.message).toMatch(/^validation_error: /);

    await expect(client.getWallet(UNKNOWN_WALLET)).rejects.toMatchObject({
      status: 404,
      code: 'resource_missing',
    });
    await expect(client.getWallet('not-a-wallet')).rejects.toMatchObject({ status: 400, param: 'id' });
    const stranger = createClient({ baseUrl, apiKey: API_KEY, maxRetries: 0 });
    await expect(stranger.listWallets()).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
  });

  it('reads health, readiness and metrics', async () => {
    expect((await client.health()).status).toBeTypeOf('string');
    expect((await client.ready()).status).toBeTypeOf('string');
    expect(await client.metrics()).toMatch(/^# (HELP|TYPE) /m);
  });

  it('a subscription made with the client delivers to the receiver helper, across a secret rotation', async () => {
    const deliveries: { raw: string; headers: IncomingHttpHeaders; response: WebhookReceiverResponse }[] = [];
    const { store } = memoryStore();
    const handled: Event[] = [];
    let receive = createWebhookReceiver({ secrets: SECRET, store, handle: () => {} });
    const server = createServer((request, reply) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const response = await receive(raw, request.headers);
        deliveries.push({ raw, headers: request.headers, response });
        reply
          .writeHead(response.status, { 'content-type': 'application/json' })
          .end(JSON.stringify(response.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const settings = { ...defaultWebhookSettings('sandbox'), timeoutMs: 5_000 };
    const dispatch = async () => {
      const options = {
        settings,
        sender: httpWebhookSender({ timeoutMs: 5_000, blockReservedAddresses: false }),
      };
      for (let pass = 0; pass < 10; pass++) if ((await dispatchWebhooksOnce(t.deps, options)) === 0) return;
    };
    try {
      const { port } = server.address() as AddressInfo;
      const subscription = await client.createWebhookSubscription({
        url: `http://127.0.0.1:${port}/hooks/mkoba`,
        events: ['transfer.settled'],
      });
      const secret = subscription.secret as string;
      expect(secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
      receive = createWebhookReceiver({
        secrets: secret,
        store,
        handle: (event) => void handled.push(event),
      });

      const emitted = await client.sandboxEmitEvent({ type: 'transfer.settled' });
      await dispatch();
      expect(handled.map((e) => e.id)).toEqual([emitted.id]);
      const first = deliveries.at(-1);
      expect(first?.response.body).toEqual({ received: true, event_id: emitted.id, duplicate: false });
      expect(first?.headers['content-type']).toMatch(/^application\/json/);
      expect(first?.headers['service-event-id']).toBe(emitted.id);
      // The delivered header is one that Stripe's own verifier accepts.
      const header = first?.headers['service-signature'] as string;
      expect(new Stripe('sk_test_x').webhooks.constructEvent(first?.raw as string, header, secret).id).toBe(
        emitted.id,
      );

      // A redelivery of the same event is answered 200 as a duplicate, and not handled again.
      expect((await client.redeliverEvent(emitted.id)).subscriptions).toBe(1);
      await dispatch();
      expect(deliveries.at(-1)?.response.body).toMatchObject({ event_id: emitted.id, duplicate: true });
      expect(handled).toHaveLength(1);
      const log = await client.listEventDeliveries(emitted.id);
      expect(log.data[0]).toMatchObject({ status: 'succeeded', last_status_code: 200 });

      // Rotation: the next delivery carries a v1 for each secret; a receiver holding either one accepts it.
      const rotated = await client.rotateWebhookSubscriptionSecret(subscription.id);
      const next = rotated.secret as string;
      expect(next).not.toBe(secret);
      receive = createWebhookReceiver({ secrets: next, store, handle: (event) => void handled.push(event) });
      const later = await client.sandboxEmitEvent({ type: 'transfer.settled' });
      await dispatch();
      const rotatedDelivery = deliveries.at(-1);
      expect(rotatedDelivery?.response.status).toBe(200);
      expect(handled.map((e) => e.id)).toEqual([emitted.id, later.id]);
      const rotatedHeader = rotatedDelivery?.headers['service-signature'] as string;
      expect(rotatedHeader.match(/v1=/g)).toHaveLength(2);
      for (const held of [secret, next, [secret, next]]) {
        expect(verifyWebhook(rotatedDelivery?.raw as string, rotatedDelivery?.headers ?? {}, held).id).toBe(
          later.id,
        );
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('an event from the API, signed by the server, passes the receiver as a typed event', async () => {
    const wallet = await fundedWallet('5.00');
    const [event] = (await client.listEvents({ resource: undefined, limit: 1 })).data;
    expect(event).toBeDefined();
    const raw = JSON.stringify(event);
    const { store, ids } = memoryStore();
    const handled: Event[] = [];
    const receive = createWebhookReceiver({
      secrets: SECRET,
      store,
      handle: (e) => {
        handled.push(e);
      },
    });
    const response = await receive(raw, {
      'service-event-id': (event as Event).id,
      'service-signature': signatureHeader(raw, [SECRET], unixSeconds(new Date())),
    });
    expect(response.status).toBe(200);
    expect(handled[0]).toEqual(event);
    expect(ids.has((event as Event).id)).toBe(true);
    expect(wallet.id).toMatch(/^wallet_/);
  });
});
