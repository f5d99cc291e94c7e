/**
 * The event stream against a real NATS JetStream: every event of the outbox published once per organization
 * in commit order, on `<prefix>.<organization id>.<event type>`, with its id as Nats-Msg-Id; nothing lost
 * when the broker stops and comes back (a nats-server of the test's own, with its store directory);
 * a republished event dropped by the server's de-duplication; and a wrong MKOBA_EVENT_STREAM_URL refused
 * at start with the variable named. Process kills are in test/e2e/event-stream.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.ts';
import { ConfigError } from '../src/config/variables.ts';
import { loadConfig } from '../src/config.ts';
import { createServiceMetrics, type ServiceMetrics } from '../src/metrics.ts';
import {
  type EventStreamWorker,
  type PassResult,
  publishPendingEvents,
  startEventStreamPublisher,
} from '../src/modules/eventStream/index.ts';
import { eventually } from './support/eventually.ts';
import { api, BACKENDS, newOrganizationKey, startTestApp, type TestApp } from './support/harness.ts';
import {
  deleteStream,
  freePort,
  OwnNatsServer,
  readStream,
  type StoredMessage,
  TEST_NATS_URL,
  uniqueStreamSettings,
} from './support/nats.ts';

const ARRIVAL_WAIT_MS = 30_000;
const TEST_TIMEOUT_MS = 90_000;
/** Clients writing events at once, each one request after another. */
const CONCURRENT_WRITERS = 6;
const EVENTS_PER_WRITER = 8;
const quietLog = { failed: () => {}, notice: () => {} };

/** Sandbox test events of `key`'s organization, one request at a time (so commit order is request order). */
async function emitEvents(t: TestApp, key: string, count: number): Promise<string[]> {
  const types = ['transfer.settled', 'transfer.failed', 'wallet.frozen'];
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await api(t, 'POST', '/v1/sandbox/events', {
      key,
      body: { type: types[i % types.length] },
    });
    expect(response.statusCode, response.body).toBe(201);
    ids.push(response.data.id as string);
  }
  return ids;
}

/** The organization's events in the outbox's commit order (the seed's among them). */
async function outboxOrder(t: TestApp, organizationId: string): Promise<string[]> {
  const rows = await t.db.store.query<{ id: string }>(
    'SELECT id FROM events WHERE organization_id = $1 ORDER BY transaction_id, id',
    [organizationId],
  );
  return rows.map((r) => r.id);
}

/** `ids` in the order they stand in `all`. */
function inOrderOf(all: readonly string[], ids: readonly string[]): string[] {
  const wanted = new Set(ids);
  return all.filter((id) => wanted.has(id));
}

/** mkoba_event_stream_lag_seconds as a scrape reads it. */
async function lagSeconds(metrics: ServiceMetrics): Promise<number> {
  const text = await metrics.registry.getSingleMetricAsString('mkoba_event_stream_lag_seconds');
  return Number(text.match(/^mkoba_event_stream_lag_seconds (\S+)$/m)?.[1]);
}

/** The events the stream holds for one organization, in stream order. */
function ofOrganization(messages: readonly StoredMessage[], prefix: string, organizationId: string) {
  return messages.filter((m) => m.subject.startsWith(`${prefix}.${organizationId}.`));
}

/** Each message once, its Nats-Msg-Id its event's id, on its organization's and type's subject. */
function expectWellFormed(messages: readonly StoredMessage[], prefix: string) {
  const ids = messages.map((m) => m.body.id);
  expect(new Set(ids).size).toBe(ids.length);
  for (const m of messages) {
    expect(m.messageId).toBe(m.body.id);
    expect(m.subject).toMatch(
      new RegExp(`^${prefix}\\.org_[0-9a-z]+\\.${m.body.type.replaceAll('.', '\\.')}$`),
    );
  }
}

describe('MKOBA_EVENT_STREAM_URL at start-up', () => {
  it('refuses an unparseable URL or another scheme, naming the variable; unset means no stream', () => {
    expect(loadConfig({}).eventStream).toBeUndefined();
    for (const url of ['nats://', 'http://127.0.0.1:4222', 'nats://host:port:x', 'nats://h:4222/path']) {
      expect(() => loadConfig({ MKOBA_EVENT_STREAM_URL: url }), url).toThrow(ConfigError);
    }
    expect(() =>
      loadConfig({ MKOBA_EVENT_STREAM_URL: 'nats://127.0.0.1', MKOBA_EVENT_STREAM_NAME: 'a.b' }),
    ).toThrow(/MKOBA_EVENT_STREAM_NAME/);
    expect(
      loadConfig({ MKOBA_EVENT_STREAM_URL: 'nats://u:p%40ss@10.0.0.1:4223, tls://10.0.0.2' }).eventStream,
    ).toEqual({
      servers: [
        { hostPort: '10.0.0.1:4223', tls: false },
        { hostPort: '10.0.0.2:4222', tls: true },
      ],
      user: 'u',
      pass: 'p@ss',
      stream: 'MKOBA_EVENTS',
      subjectPrefix: 'mkoba',
    });
  });

  it('mkoba serve with a bad URL exits at once with status 2 and one line naming the variable', async () => {
    const lines: string[] = [];
    const saved = process.env.MKOBA_EVENT_STREAM_URL;
    process.env.MKOBA_EVENT_STREAM_URL = 'nats//127.0.0.1:4222';
    try {
      const status = await main(['serve'], { out: () => {}, err: (line) => lines.push(line) });
      expect(status).toBe(2);
    } finally {
      if (saved === undefined) delete process.env.MKOBA_EVENT_STREAM_URL;
      else process.env.MKOBA_EVENT_STREAM_URL = saved;
    }
    expect(lines.join('\n')).toMatch(
      /^mkoba: invalid configuration: MKOBA_EVENT_STREAM_URL: must be nats:\/\//,
    );
  });
});

describe.runIf(TEST_NATS_URL).each(BACKENDS)('event stream on NATS JetStream (%s)', (backend) => {
  const url = TEST_NATS_URL as string;
  const streams: string[] = [];
  afterAll(async () => {
    for (const stream of streams) await deleteStream(url, stream);
  });

  it('publishes every event once per organization, in commit order, creating the stream', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const t = await startTestApp(backend);
    const settings = uniqueStreamSettings(url);
    streams.push(settings.stream);
    const otherKey = await newOrganizationKey(t);
    const other = await api(t, 'GET', '/v1/organization', { key: otherKey });
    const otherId = other.data.id as string;
    let worker: EventStreamWorker | undefined;
    try {
      const before = await emitEvents(t, t.key, 5);
      worker = startEventStreamPublisher(t.deps, settings, quietLog);
      const mine: string[] = [...before];
      const theirs: string[] = [];
      for (let round = 0; round < 5; round++) {
        mine.push(...(await emitEvents(t, t.key, 3)));
        theirs.push(...(await emitEvents(t, otherKey, 2)));
      }
      const expected = [...(await outboxOrder(t, t.organizationId)), ...(await outboxOrder(t, otherId))];
      const messages = await eventually(
        () => readStream(url, settings.stream),
        (m) => m.length >= expected.length,
        ARRIVAL_WAIT_MS,
      );
      expectWellFormed(messages, settings.subjectPrefix);
      // Each organization's events (the seed's too) arrive once, in the order they were committed; the
      // requests, one after another, committed in the order they were made.
      const sandboxIds = ofOrganization(messages, settings.subjectPrefix, t.organizationId).map(
        (m) => m.body.id,
      );
      const otherIds = ofOrganization(messages, settings.subjectPrefix, otherId).map((m) => m.body.id);
      expect(sandboxIds).toEqual(await outboxOrder(t, t.organizationId));
      expect(otherIds).toEqual(await outboxOrder(t, otherId));
      expect(inOrderOf(sandboxIds, mine)).toEqual(mine);
      expect(inOrderOf(otherIds, theirs)).toEqual(theirs);
      expect(messages).toHaveLength(sandboxIds.length + otherIds.length);
      // The body is the webhook envelope.
      const first = messages.find((m) => m.body.id === mine[0]);
      expect(first?.body).toMatchObject({
        object: 'event',
        type: 'transfer.settled',
        environment: 'sandbox',
      });
    } finally {
      await worker?.stop();
      await t.close();
    }
  });

  it('skips nothing while writers commit concurrently, with two publishers at once: the stream holds the outbox, in its order, once', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const t = await startTestApp(backend);
    const settings = uniqueStreamSettings(url);
    streams.push(settings.stream);
    // Two publishers, as two processes run them: the lease gives each organization to one at a time.
    const passes: PassResult[] = [];
    const workers = [1, 2].map(() =>
      startEventStreamPublisher(t.deps, settings, quietLog, (pass) => passes.push(pass)),
    );
    try {
      const made = await Promise.all(
        Array.from({ length: CONCURRENT_WRITERS }, () => emitEvents(t, t.key, EVENTS_PER_WRITER)),
      );
      const expected = await outboxOrder(t, t.organizationId);
      const messages = await eventually(
        () => readStream(url, settings.stream),
        (m) => m.length >= expected.length,
        ARRIVAL_WAIT_MS,
      );
      expectWellFormed(messages, settings.subjectPrefix);
      expect(messages.map((m) => m.body.id)).toEqual(expected);
      for (const ids of made) expect(inOrderOf(expected, ids)).toEqual(ids);
      // Neither sent what the other had published: no repeat even reached the stream.
      expect(passes.reduce((sum, p) => sum + p.duplicates, 0)).toBe(0);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await t.close();
    }
  });

  it('a republished event is dropped by Nats-Msg-Id: a pass from a cursor that never moved stores nothing twice', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const t = await startTestApp(backend);
    const settings = uniqueStreamSettings(url);
    streams.push(settings.stream);
    let worker: EventStreamWorker | undefined;
    try {
      await emitEvents(t, t.key, 6);
      const ids = await outboxOrder(t, t.organizationId);
      worker = startEventStreamPublisher(t.deps, settings, quietLog);
      await eventually(
        () => readStream(url, settings.stream),
        (m) => m.length >= ids.length,
        ARRIVAL_WAIT_MS,
      );
      await worker.stop();
      worker = undefined;
      // What a process killed between the acknowledgements and its cursor write leaves: the cursor behind.
      await t.db.store.query('UPDATE event_stream_cursors SET transaction_id = NULL, event_id = NULL');
      const { connect } = await import('@nats-io/transport-node');
      const { jetstream } = await import('@nats-io/jetstream');
      const connection = await connect({ servers: settings.servers[0]?.hostPort });
      const js = jetstream(connection);
      const result = await publishPendingEvents(
        t.deps,
        { stream: settings.stream, subjectPrefix: settings.subjectPrefix, owner: 'test' },
        {
          async publish(subject, body, messageId) {
            const ack = await js.publish(subject, body, { msgID: messageId });
            return { duplicate: ack.duplicate };
          },
        },
      );
      await connection.close();
      expect(result).toMatchObject({ published: 0, duplicates: ids.length });
      const messages = await readStream(url, settings.stream);
      expect(messages.map((m) => m.body.id)).toEqual(ids);
    } finally {
      await worker?.stop();
      await t.close();
    }
  });

  it.runIf(OwnNatsServer.available())(
    'loses nothing across a broker restart: events made while it is down arrive, in order, once',
    {
      timeout: TEST_TIMEOUT_MS,
    },
    async () => {
      const nats = new OwnNatsServer(await freePort());
      await nats.start();
      const t = await startTestApp(backend);
      const settings = uniqueStreamSettings(nats.url);
      const failures: unknown[] = [];
      let worker: EventStreamWorker | undefined;
      try {
        worker = startEventStreamPublisher(t.deps, settings, {
          failed: (e) => failures.push(e),
          notice: () => {},
        });
        const ids = await emitEvents(t, t.key, 5);
        const published = (await outboxOrder(t, t.organizationId)).length;
        await eventually(
          () => readStream(nats.url, settings.stream),
          (m) => m.length >= published,
          ARRIVAL_WAIT_MS,
        );

        await nats.stop();
        ids.push(...(await emitEvents(t, t.key, 10)));
        // The publisher fails while the broker is down, and keeps the events.
        await eventually(
          async () => failures.length,
          (n) => n > 0,
          ARRIVAL_WAIT_MS,
        );
        const metrics = createServiceMetrics(t.db.store, () => new Date(), { eventStream: settings.stream });
        expect(await lagSeconds(metrics)).toBeGreaterThan(0);
        await nats.start();

        const all = await outboxOrder(t, t.organizationId);
        const messages = await eventually(
          () => readStream(nats.url, settings.stream),
          (m) => m.length >= all.length,
          ARRIVAL_WAIT_MS,
        );
        expectWellFormed(messages, settings.subjectPrefix);
        expect(messages.map((m) => m.body.id)).toEqual(all);
        expect(inOrderOf(all, ids)).toEqual(ids);
        expect(
          await eventually(
            () => lagSeconds(metrics),
            (lag) => lag === 0,
            ARRIVAL_WAIT_MS,
          ),
        ).toBe(0);
      } finally {
        await worker?.stop();
        await t.close();
        await nats.remove();
      }
    },
  );
});
