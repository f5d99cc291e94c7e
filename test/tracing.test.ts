/**
 * OpenTelemetry traces, exported over OTLP/HTTP (JSON) to a receiver this test runs: a transfer request's
 * span tree (the request, its writer command and batch, the transaction and its statements), a payout's
 * calls to the M-Pesa simulator and a webhook delivery as client spans, the standard variables honoured,
 * and no key, token, credential, phone number or name in any exported attribute. With no endpoint set,
 * nothing is loaded and the store is left as it is.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultWebhookSettings } from '../src/config/webhooks.ts';
import { railPartnerDirectory } from '../src/modules/railPartners/useCases/directory.ts';
import { runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import { dispatchWebhooksOnce } from '../src/modules/webhooks/workers/dispatcher.ts';
import { httpWebhookSender } from '../src/modules/webhooks/workers/httpSender.ts';
import {
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  type DarajaSimulator,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';
import { tracedStore } from '../src/store/tracedStore.ts';
import { startProcessTracing, tracesRequested } from '../src/telemetry/start.ts';
import { activeTracing } from '../src/telemetry/tracing.ts';
import { configureSimulatedDaraja } from './support/daraja.ts';
import { api, BACKENDS, createCustomer, startTestApp, type TestApp } from './support/harness.ts';
import { mobileMoney } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';
import { type Receiver, startReceiver } from './support/receiver.ts';

/** Personal data the test's requests carry: none of it may reach a span. */
const CUSTOMER_NAME = 'Amani Wanjiru Otieno';
const PHONE = '+254700000000';
const SERVICE_NAME = 'mkoba-trace-test';
/** Requests sent at once, so that some share a writer batch. */
const CONCURRENT_TRANSFERS = 4;

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  links?: { traceId: string; spanId: string; attributes?: OtlpAttribute[] }[];
  status?: { code?: number; message?: string };
}
interface ExportedSpan extends OtlpSpan {
  resource: OtlpAttribute[];
  values: Record<string, string | number | boolean | undefined>;
}

/** An OTLP/HTTP receiver: takes JSON exports at /v1/traces and keeps every span with its resource. */
async function startOtlpReceiver(): Promise<{ url: string; spans: ExportedSpan[]; close(): Promise<void> }> {
  const spans: ExportedSpan[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      if (request.url !== '/v1/traces' || !/json/.test(request.headers['content-type'] ?? '')) {
        response.writeHead(415).end();
        return;
      }
      const exported = JSON.parse(body) as {
        resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
      };
      for (const resourceSpans of exported.resourceSpans) {
        for (const scope of resourceSpans.scopeSpans) {
          for (const span of scope.spans) {
            spans.push({ ...span, resource: resourceSpans.resource.attributes, values: valuesOf(span) });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function attributeValue(value: OtlpValue): string | number | boolean | undefined {
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue;
}

function valuesOf(span: OtlpSpan): ExportedSpan['values'] {
  return Object.fromEntries((span.attributes ?? []).map((a) => [a.key, attributeValue(a.value)]));
}

describe('tracing off', () => {
  it('loads nothing and leaves the store as it is without an OTLP endpoint', async () => {
    expect(tracesRequested({})).toBe(false);
    expect(
      tracesRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBe(false);
    expect(tracesRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(
      true,
    );
    const stop = await startProcessTracing({});
    expect(activeTracing()).toBeUndefined();
    const t = await startTestApp('pglite');
    try {
      expect(tracedStore(t.db.store)).toBe(t.db.store);
      expect(t.deps.store).toBe(t.db.store);
    } finally {
      await t.close();
      await stop();
    }
  });
});

describe.each(BACKENDS)('traces over OTLP on %s', (backend) => {
  let t: TestApp;
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let hooks: Receiver;
  let sim: DarajaSimulator;
  let stopTracing: () => Promise<void>;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url;
    process.env.OTEL_SERVICE_NAME = SERVICE_NAME;
    stopTracing = await startProcessTracing(process.env);
    [t, hooks, sim] = await Promise.all([
      startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true }),
      startReceiver(),
      startDarajaSimulator(),
    ]);
    // The partner's callbacks need an address to come back to.
    t.deps.publicUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t.close();
    await stopTracing();
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_SERVICE_NAME;
    await Promise.all([otlp.close(), hooks.close(), sim.close()]);
  });

  /** A wallet of a named customer, funded; spans of everything done so far are dropped. */
  async function fundedWalletOf(key: string, amount: string): Promise<string> {
    const owner = await createCustomer(t, key, CUSTOMER_NAME);
    const wallet = await api(t, 'POST', '/v1/wallets', { key, body: { owner, currency: 'KES' } });
    expect(wallet.statusCode, wallet.body).toBe(201);
    const funded = await api(t, 'POST', `/v1/sandbox/wallets/${wallet.data.id}/fund`, {
      key,
      body: { amount },
    });
    expect(funded.statusCode, funded.body).toBe(201);
    return wallet.data.id as string;
  }

  async function exported(): Promise<ExportedSpan[]> {
    await activeTracing()?.flush();
    return otlp.spans;
  }

  const childrenOf = (spans: ExportedSpan[], parent: ExportedSpan) =>
    spans.filter((s) => s.traceId === parent.traceId && s.parentSpanId === parent.spanId);

  it('exports a transfer request as a server span over its writer batch, transaction and statements', async () => {
    const wallet = await fundedWalletOf(t.key, '1000.00');
    const created = await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney(PHONE), amount: '25.00', currency: 'KES' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const spans = await exported();

    const requests = spans.filter((s) => s.name === 'POST /v1/transfers');
    expect(requests).toHaveLength(1);
    const request = requests[0] as ExportedSpan;
    expect(request.kind).toBe(2); // SERVER
    expect(request.parentSpanId ?? '').toBe('');
    expect(request.values).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/transfers',
      'http.response.status_code': 201,
    });
    expect(request.resource).toContainEqual({ key: 'service.name', value: { stringValue: SERVICE_NAME } });

    // The request's own reads (its key, the wallet) are statements under it.
    const direct = childrenOf(spans, request);
    expect(direct.some((s) => s.values['db.system.name'] !== undefined)).toBe(true);
    const command = direct.find((s) => s.name === 'ledger writer command');
    expect(command?.values['mkoba.ledger.command']).toBe('transfer');
    // Alone in its batch: the batch is the command's child, the transaction the batch's.
    const batch = childrenOf(spans, command as ExportedSpan).find((s) => s.name === 'ledger writer batch');
    expect(batch?.values['mkoba.ledger.batch.commands']).toBe(1);
    const transaction = childrenOf(spans, batch as ExportedSpan).find((s) => s.name === 'TRANSACTION');
    expect(transaction).toBeDefined();
    const statements = childrenOf(spans, transaction as ExportedSpan);
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      expect(statement.kind).toBe(3); // CLIENT
      expect(statement.values['db.system.name']).toBe(backend === 'postgres' ? 'postgresql' : 'pglite');
      expect(statement.values['db.operation.name']).toMatch(/^[A-Z]+$/);
      expect(Object.keys(statement.values).some((key) => key.startsWith('db.query'))).toBe(false);
    }
    expect(statements.some((s) => s.values['db.collection.name'] !== undefined)).toBe(true);
  });

  it('links a batch that serves several requests to each of their command spans', async () => {
    // One source wallet: its transfers go to one writer lane, where those arriving together share a batch.
    const source = await fundedWalletOf(t.key, '100.00');
    const before = (await exported()).length;
    const answers = await Promise.all(
      Array.from({ length: CONCURRENT_TRANSFERS }, () =>
        api(t, 'POST', '/v1/transfers', {
          body: { source, destination: mobileMoney(PHONE), amount: '5.00', currency: 'KES' },
        }),
      ),
    );
    for (const answer of answers) expect(answer.statusCode, answer.body).toBe(201);
    const spans = (await exported()).slice(before);
    const batches = spans.filter((s) => s.name === 'ledger writer batch');
    const commands = spans.filter((s) => s.name === 'ledger writer command');
    expect(commands).toHaveLength(CONCURRENT_TRANSFERS);
    // Each command's batch is its child when it ran alone, or links to it when it ran with others.
    for (const command of commands) {
      const child = batches.find((b) => b.traceId === command.traceId && b.parentSpanId === command.spanId);
      const linking = batches.find((b) => b.links?.some((l) => l.spanId === command.spanId));
      expect(child !== undefined || linking !== undefined).toBe(true);
      if (linking) {
        expect(linking.parentSpanId ?? '').toBe('');
        expect(linking.values['mkoba.ledger.batch.commands']).toBe(linking.links?.length);
      }
    }
    expect(batches.some((b) => (b.links?.length ?? 0) >= 2)).toBe(true);
  });

  it('exports partner calls and webhook deliveries as client spans with host and status only', async () => {
    const org = await newOrganization(t);
    await configureSimulatedDaraja(t, org.key, sim);
    const subscription = await api(t, 'POST', '/v1/webhook-subscriptions', {
      key: org.key,
      body: { url: hooks.url, events: ['transfer.created'] },
    });
    expect(subscription.statusCode, subscription.body).toBe(201);
    const wallet = await fundedWalletOf(org.key, '500.00');
    const payout = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: { source: wallet, destination: mobileMoney(PHONE), amount: '120.00', currency: 'KES' },
    });
    expect(payout.statusCode, payout.body).toBe(201);
    await runRailWorkerOnce(t.deps, (transfer) => railPartnerDirectory(t.deps).forTransfer(transfer));
    const settings = { ...defaultWebhookSettings('sandbox'), timeoutMs: 10_000 };
    const sender = httpWebhookSender({ timeoutMs: settings.timeoutMs, blockReservedAddresses: false });
    for (let pass = 0; pass < 5; pass++) {
      if ((await dispatchWebhooksOnce(t.deps, { settings, sender, random: () => 0.5 })) === 0) break;
    }
    expect(hooks.received.length).toBeGreaterThan(0);
    const spans = await exported();

    const simPort = Number(new URL(sim.url).port);
    const partnerCalls = spans.filter((s) => s.kind === 3 && s.values['server.port'] === simPort);
    expect(partnerCalls.length).toBeGreaterThan(0);
    for (const call of partnerCalls) {
      expect(call.name).toMatch(/^(GET|POST) 127\.0\.0\.1$/);
      expect(call.values).toMatchObject({ 'server.address': '127.0.0.1', 'http.response.status_code': 200 });
    }
    const hookPort = Number(new URL(hooks.url).port);
    const deliveries = spans.filter((s) => s.kind === 3 && s.values['server.port'] === hookPort);
    expect(deliveries.length).toBeGreaterThan(0);
    expect(deliveries[0]).toMatchObject({ name: 'POST 127.0.0.1' });
    expect(deliveries[0]?.values['http.response.status_code']).toBe(200);
    // What the subscription was created with (its secret) and what the partner was configured with.
    forbidden.push(subscription.data.secret as string, org.key);
  });

  const forbidden: string[] = [];

  it('puts no key, token, credential, phone number or name in any exported span', async () => {
    const spans = await exported();
    expect(spans.length).toBeGreaterThan(0);
    const credentials = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS;
    const secrets = [
      ...forbidden,
      t.key,
      credentials.consumerKey,
      credentials.consumerSecret,
      credentials.securityCredential,
      credentials.passkey,
      credentials.initiatorPassword,
      Buffer.from(`${credentials.consumerKey}:${credentials.consumerSecret}`).toString('base64'),
      CUSTOMER_NAME,
      'Amani',
      'Wanjiru',
      PHONE,
      PHONE.slice(1),
      PHONE.slice(4),
    ];
    const lower = (text: string) => text.toLowerCase();
    for (const span of spans) {
      const texts = [
        span.name,
        span.status?.message ?? '',
        ...[
          ...(span.attributes ?? []),
          ...span.resource,
          ...(span.links ?? []).flatMap((l) => l.attributes ?? []),
        ].flatMap((a) => [a.key, String(attributeValue(a.value) ?? '')]),
      ];
      for (const text of texts) {
        for (const secret of secrets) expect(text, `${span.name}: ${text}`).not.toContain(secret);
        // A table's name may say `secrets`; a header, a scheme, a key's prefix or a password may not appear.
        expect(lower(text)).not.toMatch(/authorization|bearer|basic |sk_(sandbox|pilot|live)_|password/);
      }
      // No URL path or query: a partner's paths and a receiver's query can carry tokens.
      expect(Object.keys(span.values).filter((key) => /^url\.(full|path|query)$/.test(key))).toEqual([]);
    }
  });
});
