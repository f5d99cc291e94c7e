/**
 * A rolling restart with no failed request: three `mkoba serve` processes on one PostgreSQL behind
 * HAProxy (Debian's package, started here with its own configuration on free ports, health-checking
 * /readyz), restarted one after another with SIGTERM while clients send a steady stream of transfers, each
 * under its own Idempotency-Key. Every request gets its 201; every acknowledged transfer exists exactly
 * once; a retry under a key returns the first answer; `mkoba ledger verify` is clean. Each process fails
 * readiness first (HAProxy marks it down while it still serves), then stops within its bound.
 *
 * HAProxy retries only what never reached a server (a refused connection, its default `retry-on
 * conn-failure`): no answer a server gave, and no request a server may have started, is sent twice. Its
 * client-side keep-alive (10 s) outlasts the clients' own (fetch's 4 s), so a connection idle between two
 * requests is closed by the client, never under a request it is sending.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SHUTDOWN_GRACE_MS } from '../../src/config.ts';
import { api, startTestApp, TEST_DATABASE_URL, type TestApp } from '../support/harness.ts';
import { fundedWallet } from '../support/ledger.ts';
import {
  type MkobaProcess,
  MkobaProcesses,
  mkobaEnv,
  temporaryDataDir,
  waitForBanner,
  withTimeout,
} from './mkobaProcess.ts';

const HAPROXY = '/usr/sbin/haproxy';
const SERVERS = 3;
/** Clients sending transfers at once, each in a loop, each from its own wallet. */
const CLIENTS = 4;
/** HAProxy's health check: every CHECK_INTERVAL_MS; CHECK_FALLS failures take a server out, two passes put it back. */
const CHECK_INTERVAL_MS = 250;
const CHECK_FALLS = 2;
/** A check slower than this fails: a busy server's /readyz (a database ping) is slow, not down. */
const CHECK_TIMEOUT_MS = 2_000;
/**
 * MKOBA_SHUTDOWN_DRAIN_MS for the servers: the check interval × the failures HAProxy needs, plus an
 * interval, with room for a machine this loaded (docs/OPERATIONS.md gives the rule). HAProxy sees a server
 * down 0.3–0.6 s after its signal, on a quiet machine and beside six busy processes alike; the room is for
 * slower checks still, since a request HAProxy sends as the listener closes gets no answer.
 */
const DRAIN_MS = 4_000;
/** How long a stopping server may take, its drain included: the bound docs/OPERATIONS.md states. */
const STOP_BOUND_MS = DRAIN_MS + SHUTDOWN_GRACE_MS;
/** Bounded waits for HAProxy to see a server up or down, and for a restarted server to listen. */
const STATE_WAIT_MS = 60_000;
/** Load keeps running this long after the last restart, through the new processes. */
const LOAD_AFTER_MS = 1_000;
/** Retries replayed at the end, each under the key of an acknowledged transfer. */
const REPLAYS = 20;
const TEST_TIMEOUT_MS = 240_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function haproxyConfig(front: number, stats: number, backends: number[]): string {
  return `global
  maxconn 512
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  timeout http-keep-alive 10s
  timeout check ${CHECK_TIMEOUT_MS}ms
  retries 3
  option redispatch
frontend api
  bind 127.0.0.1:${front}
  default_backend mkoba
backend mkoba
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server inter ${CHECK_INTERVAL_MS}ms fall ${CHECK_FALLS} rise 2
${backends.map((port, i) => `  server s${i} 127.0.0.1:${port} check`).join('\n')}
listen stats
  bind 127.0.0.1:${stats}
  stats enable
  stats uri /stats
`;
}

/**
 * Each backend server's state as HAProxy sees it (UP, DOWN, ...), from its CSV statistics; none while
 * HAProxy is not listening yet.
 */
async function serverStates(stats: number): Promise<Map<string, string>> {
  let text: string;
  try {
    text = await (await fetch(`http://127.0.0.1:${stats}/stats;csv`)).text();
  } catch {
    return new Map();
  }
  const [header, ...rows] = text.trim().split('\n');
  const columns = (header ?? '').replace(/^# /, '').split(',');
  const at = (name: string) => columns.indexOf(name);
  const states = new Map<string, string>();
  for (const row of rows) {
    const cells = row.split(',');
    if (cells[at('pxname')] === 'mkoba' && /^s\d$/.test(cells[at('svname')] ?? '')) {
      states.set(cells[at('svname')] as string, (cells[at('status')] ?? '').split(' ')[0] as string);
    }
  }
  return states;
}

async function waitForState(stats: number, server: string, state: string): Promise<void> {
  const deadline = Date.now() + STATE_WAIT_MS;
  while ((await serverStates(stats)).get(server) !== state) {
    if (Date.now() > deadline)
      throw new Error(`HAProxy did not see ${server} ${state} in ${STATE_WAIT_MS} ms`);
    await sleep(CHECK_INTERVAL_MS / 4);
  }
}

interface Sent {
  key: string;
  body: Record<string, string>;
  status: number | string;
  id?: string;
  /** The start of an answer other than 201, for the failure message. */
  answer?: string;
}

const ANSWER_EXCERPT_CHARS = 300;

/** Clients each sending transfers one after another until stopped; every request and its answer kept. */
function startLoad(front: number, key: string, pairs: { source: string; target: string }[]) {
  const sent: Sent[] = [];
  let running = true;
  const client = async (pair: { source: string; target: string }) => {
    while (running) {
      const idempotencyKey = `rolling-${randomUUID()}`;
      const body = { source: pair.source, destination: pair.target, amount: '0.01', currency: 'KES' };
      const record: Sent = { key: idempotencyKey, body, status: 'unsent' };
      sent.push(record);
      try {
        const response = await fetch(`http://127.0.0.1:${front}/v1/transfers`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'idempotency-key': idempotencyKey,
          },
          body: JSON.stringify({ ...body, rail: 'internal' }),
          signal: AbortSignal.timeout(STATE_WAIT_MS),
        });
        const text = await response.text();
        record.status = response.status;
        if (response.status === 201) record.id = (JSON.parse(text) as { id: string }).id;
        else record.answer = text.slice(0, ANSWER_EXCERPT_CHARS);
      } catch (error) {
        const cause =
          error instanceof Error ? (error.cause as { code?: string; message?: string }) : undefined;
        record.status = `${String(error)}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''}`;
      }
    }
  };
  const clients = pairs.map(client);
  return {
    sent,
    async stop() {
      running = false;
      await Promise.all(clients);
    },
  };
}

describe.runIf(TEST_DATABASE_URL)('a rolling restart of three servers behind HAProxy', () => {
  const mkoba = new MkobaProcesses();
  const dataDir = temporaryDataDir();
  const haproxyDir = mkdtempSync(path.join(tmpdir(), 'mkoba-haproxy-'));
  let haproxy: ChildProcess | undefined;
  let t: TestApp | undefined;
  afterAll(async () => {
    haproxy?.kill('SIGKILL');
    await mkoba.killAll();
    await t?.close();
    dataDir.remove();
    rmSync(haproxyDir, { recursive: true, force: true });
  });

  it('drops no request, acknowledges each transfer once, and leaves the ledger whole', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const version = spawnSync(HAPROXY, ['-v'], { encoding: 'utf8' });
    expect(version.status, `${HAPROXY} is needed (apt-get install haproxy; .ci/run installs it)`).toBe(0);
    t = await startTestApp('postgres', 'sandbox');
    const app = t;
    const pairs = await Promise.all(
      Array.from({ length: CLIENTS }, async () => ({
        source: await fundedWallet(app, '1000.00'),
        target: await fundedWallet(app, '0'),
      })),
    );
    const url = app.db.url as string;
    const ports = await Promise.all(Array.from({ length: SERVERS }, freePort));
    const [front, stats] = [await freePort(), await freePort()];
    const envFor = (port: number) =>
      mkobaEnv({
        DATABASE_URL: url,
        MKOBA_DATA_DIR: dataDir.dir,
        MKOBA_ENCRYPTION_KEY: app.encryptionKey,
        HOST: '127.0.0.1',
        PORT: String(port),
        MKOBA_SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
        MKOBA_SANDBOX_SIMULATORS: '0',
        // Each process keeps its own buckets; the load is one key's, so a 429 would say nothing of restarts.
        MKOBA_RATE_LIMITS: 'off',
      });
    const startServer = async (port: number) => {
      const server = await mkoba.start(['serve'], envFor(port));
      await waitForBanner(server);
      return server;
    };
    const servers: MkobaProcess[] = await Promise.all(ports.map(startServer));

    const configFile = path.join(haproxyDir, 'haproxy.cfg');
    writeFileSync(configFile, haproxyConfig(front, stats, ports));
    haproxy = spawn(HAPROXY, ['-db', '-f', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
    let haproxyLog = '';
    haproxy.stderr?.on('data', (chunk: Buffer) => {
      haproxyLog += chunk.toString('utf8');
    });
    for (let i = 0; i < SERVERS; i++) {
      await waitForState(stats, `s${i}`, 'UP').catch((error: Error) => {
        throw new Error(`${error.message}\n${haproxyLog}`);
      });
    }

    const loadStartedAt = Date.now();
    const load = startLoad(front, app.key, pairs);
    const stopTimes: number[] = [];
    /** From each SIGTERM to HAProxy showing the server down: the drain must outlast it. */
    const downTimes: number[] = [];
    try {
      for (let i = 0; i < SERVERS; i++) {
        const old = servers[i] as MkobaProcess;
        const port = ports[i] as number;
        const signalledAt = Date.now();
        old.child.kill('SIGTERM');
        await old.waitForStderr(/shutting down/, STATE_WAIT_MS);
        // Readiness fails at once, while the process still serves, and HAProxy takes it out before it exits.
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
        expect(ready.status).toBe(503);
        await waitForState(stats, `s${i}`, 'DOWN');
        downTimes.push(Date.now() - signalledAt);
        expect(old.hasExited()).toBe(false);
        const exit = await withTimeout(old.exited, STOP_BOUND_MS * 2, `server ${i} did not stop`);
        stopTimes.push(Date.now() - signalledAt);
        expect(exit, old.stderr()).toEqual({ code: 0, signal: null });
        expect(old.stderr()).not.toMatch(/shutdown took longer/);
        servers[i] = await startServer(port);
        await waitForState(stats, `s${i}`, 'UP');
      }
      await sleep(LOAD_AFTER_MS);
    } finally {
      await load.stop();
    }

    console.info(
      `rolling restart: ${load.sent.length} transfers in ${Date.now() - loadStartedAt} ms; down after ${downTimes.join(', ')} ms; stops took ${stopTimes.join(', ')} ms`,
    );
    const failed = load.sent.filter((s) => s.status !== 201);
    expect(
      failed.length,
      `${JSON.stringify(failed.slice(0, 3))}; HAProxy saw each server down ${downTimes.join(', ')} ms after its signal (drain ${DRAIN_MS} ms)`,
    ).toBe(0);
    const acknowledged = load.sent.map((s) => s.id as string);
    // Load ran through every restart (each one's drain alone is DRAIN_MS).
    expect(acknowledged.length).toBeGreaterThan(SERVERS * CLIENTS);
    for (const ms of stopTimes) expect(ms).toBeLessThan(STOP_BOUND_MS);

    // Each acknowledged transfer exists once, and no other transfer left these wallets.
    const rows = await app.deps.store.query<{ id: string }>(
      'SELECT id FROM transfers WHERE source_wallet_id = ANY($1::text[])',
      [pairs.map((p) => p.source)],
    );
    expect(rows.map((r) => r.id).sort()).toEqual([...acknowledged].sort());
    expect(new Set(acknowledged).size).toBe(acknowledged.length);
    // A retry under a key returns the first answer.
    for (const s of load.sent.slice(0, REPLAYS)) {
      const replay = await api(app, 'POST', '/v1/transfers', {
        body: { ...s.body, rail: 'internal' },
        headers: { 'idempotency-key': s.key },
      });
      expect(replay.statusCode, replay.body).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.data.id).toBe(s.id);
    }
    for (const p of pairs) {
      // Each transfer is 0.01: the target holds one cent per transfer sent from its source.
      const cents = BigInt(load.sent.filter((s) => s.body.source === p.source).length);
      const balance = await api(app, 'GET', `/v1/wallets/${p.target}/balance`);
      expect(balance.data.available).toBe(`${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`);
    }

    const verified = await mkoba.run(['ledger', 'verify'], envFor(0));
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stderr).toContain('all invariants hold');
    for (const server of servers) expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
