/**
 * A `mkoba worker` whose every database connection is lost at once, as in a failover, keeps running: its
 * timers alone do not hold a process open, so it must not exit quietly once the last socket closes. When
 * the database is reachable again its LISTEN connection and pool come back by themselves and it delivers
 * the next event. The database is reached through a TCP relay this test cuts and restores.
 */
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { api, startTestApp, TEST_DATABASE_URL, type TestApp } from '../support/harness.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { MkobaProcesses, mkobaEnv, READINESS_LAST_RESORT_MS, waitUntil } from './mkobaProcess.ts';

/** How long the database stays unreachable: past the LISTEN reconnect's pause and a worker pass or two. */
const OUTAGE_MS = 4_000;
const DELIVERY_WAIT_MS = 60_000;

/** A TCP relay to `target` that can drop every connection and refuse new ones, then accept again. */
async function startRelay(target: URL) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        sockets.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    async cut() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
    async restore() {
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

describe.runIf(TEST_DATABASE_URL)('a worker that loses its database', () => {
  const mkoba = new MkobaProcesses();
  let t: TestApp | undefined;
  let receiver: Receiver | undefined;
  let relay: Awaited<ReturnType<typeof startRelay>> | undefined;
  afterAll(async () => {
    await mkoba.killAll();
    relay?.close();
    await receiver?.close();
    await t?.close();
  });

  it('keeps running through the outage and delivers again once it is back', {
    timeout: 2 * READINESS_LAST_RESORT_MS,
  }, async () => {
    t = await startTestApp('postgres', 'sandbox', { allowPrivateWebhookUrls: true });
    const app = t;
    receiver = await startReceiver();
    const subscription = await api(app, 'POST', '/v1/webhook-subscriptions', {
      body: { url: receiver.url, events: ['*'] },
    });
    expect(subscription.statusCode, subscription.body).toBe(201);
    relay = await startRelay(new URL(TEST_DATABASE_URL as string));
    const url = new URL(app.db.url as string);
    url.host = `127.0.0.1:${relay.port}`;
    const worker = await mkoba.start(
      ['worker'],
      mkobaEnv({
        DATABASE_URL: url.toString(),
        MKOBA_WEBHOOK_ALLOW_PRIVATE: '1',
        MKOBA_ENCRYPTION_KEY: app.encryptionKey,
      }),
    );
    await worker.waitForStderr(/mkoba worker running/);

    await relay.cut();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    expect(worker.hasExited(), `${worker.stdout()}${worker.stderr()}`).toBe(false);
    await relay.restore();

    const event = await api(app, 'POST', '/v1/sandbox/events', { body: { type: 'transfer.settled' } });
    expect(event.statusCode, event.body).toBe(201);
    const delivered = () => receiver?.received.some((r) => JSON.parse(r.body).id === event.data.id) === true;
    await waitUntil(delivered, DELIVERY_WAIT_MS, 'the event to be delivered after the outage', worker);
    expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
