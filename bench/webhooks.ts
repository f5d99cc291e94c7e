/**
 * The webhook case of `npm run bench`: events delivered per second to a local receiver, and the time from
 * the transaction that committed each event to the receiver's first byte of its delivery.
 *
 * For each backend it starts `mkoba serve` (PGlite in a temporary data directory; PostgreSQL in a fresh
 * schema), a receiver process on 127.0.0.1 (bench/webhookReceiver.ts), subscribes the receiver to `*`, and
 * creates events through the API: internal transfers (`POST /v1/transfers`: one commit carries
 * `transfer.created` and `transfer.settled`) or sandbox test events (`POST /v1/sandbox/events`). Runs:
 *
 * - paced: a fixed request rate below the dispatcher's ceiling, so latency is the dispatcher's, not a queue's;
 * - burst: a bounded number of requests as fast as the connections allow, so the dispatcher has a backlog;
 * - backlog: events stored while the subscription is disabled, then queued at once by a recover, so the
 *   dispatcher's drain rate is measured apart from the API's;
 * - burst beside a slow receiver: the same burst with a second subscription whose endpoint answers late.
 *
 * The commit time of an event is taken as the moment the response of the request that created it arrived
 * (the API answers after COMMIT), which is later than the commit: the latency shown is a lower bound. The
 * moment the request was sent precedes the commit and gives the upper bound. docs/BENCHMARKS.md has results.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config.ts';
import { WEBHOOK_RECOVER_EVENTS_MAX } from '../src/modules/webhooks/useCases/deliveries.ts';
import {
  WEBHOOK_DISPATCH_BATCH_ROWS,
  WEBHOOK_DISPATCH_CONCURRENCY_MAX,
} from '../src/modules/webhooks/workers/dispatcher.ts';
import { createSchema, dropSchema } from '../src/store/postgres.ts';
import { postgresCpuMs, processCpuMs } from './cpu.ts';
import { type Api, createWallets } from './httpLoad.ts';
import {
  type Backend,
  type BenchValues,
  benchBackends,
  benchDatabaseUrl,
  fixed,
  log,
  postgresVersion,
  textOption,
  wholeNumber,
  withSearchPath,
} from './options.ts';
import { startServer } from './server.ts';
import { checkLedger, openServerStore } from './serverLedger.ts';
import { percentile, seededRandom } from './stats.ts';
import { TRANSFER_AMOUNT_TEXT, TRANSFER_CURRENCY } from './transferSql.ts';
import type { Arrival, ReceiverReady } from './webhookReceiver.ts';

export const WEBHOOK_USAGE = `Webhooks (events delivered per second, commit to the receiver's first byte):

  --webhook-source S   transfers (POST /v1/transfers, 2 events each) or sandbox (POST /v1/sandbox/events,
                       1 event each) (BENCH_WEBHOOK_SOURCE, default transfers)
  --webhook-rate N     requests/s of the paced run (BENCH_WEBHOOK_RATE, default 10)
  --webhook-paced S    seconds of the paced run, 0 to skip it (BENCH_WEBHOOK_PACED_S, default 10)
  --webhook-burst N    requests of each burst (BENCH_WEBHOOK_BURST, default 200)
  --webhook-backlog N  requests whose events one recover queues at once, 0 to skip (BENCH_WEBHOOK_BACKLOG, default 1000)
  --webhook-slow-ms MS the slow receiver's answer time, 0 to skip that run (BENCH_WEBHOOK_SLOW_MS, default 2000)
  --connections N      requests in flight at most (BENCH_CONNECTIONS, default 16)
  --backends, --database-url as above

  BENCH_WEBHOOK_DRAIN_MAX_S bounds the wait for deliveries after each run's last request (default 120).
`;

export const WEBHOOK_OPTIONS = {
  'webhook-source': { type: 'string' },
  'webhook-rate': { type: 'string' },
  'webhook-paced': { type: 'string' },
  'webhook-burst': { type: 'string' },
  'webhook-slow-ms': { type: 'string' },
  'webhook-backlog': { type: 'string' },
} as const;

type Source = 'transfers' | 'sandbox';
const EVENT_TYPES_OF: Record<Source, readonly string[]> = {
  transfers: ['transfer.created', 'transfer.settled'],
  sandbox: ['transfer.created'],
};

const REPOSITORY_DIR = fileURLToPath(new URL('../', import.meta.url));
const RECEIVER_PATH = fileURLToPath(new URL('./webhookReceiver.ts', import.meta.url));
const RECEIVER_START_TIMEOUT_MS = 30_000;
const REQUEST_TIMEOUT_MS = 30_000;
const DRAIN_POLL_MS = 20;
/** Unmeasured requests after subscribing, so the first measured run does not pay for cold code. */
const WARMUP_REQUESTS = 20;
/** One recover queues at most WEBHOOK_RECOVER_EVENTS_MAX events, and a transfer makes two. */
const WEBHOOK_BACKLOG_REQUESTS_MAX = WEBHOOK_RECOVER_EVENTS_MAX / 2;
const FUNDS_TEXT = '100000000.00';

interface WebhookConfig {
  backends: Backend[];
  databaseUrl: string | undefined;
  source: Source;
  connections: number;
  rate: number;
  pacedS: number;
  burst: number;
  /** Requests whose events are queued at once by a recover (0 skips the run). */
  backlog: number;
  slowMs: number;
  drainMaxS: number;
}

function readConfig(values: BenchValues): WebhookConfig {
  const env = process.env;
  const text = (name: string) => textOption(values, name);
  const source = text('webhook-source') ?? env.BENCH_WEBHOOK_SOURCE ?? 'transfers';
  if (source !== 'transfers' && source !== 'sandbox') {
    throw new Error(`--webhook-source must be transfers or sandbox, got '${source}'`);
  }
  const databaseUrl = benchDatabaseUrl(values);
  return {
    backends: benchBackends(values, databaseUrl),
    databaseUrl,
    source,
    connections: wholeNumber('connections', text('connections') ?? env.BENCH_CONNECTIONS, 16, 1, 256),
    rate: wholeNumber('webhook-rate', text('webhook-rate') ?? env.BENCH_WEBHOOK_RATE, 10, 1, 1000),
    pacedS: wholeNumber('webhook-paced', text('webhook-paced') ?? env.BENCH_WEBHOOK_PACED_S, 10, 0, 600),
    burst: wholeNumber('webhook-burst', text('webhook-burst') ?? env.BENCH_WEBHOOK_BURST, 200, 1, 20_000),
    backlog: wholeNumber(
      'webhook-backlog',
      text('webhook-backlog') ?? env.BENCH_WEBHOOK_BACKLOG,
      1000,
      0,
      WEBHOOK_BACKLOG_REQUESTS_MAX,
    ),
    slowMs: wholeNumber(
      'webhook-slow-ms',
      text('webhook-slow-ms') ?? env.BENCH_WEBHOOK_SLOW_MS,
      2000,
      0,
      60_000,
    ),
    drainMaxS: wholeNumber('BENCH_WEBHOOK_DRAIN_MAX_S', env.BENCH_WEBHOOK_DRAIN_MAX_S, 120, 1, 3600),
  };
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

// ---------------------------------------------------------------------------------------------------------
// The receiver process

interface Receiver {
  origin: string;
  arrivals: Arrival[];
  stop(): Promise<void>;
}

async function startReceiver(slowMs: number): Promise<Receiver> {
  const child: ChildProcess = fork(RECEIVER_PATH, [], {
    cwd: REPOSITORY_DIR,
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_RECEIVER_SLOW_MS: String(slowMs) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const arrivals: Arrival[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the receiver was not ready within ${RECEIVER_START_TIMEOUT_MS} ms`)),
      RECEIVER_START_TIMEOUT_MS,
    );
    child.on('message', (message: Arrival | ReceiverReady) => {
      if (message.kind === 'arrival') arrivals.push(message);
      else {
        clearTimeout(timer);
        resolve(message.port);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the receiver exited (${code ?? signal}) before it was ready`));
    });
  }).catch(async (error: unknown) => {
    child.kill('SIGKILL');
    await exited;
    throw error;
  });
  return {
    origin: `http://127.0.0.1:${port}`,
    arrivals,
    async stop() {
      if (child.connected) child.disconnect();
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Creating events through the API

async function call(api: Api, method: string, urlPath: string, body: unknown, key?: string) {
  const response = await fetch(`${api.origin}${urlPath}`, {
    method,
    headers: {
      authorization: `Bearer ${api.apiKey}`,
      'content-type': 'application/json',
      ...(key ? { 'idempotency-key': key } : {}),
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  // Headers are in: the server has committed. The body follows in the same write.
  const respondedMs = nowMs();
  const text = await response.text();
  return { status: response.status, text, respondedMs };
}

interface Request {
  /** The transfer id every event of this request names in data.transfer_id. */
  transferId: string;
  sentMs: number;
  respondedMs: number;
}

interface Generated {
  requests: Request[];
  failures: Record<string, number>;
  /** How far behind its schedule the paced generator sent a request, at worst (ms). */
  lagMaxMs: number;
  startedMs: number;
  endedMs: number;
}

function eventMaker(api: Api, source: Source, wallets: readonly string[], tag: string) {
  const pairs = wallets.length / 2;
  return async (i: number): Promise<Request | string> => {
    const sentMs = nowMs();
    try {
      if (source === 'sandbox') {
        const r = await call(api, 'POST', '/v1/sandbox/events', { type: 'transfer.created' });
        if (r.status !== 201) return String(r.status);
        const event = JSON.parse(r.text) as { data?: { transfer_id?: string } };
        const transferId = event.data?.transfer_id;
        return transferId ? { transferId, sentMs, respondedMs: r.respondedMs } : 'no_transfer_id';
      }
      const r = await call(
        api,
        'POST',
        '/v1/transfers',
        {
          source: wallets[i % pairs],
          destination: wallets[pairs + (i % pairs)],
          amount: TRANSFER_AMOUNT_TEXT,
          currency: TRANSFER_CURRENCY,
        },
        `bench-webhooks-${tag}-${i}`,
      );
      if (r.status !== 201) return String(r.status);
      return {
        transferId: String((JSON.parse(r.text) as { id: string }).id),
        sentMs,
        respondedMs: r.respondedMs,
      };
    } catch (error) {
      return (error as Error).name === 'TimeoutError' ? 'timeout' : 'connection_error';
    }
  };
}

/**
 * `count` requests: back to back over `inFlightMax` connections or, with `ratePerS`, request i at a random
 * moment of the i-th slot of 1/ratePerS s (still at most `inFlightMax` in flight). Evenly spaced requests
 * would keep the same phase against the dispatcher's fixed tick (at 10/s and a 100 ms tick, every commit
 * lands at the same point of it) and measure that one phase; a random point in each slot measures them all,
 * and never puts more than two requests into one slot's length.
 */
async function generate(
  make: (i: number) => Promise<Request | string>,
  count: number,
  inFlightMax: number,
  ratePerS: number | undefined,
): Promise<Generated> {
  const requests: Request[] = [];
  const failures: Record<string, number> = {};
  const record = (outcome: Request | string) => {
    if (typeof outcome === 'string') failures[outcome] = (failures[outcome] ?? 0) + 1;
    else requests.push(outcome);
  };
  let lagMaxMs = 0;
  const startedMs = nowMs();
  if (ratePerS === undefined) {
    let next = 0;
    const worker = async () => {
      while (next < count) record(await make(next++));
    };
    await Promise.all(Array.from({ length: Math.min(inFlightMax, count) }, worker));
  } else {
    const inFlight = new Set<Promise<void>>();
    const random = seededRandom(count);
    for (let i = 0; i < count; i++) {
      const dueMs = startedMs + ((i + random()) * 1000) / ratePerS;
      await sleep(dueMs - nowMs());
      while (inFlight.size >= inFlightMax) await Promise.race(inFlight);
      lagMaxMs = Math.max(lagMaxMs, nowMs() - dueMs);
      const p: Promise<void> = make(i)
        .then(record)
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await Promise.all(inFlight);
  }
  return { requests, failures, lagMaxMs, startedMs, endedMs: nowMs() };
}

// ---------------------------------------------------------------------------------------------------------
// Matching deliveries to the requests that caused them

interface PathResult {
  path: 'fast' | 'slow';
  expected: number;
  delivered: number;
  /** Arrivals of an event id already received earlier (any run of this backend). */
  duplicates: number;
  /** Deliveries per second from the first response to the last first arrival. */
  deliveredPerS: number;
  /** First arrival minus the response of the creating request (lower bound of commit → first byte). */
  latencyMs: number[];
  /** First arrival minus the sending of the creating request (upper bound). */
  upperMs: number[];
  /** Receiver's wall clock minus the event's created_at (server's wall clock, before COMMIT). */
  createdAtMs: number[];
  /** Deliveries per second between the last response and the last first arrival (the backlog draining). */
  drainPerS: number | undefined;
  drainServerCpuMs: number | undefined;
  drainPostgresCpuMs: number | undefined;
}

interface RunRow {
  backend: Backend;
  run: string;
  requests: number;
  failures: Record<string, number>;
  apiP50Ms: number;
  lagMaxMs: number;
  /** From the first request sent to the last response. */
  generatedS: number;
  paths: PathResult[];
}

class Deliveries {
  /** Event ids seen, per path: for duplicates. */
  private readonly seen = { fast: new Set<string>(), slow: new Set<string>() };
  /** First arrival per path and `${transferId} ${type}`. */
  private readonly first = { fast: new Map<string, Arrival>(), slow: new Map<string, Arrival>() };
  /** Arrival index → whether it repeated an event id. */
  private readonly repeated: boolean[] = [];
  private consumed = 0;
  unmatched = 0;

  constructor(private readonly arrivals: Arrival[]) {}

  /** Takes in what the receiver has reported so far. */
  update(): void {
    for (; this.consumed < this.arrivals.length; this.consumed++) {
      const a = this.arrivals[this.consumed] as Arrival;
      const id = a.headerId || a.eventId || '';
      const again = this.seen[a.path].has(id);
      this.repeated.push(again);
      this.seen[a.path].add(id);
      if (!a.transferId || !a.type || a.eventId !== a.headerId) {
        this.unmatched++;
        continue;
      }
      const key = `${a.transferId} ${a.type}`;
      if (!this.first[a.path].has(key)) this.first[a.path].set(key, a);
    }
  }

  firstArrival(path: 'fast' | 'slow', key: string): Arrival | undefined {
    return this.first[path].get(key);
  }

  /** Repeats among arrivals whose key is in `keys`. */
  duplicatesAmong(path: 'fast' | 'slow', keys: ReadonlySet<string>): number {
    let n = 0;
    for (let i = 0; i < this.consumed; i++) {
      const a = this.arrivals[i] as Arrival;
      if (a.path === path && this.repeated[i] && keys.has(`${a.transferId} ${a.type}`)) n++;
    }
    return n;
  }
}

interface Cpu {
  atMs: number;
  server: number | undefined;
  postgres: number | undefined;
}

function sampleCpu(serverPid: number, withPostgres: boolean): Cpu {
  return {
    atMs: nowMs(),
    server: processCpuMs(serverPid),
    postgres: withPostgres ? postgresCpuMs() : undefined,
  };
}

/**
 * One measured run: generate, then wait (bounded) until every expected event reached the fast receiver.
 * The slow receiver is not waited for; what reached it by then is reported.
 */
async function measureRun(options: {
  backend: Backend;
  run: string;
  generateRequests: () => Promise<Generated>;
  deliveries: Deliveries;
  paths: ('fast' | 'slow')[];
  eventTypes: readonly string[];
  serverPid: number;
  withPostgres: boolean;
  drainMaxS: number;
}): Promise<RunRow> {
  const { deliveries, eventTypes } = options;
  const generated = await options.generateRequests();
  const drainStart = sampleCpu(options.serverPid, options.withPostgres);
  const keys = new Set(generated.requests.flatMap((r) => eventTypes.map((t) => `${r.transferId} ${t}`)));
  const deadlineMs = nowMs() + options.drainMaxS * 1000;
  const missingFast = () => {
    deliveries.update();
    let missing = 0;
    for (const key of keys) if (!deliveries.firstArrival('fast', key)) missing++;
    return missing;
  };
  while (missingFast() > 0 && nowMs() < deadlineMs) await sleep(DRAIN_POLL_MS);
  const drainEnd = sampleCpu(options.serverPid, options.withPostgres);
  const respondedMs = generated.requests.map((r) => r.respondedMs);
  const firstResponseMs = respondedMs.length > 0 ? Math.min(...respondedMs) : Number.NaN;
  const apiMs = generated.requests.map((r) => r.respondedMs - r.sentMs).sort((a, b) => a - b);

  const paths = options.paths.map((path): PathResult => {
    const latencyMs: number[] = [];
    const upperMs: number[] = [];
    const createdAtMs: number[] = [];
    let lastArrivalMs = Number.NaN;
    let inDrain = 0;
    for (const request of generated.requests) {
      for (const type of eventTypes) {
        const a = deliveries.firstArrival(path, `${request.transferId} ${type}`);
        if (!a) continue;
        latencyMs.push(a.arrivedMs - request.respondedMs);
        upperMs.push(a.arrivedMs - request.sentMs);
        if (a.createdAt) createdAtMs.push(a.arrivedWallMs - Date.parse(a.createdAt));
        if (!(a.arrivedMs <= lastArrivalMs)) lastArrivalMs = a.arrivedMs;
        if (a.arrivedMs > drainStart.atMs) inDrain++;
      }
    }
    for (const list of [latencyMs, upperMs, createdAtMs]) list.sort((a, b) => a - b);
    const drainS = (lastArrivalMs - drainStart.atMs) / 1000;
    // Only a drain long enough to mean something: a second and 20 deliveries at least.
    const drained = path === 'fast' && drainS >= 1 && inDrain >= 20;
    const perDrained = (a: number | undefined, b: number | undefined) =>
      drained && a !== undefined && b !== undefined ? (b - a) / inDrain : undefined;
    return {
      path,
      expected: keys.size,
      delivered: latencyMs.length,
      duplicates: deliveries.duplicatesAmong(path, keys),
      deliveredPerS: latencyMs.length / ((lastArrivalMs - firstResponseMs) / 1000),
      latencyMs,
      upperMs,
      createdAtMs,
      drainPerS: drained ? inDrain / drainS : undefined,
      drainServerCpuMs: perDrained(drainStart.server, drainEnd.server),
      drainPostgresCpuMs: perDrained(drainStart.postgres, drainEnd.postgres),
    };
  });
  return {
    backend: options.backend,
    run: options.run,
    requests: generated.requests.length,
    failures: generated.failures,
    apiP50Ms: percentile(apiMs, 50),
    lagMaxMs: generated.lagMaxMs,
    generatedS: (generated.endedMs - generated.startedMs) / 1000,
    paths,
  };
}

function describe(row: RunRow): string[] {
  return row.paths.map((p) =>
    [
      `  ${row.run}${row.paths.length > 1 ? ` [${p.path}]` : ''}: ${p.delivered}/${p.expected} events`,
      `${fixed(p.deliveredPerS, 1)}/s`,
      `commit→first byte p50 ${fixed(percentile(p.latencyMs, 50), 1)} ms, p99 ${fixed(percentile(p.latencyMs, 99), 1)} ms, min ${fixed(p.latencyMs[0] ?? Number.NaN, 1)} ms, max ${fixed(p.latencyMs[p.latencyMs.length - 1] ?? Number.NaN, 1)} ms`,
      `sent→first byte p50 ${fixed(percentile(p.upperMs, 50), 1)} p99 ${fixed(percentile(p.upperMs, 99), 1)}`,
      `created_at→first byte p50 ${fixed(percentile(p.createdAtMs, 50), 0)} p99 ${fixed(percentile(p.createdAtMs, 99), 0)}`,
      `duplicates ${p.duplicates}`,
      p.drainPerS === undefined
        ? ''
        : `drain ${fixed(p.drainPerS, 1)}/s, CPU ms/delivery server ${fixed(p.drainServerCpuMs ?? Number.NaN, 2)}${p.drainPostgresCpuMs === undefined ? '' : ` PostgreSQL ${fixed(p.drainPostgresCpuMs, 2)}`}`,
      `API p50 ${fixed(row.apiP50Ms, 1)} ms, ${row.requests} requests in ${fixed(row.generatedS, 1)} s${row.lagMaxMs > 0 ? ` (at worst ${fixed(row.lagMaxMs, 0)} ms behind schedule)` : ''}${Object.keys(row.failures).length ? `, failed ${JSON.stringify(row.failures)}` : ''}`,
    ]
      .filter(Boolean)
      .join('; '),
  );
}

// ---------------------------------------------------------------------------------------------------------
// One backend

async function createSubscription(api: Api, url: string): Promise<string> {
  const r = await call(api, 'POST', '/v1/webhook-subscriptions', { url, events: ['*'] });
  if (r.status !== 201) throw new Error(`creating the subscription to ${url}: ${r.status} ${r.text}`);
  return String((JSON.parse(r.text) as { id: string }).id);
}

async function setSubscriptionStatus(api: Api, id: string, status: 'enabled' | 'disabled') {
  const r = await call(api, 'PATCH', `/v1/webhook-subscriptions/${id}`, { status });
  if (r.status !== 200) throw new Error(`setting subscription ${id} ${status}: ${r.status} ${r.text}`);
}

/**
 * A backlog queued in one commit: the subscription is disabled while the requests run (their events are
 * stored, no delivery queued), then enabled and recovered, which queues every one of them at once. What
 * follows is the dispatcher alone, draining, whatever the API's pace: the run's "backlog drained/s".
 */
async function queuedBacklog(api: Api, subscriptionId: string, generate: () => Promise<Generated>) {
  await setSubscriptionStatus(api, subscriptionId, 'disabled');
  const since = new Date(Date.now() - 1_000).toISOString();
  const generated = await generate();
  await setSubscriptionStatus(api, subscriptionId, 'enabled');
  const r = await call(api, 'POST', `/v1/webhook-subscriptions/${subscriptionId}/recover`, { since });
  if (r.status !== 200 && r.status !== 202) throw new Error(`recover: ${r.status} ${r.text}`);
  return generated;
}

async function benchBackend(
  backend: Backend,
  config: WebhookConfig,
  receiver: Receiver,
  rows: RunRow[],
): Promise<void> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'mkoba-bench-webhooks-'));
  const databaseUrl = backend === 'postgres' ? config.databaseUrl : undefined;
  const schema = databaseUrl ? `bench_${randomBytes(5).toString('hex')}_hooks` : undefined;
  const deliveries = new Deliveries(receiver.arrivals);
  // Arrivals from an earlier backend's server (a late retry) must not count here.
  receiver.arrivals.length = 0;
  try {
    if (databaseUrl && schema) await createSchema(databaseUrl, schema);
    log(`webhooks ${backend}: starting mkoba serve on ${schema ? `schema ${schema}` : work}`);
    const server = await startServer({
      dataDir: path.join(work, 'data'),
      databaseUrl: databaseUrl && schema ? withSearchPath(databaseUrl, schema) : undefined,
    });
    try {
      const api = { origin: server.origin, apiKey: server.apiKey };
      const wallets =
        config.source === 'transfers'
          ? await createWallets(api, config.connections, FUNDS_TEXT)
          : ([] as string[]);
      // Subscribed after the set-up, so funding's events are not delivered.
      const fastId = await createSubscription(api, `${receiver.origin}/fast`);
      const eventTypes = EVENT_TYPES_OF[config.source];
      const common = {
        backend,
        deliveries,
        eventTypes,
        serverPid: server.pid,
        withPostgres: databaseUrl !== undefined,
        drainMaxS: config.drainMaxS,
      };
      const burstLabel = `burst of ${config.burst}`;
      await measureRun({
        ...common,
        run: 'warm-up',
        paths: ['fast'],
        generateRequests: () =>
          generate(
            eventMaker(api, config.source, wallets, 'w'),
            WARMUP_REQUESTS,
            config.connections,
            undefined,
          ),
      });
      const measured: RunRow[] = [];
      if (config.pacedS > 0) {
        const count = config.rate * config.pacedS;
        measured.push(
          await measureRun({
            ...common,
            run: `paced, ${config.rate} requests/s for ${config.pacedS} s`,
            paths: ['fast'],
            generateRequests: () =>
              generate(eventMaker(api, config.source, wallets, 'p'), count, config.connections, config.rate),
          }),
        );
        log(describe(measured[measured.length - 1] as RunRow).join('\n'));
      }
      measured.push(
        await measureRun({
          ...common,
          run: burstLabel,
          paths: ['fast'],
          generateRequests: () =>
            generate(
              eventMaker(api, config.source, wallets, 'b'),
              config.burst,
              config.connections,
              undefined,
            ),
        }),
      );
      log(describe(measured[measured.length - 1] as RunRow).join('\n'));
      if (config.backlog > 0) {
        measured.push(
          await measureRun({
            ...common,
            run: `backlog of ${config.backlog} requests queued by one recover`,
            paths: ['fast'],
            generateRequests: () =>
              queuedBacklog(api, fastId, () =>
                generate(
                  eventMaker(api, config.source, wallets, 'q'),
                  config.backlog,
                  config.connections,
                  undefined,
                ),
              ),
          }),
        );
        log(describe(measured[measured.length - 1] as RunRow).join('\n'));
      }
      if (config.slowMs > 0) {
        await createSubscription(api, `${receiver.origin}/slow`);
        measured.push(
          await measureRun({
            ...common,
            run: `${burstLabel}, beside a receiver answering in ${config.slowMs} ms`,
            paths: ['fast', 'slow'],
            generateRequests: () =>
              generate(
                eventMaker(api, config.source, wallets, 's'),
                config.burst,
                config.connections,
                undefined,
              ),
          }),
        );
        log(describe(measured[measured.length - 1] as RunRow).join('\n'));
      }
      deliveries.update();
      if (deliveries.unmatched > 0)
        log(`webhooks ${backend}: ${deliveries.unmatched} arrivals matched no request`);
      rows.push(...measured);
    } finally {
      await server.stop();
    }
    const store = await openServerStore({ databaseUrl, schema, dataDir: path.join(work, 'data') });
    if (!store) throw new Error(`webhooks ${backend}: the server's database is not where it was expected`);
    try {
      log(await checkLedger(store, `webhooks ${backend}`));
    } finally {
      await store.close();
    }
  } finally {
    if (databaseUrl && schema) await dropSchema(databaseUrl, schema);
    rmSync(work, { recursive: true, force: true });
  }
}

function table(rows: RunRow[], source: Source): string[] {
  const lines = [
    '| backend | run | receiver | events | delivered/s | commit→first byte p50 ms | p99 ms | min ms | max ms | request sent→first byte p50 ms | p99 ms | API p50 ms | duplicates | not delivered | backlog drained/s | server CPU ms/delivery (drain) | PostgreSQL CPU ms/delivery (drain) |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const row of rows) {
    for (const p of row.paths) {
      const failed = Object.entries(row.failures)
        .map(([code, n]) => `${n}×${code}`)
        .join(' ');
      const last = p.latencyMs[p.latencyMs.length - 1] ?? Number.NaN;
      const notDelivered = p.path === 'slow' ? '(not awaited)' : String(p.expected - p.delivered);
      lines.push(
        `| ${row.backend} | ${row.run}${failed ? ` (failed: ${failed})` : ''} | ${p.path === 'fast' ? 'answers at once' : 'slow'} | ${p.delivered} of ${p.expected} | ${fixed(p.deliveredPerS, 1)} | ${fixed(percentile(p.latencyMs, 50), 1)} | ${fixed(percentile(p.latencyMs, 99), 1)} | ${fixed(p.latencyMs[0] ?? Number.NaN, 1)} | ${fixed(last, 1)} | ${fixed(percentile(p.upperMs, 50), 1)} | ${fixed(percentile(p.upperMs, 99), 1)} | ${fixed(row.apiP50Ms, 1)} | ${p.duplicates} | ${notDelivered} | ${fixed(p.drainPerS ?? Number.NaN, 1)} | ${fixed(p.drainServerCpuMs ?? Number.NaN, 2)} | ${fixed(p.drainPostgresCpuMs ?? Number.NaN, 2)} |`,
      );
    }
  }
  lines.push(
    '',
    `Events from ${source === 'transfers' ? 'POST /v1/transfers (internal rail: transfer.created and transfer.settled in one commit)' : 'POST /v1/sandbox/events (one transfer.created each)'}.`,
  );
  return lines;
}

/** The webhook case of `npm run bench`: progress on stderr, a Markdown table on stdout; 2 if nothing ran. */
export async function runWebhookBench(values: BenchValues): Promise<number> {
  const config = readConfig(values);
  if (config.backends.length === 0) {
    log('webhooks: nothing to run');
    return 2;
  }
  const cpus = os.cpus();
  // What the served process reads from the same environment.
  const { webhooks } = loadConfig({
    MKOBA_WEBHOOK_SUBSCRIPTION_CONCURRENCY: process.env.MKOBA_WEBHOOK_SUBSCRIPTION_CONCURRENCY,
  });
  const notes = [
    `node ${process.version}, ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
    `dispatcher: woken by each commit that queues deliveries (and a poll every ${webhooks.pollIntervalMs} ms), claims up to ${WEBHOOK_DISPATCH_BATCH_ROWS} deliveries, ${WEBHOOK_DISPATCH_CONCURRENCY_MAX} sends in flight per process, ${webhooks.subscriptionConcurrency} per subscription (MKOBA_WEBHOOK_SUBSCRIPTION_CONCURRENCY; a freed slot is refilled at once while there is a backlog)`,
    `source ${config.source}; paced ${config.pacedS > 0 ? `${config.rate} requests/s for ${config.pacedS} s` : 'skipped'}; bursts of ${config.burst} requests over ${config.connections} connections; slow receiver ${config.slowMs > 0 ? `${config.slowMs} ms` : 'skipped'}`,
  ];
  if (config.databaseUrl && config.backends.includes('postgres')) {
    const version = await postgresVersion(config.databaseUrl);
    if (version) notes.push(version);
  }
  for (const note of notes) log(note);
  const startedAt = Date.now();
  const rows: RunRow[] = [];
  const receiver = await startReceiver(config.slowMs);
  try {
    for (const backend of config.backends) await benchBackend(backend, config, receiver, rows);
  } finally {
    await receiver.stop();
  }
  const out = [
    '',
    `Mkoba webhook benchmark, ${new Date().toISOString()} (${((Date.now() - startedAt) / 1000).toFixed(0)} s)`,
    ...notes.map((n) => `- ${n}`),
    '',
    ...table(rows, config.source),
    '',
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  return 0;
}
