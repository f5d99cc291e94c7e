/**
 * The event stream with a real process killed mid-publication: `mkoba serve` builds a backlog while its
 * broker (a nats-server of the test's own) is down, starts publishing it when the broker comes up, and is
 * killed with SIGKILL from inside a subscriber once KILL_AFTER_SEEN messages went by, before its first
 * cursor write (a batch is EVENT_STREAM_BATCH_EVENTS). Started again, it republishes from its cursor once
 * the dead process's lease runs out; JetStream drops the repeats by Nats-Msg-Id, so a consumer reading the
 * stream sees every event once, in the order it was made.
 */
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, describe, expect, it } from 'vitest';
import { EVENT_STREAM_BATCH_EVENTS, EVENT_STREAM_LEASE_MS } from '../../src/modules/eventStream/index.ts';
import { eventually } from '../support/eventually.ts';
import { deleteStream, freePort, OwnNatsServer, readStream, uniqueStreamSettings } from '../support/nats.ts';
import {
  E2E_TEST_TIMEOUT_MS,
  http,
  type MkobaProcess,
  MkobaProcesses,
  mkobaEnv,
  temporaryDataDir,
  waitForBanner,
  withTimeout,
} from './mkobaProcess.ts';

const EVENTS = 260;
const KILL_AFTER_SEEN = 40;
/** The backlog's first pass may wait out the backoff the down broker caused (up to 30 s), then the lease. */
const ARRIVAL_WAIT_MS = 120_000;
const KILL_WAIT_MS = 60_000;
const LIST_PAGE = 100;

/** Every event id of the sandbox organization, oldest first, through GET /v1/events. */
async function listedEventIds(baseUrl: string, key: string): Promise<string[]> {
  const ids: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await http(
      'GET',
      `${baseUrl}/events?limit=${LIST_PAGE}${after ? `&starting_after=${after}` : ''}`,
      key,
    );
    expect(page.status).toBe(200);
    ids.push(...page.body.data.map((e: { id: string }) => e.id));
    if (!page.body.has_more) return ids.reverse();
    after = page.body.next_cursor;
  }
}

describe.runIf(OwnNatsServer.available())('event stream: mkoba serve killed mid-publication', () => {
  const mkoba = new MkobaProcesses();
  const data = temporaryDataDir();
  afterAll(async () => {
    await mkoba.killAll();
    data.remove();
  });

  it('restarts from its cursor; the repeats are dropped by Nats-Msg-Id; each event is in the stream once, in order', {
    timeout: E2E_TEST_TIMEOUT_MS,
  }, async () => {
    expect(KILL_AFTER_SEEN).toBeLessThan(EVENT_STREAM_BATCH_EVENTS);
    const nats = new OwnNatsServer(await freePort());
    const settings = uniqueStreamSettings(nats.url);
    const env = mkobaEnv({
      MKOBA_DATA_DIR: data.dir,
      PORT: '0',
      MKOBA_EVENT_STREAM_URL: nats.url,
      MKOBA_EVENT_STREAM_NAME: settings.stream,
      MKOBA_EVENT_STREAM_SUBJECT_PREFIX: settings.subjectPrefix,
    });
    try {
      const first: MkobaProcess = await mkoba.start(['serve'], env);
      const banner = await waitForBanner(first);
      const key = banner.sandboxApiKey as string;
      const made: string[] = [];
      for (let i = 0; i < EVENTS; i++) {
        const response = await http('POST', `${banner.baseUrl}/sandbox/events`, key, {
          type: i % 2 === 0 ? 'transfer.settled' : 'wallet.frozen',
        });
        expect(response.status).toBe(201);
        made.push(response.body.id);
      }

      await nats.start();
      const watcher = await connect({ servers: settings.servers[0]?.hostPort });
      let seen = 0;
      watcher.subscribe(`${settings.subjectPrefix}.>`, {
        callback: () => {
          seen += 1;
          if (seen === KILL_AFTER_SEEN) first.child.kill('SIGKILL');
        },
      });
      expect(await withTimeout(first.exited, KILL_WAIT_MS, 'the server was not killed')).toMatchObject({
        signal: 'SIGKILL',
      });
      await watcher.close();
      const storedAtKill = (await readStream(nats.url, settings.stream)).length;
      expect(storedAtKill).toBeGreaterThanOrEqual(KILL_AFTER_SEEN);
      expect(storedAtKill).toBeLessThan(EVENTS);

      const second = await mkoba.start(['serve'], env);
      const restarted = await waitForBanner(second);
      const listed = await listedEventIds(restarted.baseUrl, key);
      const messages = await eventually(
        () => readStream(nats.url, settings.stream),
        (m) => m.length >= listed.length,
        ARRIVAL_WAIT_MS + EVENT_STREAM_LEASE_MS,
      );
      const streamed = messages.map((m) => m.body.id);
      expect(new Set(streamed).size).toBe(streamed.length);
      expect(streamed).toEqual(listed);
      expect(streamed.filter((id) => made.includes(id))).toEqual(made);
      for (const m of messages) expect(m.messageId).toBe(m.body.id);

      // The restarted process sent again what the killed one had published without moving its cursor.
      const metrics = await fetch(`${restarted.baseUrl.replace(/\/v1$/, '')}/metrics`);
      const text = await metrics.text();
      const duplicates = Number(
        text.match(/mkoba_event_stream_publishes_total\{outcome="duplicate"\} (\d+)/)?.[1],
      );
      expect(duplicates).toBeGreaterThanOrEqual(KILL_AFTER_SEEN);
      expect(await second.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      expect(second.stderr()).not.toMatch(/event-stream.*failed/);

      // A consumer of the stream reads each event once.
      const reader = await connect({ servers: settings.servers[0]?.hostPort });
      const consumer = await jetstream(reader).consumers.get(settings.stream);
      const consumed: string[] = [];
      for await (const message of await consumer.fetch({ max_messages: streamed.length, expires: 5_000 })) {
        consumed.push(message.json<{ id: string }>().id);
        if (consumed.length === streamed.length) break;
      }
      await reader.close();
      expect(consumed).toEqual(streamed);
    } finally {
      await deleteStream(nats.url, settings.stream).catch(() => {});
      await nats.remove();
    }
  });
});
