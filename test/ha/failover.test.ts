/**
 * Database failover with nothing lost: a Patroni cluster (etcd, a primary and a synchronous standby of
 * PostgreSQL 15, all Debian's packages, started here on free ports in a temporary directory) behind
 * HAProxy, which sends DATABASE_URL's connections to whichever node Patroni's REST API calls primary and
 * DATABASE_READ_URL's to the standby. Two `mkoba serve` processes and a `mkoba worker` use it, publishing
 * the outbox to a JetStream stream of the test's own (MKOBA_EVENT_STREAM_URL), under a steady load of
 * transfers, each under its own Idempotency-Key, and of lists, with every event subscribed to by a local
 * receiver. Before the load, a list is shown to be the standby's (its replay paused). The primary's
 * postmaster is killed with SIGKILL; Patroni promotes the standby, and the old primary's node stays down.
 *
 * Then: every answer was a 201 or a 503 with Retry-After, none took longer than REQUEST_BOUND_MS; the
 * service wrote again within WRITES_AGAIN_BOUND_MS of the kill; every transfer, retried under its key after
 * a 503, was acknowledged and exists once, whole; a retry under a key returns the first answer; every event
 * of those transfers reached the receiver; `mkoba ledger verify` and `mkoba evidence verify` are clean; and
 * every process listens for notifications on the new primary (its LISTEN connections came back). Lists
 * answered only 200 or 503 with Retry-After through the switch, and with no standby left the primary answers
 * them within LIST_WITHOUT_STANDBY_BOUND_MS. Every event of the outbox is in the stream, in commit order per
 * organization, and the publishers' cursors reached the end with no lease left stale. Last, the lost node's
 * Patroni starts again: it rejoins as a standby, and lists are the standby's again.
 *
 * Run by `npm run test:ha` (vitest.ha.config.ts), not by `npm test`; docs/OPERATIONS.md has the figures.
 */
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { REPLICA_CONNECT_TIMEOUT_MS } from '../../src/config/postgres.ts';
import { deleteStream, TEST_NATS_URL, uniqueStreamSettings } from '../support/nats.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { postgresUserIfRoot, sleep, temporaryDir, waitFor } from './support/daemon.ts';
import { ETCD, type Etcd, startEtcd } from './support/etcd.ts';
import { HAPROXY, inRecovery, type PrimaryProxy, startPrimaryProxy } from './support/haproxy.ts';
import { fundedWallet, type MkobaCluster, startMkobaCluster, subscribe } from './support/mkobaCluster.ts';
import { PATRONI, type PatroniCluster, type PatroniNode, startPatroniCluster } from './support/patroni.ts';
import {
  expectListsFromStandby,
  expectListsWithoutStandby,
  type ListAttempt,
  startListLoad,
} from './support/standbyReads.ts';
import { expectOutboxInStream } from './support/streamCheck.ts';
import { type LoadTransfer, startTransferLoad } from './support/transferLoad.ts';

/** Clients sending transfers at once, each in a loop from its own wallet. */
const CLIENTS = 4;
/** Load before the kill, and after the service writes again. */
const LOAD_BEFORE_KILL_MS = 5_000;
const LOAD_AFTER_RECOVERY_MS = 5_000;
/** No request may take longer than this, through the switch included (docs/OPERATIONS.md). */
const REQUEST_BOUND_MS = 10_000;
/** From the kill to the first transfer acknowledged after it began failing (docs/OPERATIONS.md). */
const WRITES_AGAIN_BOUND_MS = 15_000;
const DELIVERY_WAIT_MS = 60_000;
/** LISTEN connections open again a second after they are lost; generous for a busy machine. */
const LISTEN_WAIT_MS = 30_000;
const PROMOTION_WAIT_MS = 60_000;
/** The old primary's node taken down for good, and HAProxy's standby frontend left with no server. */
const STANDBY_GONE_WAIT_MS = 10_000;
/**
 * A list with no standby left (docs/OPERATIONS.md): the standby frontend refuses at once, and a refused
 * replica is skipped; past the replica's connect time-out the primary answers. A second for a busy machine.
 */
const LIST_WITHOUT_STANDBY_BOUND_MS = REPLICA_CONNECT_TIMEOUT_MS + 1_000;
/** From the end of the load to every event of the outbox in the stream. */
const STREAM_WAIT_MS = 60_000;
/** Every acknowledged transfer that saw a 503 is replayed, and this many others. */
const REPLAYS = 20;
const TEST_TIMEOUT_MS = 300_000;

describe('a Patroni failover under load', () => {
  const owner = postgresUserIfRoot();
  const dir = temporaryDir('mkoba-ha-', owner);
  let etcd: Etcd | undefined;
  let cluster: PatroniCluster | undefined;
  let proxy: PrimaryProxy | undefined;
  let mkoba: MkobaCluster | undefined;
  let receiver: Receiver | undefined;
  let db: pg.Client | undefined;
  const natsUrl = TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
  const stream = uniqueStreamSettings(natsUrl);
  afterAll(async () => {
    await db?.end().catch(() => {});
    await deleteStream(natsUrl, stream.stream).catch(() => {});
    await mkoba?.mkoba.killAll();
    await receiver?.close();
    await proxy?.daemon.stop();
    await cluster?.stop();
    await etcd?.daemon.stop();
    dir.remove();
  });

  it('loses no acknowledged transfer, answers only 201 or 503, and writes again within its bound', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    for (const binary of [ETCD, PATRONI, HAPROXY]) {
      const found = spawnSync(binary, ['--version']).error === undefined;
      expect(
        found,
        `${binary} is needed (apt-get install patroni etcd-server haproxy; .ci/run installs them)`,
      ).toBe(true);
    }
    expect(
      TEST_NATS_URL,
      'a NATS server with JetStream on 127.0.0.1:4222 (.ci/run starts one)',
    ).toBeDefined();
    etcd = await startEtcd(dir.dir);
    cluster = await startPatroniCluster(etcd.endpoint, dir.dir);
    proxy = await startPrimaryProxy(dir.dir, cluster.nodes);
    const databaseUrl = `postgres://postgres@127.0.0.1:${proxy.port}/postgres`;
    const standbyUrl = `postgres://postgres@127.0.0.1:${proxy.standbyPort}/postgres`;
    mkoba = await startMkobaCluster(databaseUrl, `${dir.dir}/mkoba`, {
      DATABASE_READ_URL: standbyUrl,
      MKOBA_EVENT_STREAM_URL: natsUrl,
      MKOBA_EVENT_STREAM_NAME: stream.stream,
      MKOBA_EVENT_STREAM_SUBJECT_PREFIX: stream.subjectPrefix,
    });
    const { servers, apiKey } = mkoba;
    const base = servers[0] as string;
    receiver = await startReceiver();
    const subscription = await subscribe(base, apiKey, receiver.url);
    const pairs = await Promise.all(
      Array.from({ length: CLIENTS }, async () => ({
        source: await fundedWallet(base, apiKey, '1000.00'),
        target: await fundedWallet(base, apiKey, '0'),
      })),
    );

    // Each process's webhook dispatcher and sanctions screening index listen on connections of their own.
    const listensBefore = await listenSessions(databaseUrl);
    expect(listensBefore).toBeGreaterThanOrEqual(mkoba.processes.length);
    // Patroni resumes a paused replay unless in maintenance mode.
    await cluster.maintenance(true);
    await expectListsFromStandby(servers, apiKey, standbyUrl);
    await cluster.maintenance(false);
    const load = startTransferLoad(servers, apiKey, pairs, REQUEST_BOUND_MS);
    const lists = startListLoad(servers, apiKey, REQUEST_BOUND_MS);
    let killedAt = 0;
    try {
      await sleep(LOAD_BEFORE_KILL_MS);
      const primary = await cluster.primary();
      expect(primary?.name).toBe('node0');
      killedAt = Date.now();
      cluster.killPostmaster(primary as NonNullable<typeof primary>);
      await waitFor(
        async () => (await cluster?.primary())?.name === 'node1',
        PROMOTION_WAIT_MS,
        'node1 to be promoted',
        cluster.output,
      );
      const promotedMs = Date.now() - killedAt;
      // The old primary stays down: no standby is left behind the standby frontend.
      const lost = primary as PatroniNode;
      await waitFor(
        async () => {
          cluster?.loseNode(lost);
          return (await inRecovery(proxy?.standbyPort as number)) === undefined;
        },
        STANDBY_GONE_WAIT_MS,
        'no standby behind HAProxy',
      );
      await waitFor(
        () => writesAgainAt(load.transfers, killedAt) !== undefined,
        WRITES_AGAIN_BOUND_MS * 2,
        'a write after the kill',
        () =>
          `${cluster?.output()}\nlast attempts: ${JSON.stringify(
            load.transfers
              .flatMap((t) => t.attempts)
              .slice(-8)
              .map((a) => ({ ...a, startedAt: a.startedAt - killedAt, endedAt: a.endedAt - killedAt })),
          )}`,
      );
      console.info(`failover: Patroni promoted node1 ${promotedMs} ms after the kill`);
      await sleep(LOAD_AFTER_RECOVERY_MS);
    } finally {
      await Promise.all([load.stop(), lists.stop()]);
    }
    // Every process rode through the switch (a crash would show as refused connections below).
    for (const p of mkoba.processes) expect(p.hasExited(), `${p.stdout()}${p.stderr()}`).toBe(false);
    const attempts = load.transfers.flatMap((t) => t.attempts);
    const unavailable = attempts.filter((a) => a.status === 503);
    const writesAgainMs = (writesAgainAt(load.transfers, killedAt) as number) - killedAt;
    console.info(
      `failover: ${load.transfers.length} transfers, ${unavailable.length} answers of 503; writing again ${writesAgainMs} ms after the kill; slowest answer ${Math.max(...attempts.map((a) => a.endedAt - a.startedAt))} ms`,
    );

    // Clients saw only 201, or 503 with Retry-After, and none waited past the bound.
    const other = attempts.filter((a) => a.status !== 201 && !(a.status === 503 && a.retryAfter !== null));
    expect(other, JSON.stringify(other.slice(0, 3))).toEqual([]);
    for (const a of attempts) expect(a.endedAt - a.startedAt).toBeLessThan(REQUEST_BOUND_MS);
    // The load ran into the switch: some requests met it, and were told to come back.
    expect(unavailable.length, 'no request met the switch').toBeGreaterThan(0);
    expect(writesAgainMs).toBeLessThan(WRITES_AGAIN_BOUND_MS);
    expectListsAnswered(lists.attempts, killedAt + writesAgainMs);
    const slowestListMs = await expectListsWithoutStandby(servers, apiKey, LIST_WITHOUT_STANDBY_BOUND_MS);
    // Every transfer was acknowledged in the end, and transfers went through after the switch.
    const acknowledged = load.transfers.map((t) => t.id);
    expect(acknowledged.filter((id) => id === undefined)).toEqual([]);
    expect(
      load.transfers.filter((t) => (t.attempts[0]?.startedAt ?? 0) > killedAt + writesAgainMs).length,
    ).toBeGreaterThan(0);

    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    await expectEachTransferOnceAndWhole(db, load.transfers, pairs);
    await expectReplaysAnswerAsFirst(load.transfers, apiKey);
    await expectEveryEventDelivered(db, receiver, subscription, acknowledged as string[]);
    const streamed = await expectOutboxInStream(
      db,
      { url: natsUrl, stream: stream.stream, prefix: stream.subjectPrefix },
      STREAM_WAIT_MS,
    );
    const failedPasses = mkoba.processes
      .map((p) => `${p.stdout()}${p.stderr()}`.match(/event-stream \(retrying/g)?.length ?? 0)
      .reduce((a, b) => a + b, 0);
    console.info(
      `failover: ${failedPasses} event stream passes failed and were retried; ${lists.attempts.length} lists through the switch (${lists.attempts.filter((a) => a.status === 503).length} answers of 503), slowest ${Math.max(...lists.attempts.map((a) => a.endedAt - a.startedAt))} ms; with no standby the slowest list took ${slowestListMs} ms; ${streamed.events} events in the stream (${streamed.repeats} repeats), the slowest stored ${streamed.slowestPublishMs} ms after its commit`,
    );
    // Every LISTEN connection the processes had on the old primary is back on the new one.
    await waitFor(
      async () => (await listenSessions(databaseUrl)) === listensBefore,
      LISTEN_WAIT_MS,
      `${listensBefore} LISTEN sessions on the new primary`,
    );

    for (const command of [
      ['ledger', 'verify'],
      ['evidence', 'verify'],
    ]) {
      const run = await mkoba.mkoba.run(command, mkoba.env);
      expect(run.code, `${command.join(' ')}: ${run.stdout}${run.stderr}`).toBe(0);
    }
    for (const p of mkoba.processes) expect(p.hasExited(), `${p.stdout()}${p.stderr()}`).toBe(false);

    // The lost node comes back as a standby of the new primary: lists read it again, by themselves.
    const rejoinStartedAt = Date.now();
    await cluster.rejoin(cluster.nodes[0] as PatroniNode);
    const rejoinedMs = Date.now() - rejoinStartedAt;
    await cluster.maintenance(true);
    await expectListsFromStandby(servers, apiKey, standbyUrl);
    await cluster.maintenance(false);
    console.info(`failover: node0 rejoined as a standby ${rejoinedMs} ms after its Patroni started again`);
  });
});

/** Lists answered 200, or 503 with Retry-After, each within the bound; and 200 again once writes were. */
function expectListsAnswered(attempts: ListAttempt[], writingAgainAt: number): void {
  const other = attempts.filter((a) => a.status !== 200 && !(a.status === 503 && a.retryAfter !== null));
  expect(other, JSON.stringify(other.slice(0, 3))).toEqual([]);
  for (const a of attempts) expect(a.endedAt - a.startedAt).toBeLessThan(REQUEST_BOUND_MS);
  expect(attempts.filter((a) => a.status === 200 && a.startedAt > writingAgainAt).length).toBeGreaterThan(0);
}

/** The sessions LISTENing on the primary, counted on a connection of its own. */
async function listenSessions(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const result = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query ILIKE 'LISTEN %' AND state = 'idle'",
    );
    return result.rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/** When the service wrote again: the end of the first 201 to an attempt begun after the kill's first 503. */
function writesAgainAt(transfers: LoadTransfer[], killedAt: number): number | undefined {
  const attempts = transfers.flatMap((t) => t.attempts).filter((a) => a.endedAt >= killedAt);
  const firstUnavailable = Math.min(...attempts.filter((a) => a.status === 503).map((a) => a.endedAt));
  const from = Number.isFinite(firstUnavailable) ? firstUnavailable : killedAt;
  const written = attempts.filter((a) => a.status === 201 && a.startedAt >= from).map((a) => a.endedAt);
  return written.length > 0 ? Math.min(...written) : undefined;
}

/** The load's wallets hold exactly the acknowledged transfers, each once, each with its journal entry. */
async function expectEachTransferOnceAndWhole(
  db: pg.Client,
  transfers: LoadTransfer[],
  pairs: { source: string; target: string }[],
): Promise<void> {
  const acknowledged = transfers.map((t) => t.id as string);
  const rows = await db.query<{ id: string; entries: number }>(
    `SELECT t.id, (SELECT count(*)::int FROM journal_entries j WHERE j.transfer_id = t.id) AS entries
       FROM transfers t WHERE t.source_wallet_id = ANY($1::text[])`,
    [pairs.map((p) => p.source)],
  );
  expect(rows.rows.map((r) => r.id).sort()).toEqual([...acknowledged].sort());
  expect(new Set(acknowledged).size).toBe(acknowledged.length);
  expect(rows.rows.filter((r) => r.entries === 0)).toEqual([]);
  const balances = await db.query<{ wallet: string; cents: string }>(
    `SELECT destination_wallet_id AS wallet, (count(*))::text AS cents FROM transfers
      WHERE source_wallet_id = ANY($1::text[]) GROUP BY destination_wallet_id`,
    [pairs.map((p) => p.source)],
  );
  for (const p of pairs) {
    const sent = transfers.filter((t) => t.body.source === p.source).length;
    expect(balances.rows.find((r) => r.wallet === p.target)?.cents ?? '0').toBe(String(sent));
  }
}

/** A retry under a key gets the first answer: every transfer that saw a 503, and the first REPLAYS others. */
async function expectReplaysAnswerAsFirst(transfers: LoadTransfer[], apiKey: string): Promise<void> {
  const interrupted = transfers.filter((t) => t.attempts.length > 1);
  for (const t of [...interrupted, ...transfers.slice(0, REPLAYS)]) {
    const response = await fetch(`${t.server}/transfers`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        'idempotency-key': t.key,
      },
      body: JSON.stringify(t.body),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    expect(((await response.json()) as { id: string }).id).toBe(t.id);
  }
}

/** Every event of the load's transfers reached the receiver, and no delivery of the subscription is left undone. */
async function expectEveryEventDelivered(
  db: pg.Client,
  receiver: Receiver,
  subscription: string,
  transferIds: string[],
): Promise<void> {
  const undelivered = async () =>
    (
      await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 AND status <> 'succeeded'",
        [subscription],
      )
    ).rows[0]?.n ?? -1;
  await waitFor(async () => (await undelivered()) === 0, DELIVERY_WAIT_MS, 'every delivery to succeed');
  const events = await db.query<{ id: string }>('SELECT id FROM events WHERE resource_id = ANY($1::text[])', [
    transferIds,
  ]);
  expect(events.rows.length).toBeGreaterThanOrEqual(transferIds.length);
  const received = new Set(receiver.received.map((r) => (JSON.parse(r.body) as { id: string }).id));
  expect(events.rows.filter((e) => !received.has(e.id))).toEqual([]);
}
