// Past 400 lines: the case's options, set-up, drivers and table are one sequence, read top to bottom.
/**
 * The transfer case of `npm run bench` (bench/main.ts): transfers per second through `POST /v1/transfers`
 * against the database's own ceiling.
 *
 * For each backend (PGlite in a temporary data directory; PostgreSQL in a fresh schema when a database URL
 * is given) it starts `mkoba serve`, creates and funds wallets through the API, and drives the endpoint
 * with autocannon for two scenarios: many distinct wallets, and one hot source wallet. Right after each
 * API run it runs the same per-transfer SQL, one transfer per transaction with the same number of clients,
 * in a second fresh database of the same backend (pgbench on PostgreSQL; an in-process loop on PGlite and,
 * for comparison, on PostgreSQL through node-postgres), and prints the API's figure as a ratio of that
 * ceiling. docs/BENCHMARKS.md explains the output and records results.
 *
 * Every run is bounded in time (and optionally in count); every target is on the loopback interface.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemDeps } from '../src/app/deps.ts';
import { seedSandbox } from '../src/app/seed.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPgliteStore } from '../src/store/pglite.ts';
import { createSchema, dropSchema, openPostgresStore } from '../src/store/postgres.ts';
import type { Store } from '../src/store/store.ts';
import { ownCpuMs, processCpuMs, withCpu } from './cpu.ts';
import { createWallets, driveTransfers, fundWallet, type LoadOptions } from './httpLoad.ts';
import { minimalLedgerSchema, minimalLedgerScript } from './minimalLedger.ts';
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
import { drivePaced } from './pacedLoad.ts';
import { type RssSummary, sampleRss } from './rss.ts';
import { startServer } from './server.ts';
import { checkLedger, openServerStore } from './serverLedger.ts';
import { type Budget, findPgbench, type RunIdentity, runPgbench, runStoreLoop } from './sqlCeiling.ts';
import { failureText, type RunResult } from './stats.ts';
import { seedWalletStatements, type TransferShape } from './transferSql.ts';
import { fundWorkingSet, seedHistory, seedWorkingSet } from './workingSet.ts';
import { driveTransfersWrk, findWrk, WRK_INSTALL_HINT } from './wrkLoad.ts';

export const TRANSFER_USAGE = `Transfers (POST /v1/transfers against the database's own ceiling):

  --duration S         seconds of each measured run (BENCH_DURATION_S, default 5)
  --warmup S           unmeasured run before the first round (BENCH_WARMUP_S, default 2)
  --rounds N           repeat everything N times, show the median run (BENCH_ROUNDS, default 3)
  --connections N      HTTP connections and SQL clients (BENCH_CONNECTIONS, default 16)
  --wallets N          source wallets, as many again are destinations (BENCH_WALLETS; default 10000 on
                       PostgreSQL, seeded with SQL; 64 on PGlite, created through the API)
  --customers N        customers the PostgreSQL wallets are spread over (BENCH_CUSTOMERS, default wallets / 2)
  --business           one verified business customer owns every wallet (BENCH_BUSINESS=1)
  --history N          PostgreSQL: N settled transfers between the wallets already in the ledger, over the
                       last 90 days, seeded with SQL (BENCH_HISTORY, default 0; the issue's case: 1000000)
  --amount N           transfers per run instead of a duration (BENCH_AMOUNT)
  --backends LIST      pglite,postgres (BENCH_BACKENDS)
  --scenarios LIST     distinct,hot (BENCH_SCENARIOS)
  --database-url URL   local PostgreSQL (BENCH_DATABASE_URL, else TEST_DATABASE_URL, else DATABASE_URL)
  --no-idempotency     send no Idempotency-Key (BENCH_IDEMPOTENCY=0)
  --paced              after the rounds, one more API run per scenario at a constant rate of half the
                       median measured, open loop, latency counted from each request's due time (BENCH_PACED=1)

  --no-ceilings        the API runs only, without pgbench and the loop (BENCH_CEILINGS=0)

  The server's resident memory is sampled every second: start, peak and end are printed, and one
  sample a minute (a soak: --rounds 1 --duration 600 --scenarios distinct --no-ceilings).

  The API is driven by wrk when it is installed (apt-get install -y wrk; BENCH_WRK is its path, BENCH_WRK=0
  uses autocannon), by autocannon otherwise and for --amount.

  BENCH_TIME_MAX_S caps any one run (default max(60, 4 x duration)); BENCH_PGBENCH is pgbench's path.
`;

export const TRANSFER_OPTIONS = {
  duration: { type: 'string' },
  warmup: { type: 'string' },
  connections: { type: 'string' },
  wallets: { type: 'string' },
  amount: { type: 'string' },
  backends: { type: 'string' },
  scenarios: { type: 'string' },
  rounds: { type: 'string' },
  'database-url': { type: 'string' },
  'no-idempotency': { type: 'boolean' },
  paced: { type: 'boolean' },
  'no-ceilings': { type: 'boolean' },
  customers: { type: 'string' },
  business: { type: 'boolean' },
  history: { type: 'string' },
} as const;

type Scenario = 'distinct' | 'hot';
const SCENARIOS: Scenario[] = ['distinct', 'hot'];
const SCENARIO_LABEL: Record<Scenario, string> = {
  distinct: 'distinct wallets',
  hot: 'one hot source wallet',
};

const DURATION_S_DEFAULT = 5;
const WARMUP_S_DEFAULT = 2;
const ROUNDS_DEFAULT = 3;
const CONNECTIONS_DEFAULT = 16;
/** PostgreSQL: the working set of a platform (issue: thousands of wallets, mostly cold), seeded with SQL. */
const SOURCES_DEFAULT_POSTGRES = 10_000;
/** PGlite: wallets are created through the API, three requests each, on one embedded session. */
const SOURCES_DEFAULT_PGLITE = 64;
const DURATION_S_MAX = 600;
const CONNECTIONS_MAX = 256;
const SOURCES_MAX = 100_000;
const HISTORY_MAX = 10_000_000;
/** A million transfers of history are a few statements of minutes each on a busy machine. */
const SEED_STATEMENT_TIMEOUT_MS = 30 * 60_000;
/** Round letters go into ids (a..i). */
const ROUNDS_MAX = 9;
/** Each source wallet is funded with this much: far more than any bounded run moves at 1.00 a transfer. */
const FUNDS_TEXT = '100000000.00';
const FUNDS_MINOR = 10_000_000_000n;

interface Config {
  durationS: number;
  warmupS: number;
  connections: number;
  /** Source wallets; per backend when not given (see sourcesOf). */
  sources: number;
  sourcesGiven: boolean;
  /** Customers the seeded (PostgreSQL) wallets are spread over; undefined: half the sources. */
  customers: number | undefined;
  business: boolean;
  /** Settled transfers seeded into the ledger before the runs (PostgreSQL). */
  history: number;
  amount: number | undefined;
  timeMaxS: number;
  backends: Backend[];
  scenarios: Scenario[];
  databaseUrl: string | undefined;
  idempotency: boolean;
  rounds: number;
  paced: boolean;
  /** false: the API runs only (a memory soak), no pgbench or loop beside them. */
  ceilings: boolean;
}

interface Row {
  backend: Backend;
  scenario: Scenario;
  driver: string;
  isApi: boolean;
  result: RunResult;
  round: number;
  /** Lowest and highest transfers/s over the rounds. */
  spread?: [number, number] | undefined;
  /** API transfers/s ÷ this row's, the median over rounds of the ratio within each round. */
  ratio?: number | undefined;
  /** A paced API run: its rate, requested in requests/s. */
  pacedAtPerS?: number | undefined;
}

function readConfig(values: BenchValues): Config {
  const env = process.env;
  const text = (name: string) => textOption(values, name);
  const durationS = wholeNumber(
    'duration',
    text('duration') ?? env.BENCH_DURATION_S,
    DURATION_S_DEFAULT,
    1,
    DURATION_S_MAX,
  );
  const connections = wholeNumber(
    'connections',
    text('connections') ?? env.BENCH_CONNECTIONS,
    CONNECTIONS_DEFAULT,
    1,
    CONNECTIONS_MAX,
  );
  const amountText = text('amount') ?? env.BENCH_AMOUNT;
  const amount = amountText ? wholeNumber('amount', amountText, 0, 1, 10_000_000) : undefined;
  const databaseUrl = benchDatabaseUrl(values);
  const backends = benchBackends(values, databaseUrl);
  const scenarios = (text('scenarios') ?? env.BENCH_SCENARIOS ?? SCENARIOS.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const scenario of scenarios) {
    if (!(SCENARIOS as string[]).includes(scenario)) throw new Error(`unknown scenario '${scenario}'`);
  }
  return {
    durationS,
    warmupS: wholeNumber('warmup', text('warmup') ?? env.BENCH_WARMUP_S, WARMUP_S_DEFAULT, 0, DURATION_S_MAX),
    connections,
    // Each client of the raw-SQL run owns at least one source wallet.
    sources: Math.max(
      connections,
      wholeNumber('wallets', text('wallets') ?? env.BENCH_WALLETS, SOURCES_DEFAULT_POSTGRES, 1, SOURCES_MAX),
    ),
    sourcesGiven: (text('wallets') ?? env.BENCH_WALLETS) !== undefined,
    customers: (() => {
      const given = text('customers') ?? env.BENCH_CUSTOMERS;
      return given === undefined ? undefined : wholeNumber('customers', given, 1, 1, SOURCES_MAX);
    })(),
    business: values.business === true || env.BENCH_BUSINESS === '1',
    history: wholeNumber('history', text('history') ?? env.BENCH_HISTORY, 0, 0, HISTORY_MAX),
    amount,
    timeMaxS: wholeNumber('BENCH_TIME_MAX_S', env.BENCH_TIME_MAX_S, Math.max(60, 4 * durationS), 1, 3600),
    backends,
    scenarios: scenarios as Scenario[],
    databaseUrl,
    idempotency: !(values['no-idempotency'] === true || env.BENCH_IDEMPOTENCY === '0'),
    rounds: wholeNumber('rounds', text('rounds') ?? env.BENCH_ROUNDS, ROUNDS_DEFAULT, 1, ROUNDS_MAX),
    paced: values.paced === true || env.BENCH_PACED === '1',
    ceilings: !(values['no-ceilings'] === true || env.BENCH_CEILINGS === '0'),
  };
}

function describeResult(label: string, result: RunResult): string {
  const cpu = [
    result.appCpuMsPerTransfer === undefined ? '' : `app ${fixed(result.appCpuMsPerTransfer, 2)}`,
    result.dbCpuMsPerTransfer === undefined ? '' : `PostgreSQL ${fixed(result.dbCpuMsPerTransfer, 2)}`,
  ].filter(Boolean);
  return [
    `  ${label.padEnd(38)} ${fixed(result.transfersPerS, 0).padStart(5)} transfers/s`,
    `p50 ${fixed(result.p50Ms, 1)} ms, p99 ${fixed(result.p99Ms, 1)} ms`,
    `${result.transfers} in ${fixed(result.durationS, 1)} s, failed ${failureText(result.failures)}`,
    cpu.length > 0 ? `CPU ms/transfer: ${cpu.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('; ');
}

/** The ledger writer stamps every transfer of one batch with the same time, so distinct times count commits. */
async function transfersPerCommit(store: Store, from: Date, to: Date): Promise<number | undefined> {
  const [row] = await store.query<{ transfers: number; commits: number }>(
    `SELECT count(*)::int AS transfers, count(DISTINCT created_at)::int AS commits
       FROM transfers WHERE direction = 'outbound' AND created_at >= $1 AND created_at <= $2`,
    [from, to],
  );
  return row && row.commits > 0 ? row.transfers / row.commits : undefined;
}

/** A fresh database of the backend with the schema, the sandbox organization and the benchmark wallets. */
async function prepareCeilingDatabase(store: Store, config: Config): Promise<Omit<RunIdentity, 'tag'>> {
  await migrate(store);
  await seedSandbox(systemDeps(store, 'sandbox'), undefined);
  const [key] = await store.query<{ organization_id: string; key_hash: string }>(
    'SELECT organization_id, key_hash FROM api_keys ORDER BY created_at LIMIT 1',
  );
  if (!key) throw new Error('the sandbox seed created no API key');
  for (const sql of seedWalletStatements(key.organization_id, config.sources, FUNDS_MINOR)) {
    await store.query(sql);
  }
  return { organizationId: key.organization_id, keyHash: key.key_hash };
}

/** PGlite keeps its smaller default: its wallets are made through the API on one embedded session. */
function backendConfig(config: Config, backend: Backend): Config {
  if (backend === 'postgres' || config.sourcesGiven) return config;
  return { ...config, sources: Math.max(config.connections, SOURCES_DEFAULT_PGLITE) };
}

/** The working set in the server's schema (bench/workingSet.ts): SQL rows, source 0 funded through the API. */
async function seedServerWallets(
  api: { origin: string; apiKey: string },
  databaseUrl: string,
  schema: string,
  config: Config,
): Promise<string[]> {
  const store = await openPostgresStore({
    connectionString: databaseUrl,
    schema,
    poolConnectionsMax: 2,
    statementTimeoutMs: SEED_STATEMENT_TIMEOUT_MS,
  });
  try {
    const [key] = await store.query<{ organization_id: string }>(
      'SELECT organization_id FROM api_keys ORDER BY created_at LIMIT 1',
    );
    if (!key) throw new Error('the server created no API key');
    const customers = config.business ? 1 : (config.customers ?? Math.max(1, Math.floor(config.sources / 2)));
    const set = { sources: config.sources, customers, business: config.business, tag: 'bench' };
    const started = performance.now();
    const wallets = await seedWorkingSet(store, key.organization_id, set);
    await fundWallet(api, wallets[0] as string, FUNDS_TEXT);
    await fundWorkingSet(store, key.organization_id, set, FUNDS_MINOR);
    if (config.history > 0) await seedHistory(store, key.organization_id, set, config.history);
    log(
      `postgres: seeded ${2 * config.sources} wallets of ${config.business ? 'one business customer' : `${customers} customers`}${config.history > 0 ? ` and ${config.history} transfers of history` : ''} in ${fixed((performance.now() - started) / 1000, 1)} s`,
    );
    return wallets;
  } finally {
    await store.close();
  }
}

type Driver = [name: string, run: (tag: string, budget: Budget) => Promise<RunResult>];

/** The run with the median transfers/s (the lower one of the middle two), with the spread of all rounds. */
function medianRow(samples: Row[]): Row {
  const sorted = [...samples].sort((a, b) => a.result.transfersPerS - b.result.transfersPerS);
  const median = sorted[Math.floor((sorted.length - 1) / 2)] as Row;
  const low = sorted[0]?.result.transfersPerS ?? Number.NaN;
  const high = sorted[sorted.length - 1]?.result.transfersPerS ?? Number.NaN;
  return { ...median, spread: [low, high] };
}

/**
 * One backend: the server on its own database and, beside it, a second database for the raw SQL. Each
 * scenario runs through the API and then at once through the raw SQL, so both see the same machine; with
 * several rounds the whole sequence repeats and the median run of each is kept.
 */
async function benchBackend(
  backend: Backend,
  given: Config,
  pgbench: string | undefined,
  wrk: string | undefined,
  rows: Row[],
  serverNotes: string[],
): Promise<void> {
  const config = backendConfig(given, backend);
  const work = mkdtempSync(path.join(os.tmpdir(), 'mkoba-bench-'));
  const dataDir = path.join(work, 'data');
  const suffix = randomBytes(5).toString('hex');
  const databaseUrl = backend === 'postgres' ? config.databaseUrl : undefined;
  const apiSchema = databaseUrl ? `bench_${suffix}_api` : undefined;
  const sqlSchema = databaseUrl ? `bench_${suffix}_sql` : undefined;
  const minimalSchema = databaseUrl ? `bench_${suffix}_min` : undefined;
  const measured: Budget = { durationS: config.durationS, amount: config.amount, timeMaxS: config.timeMaxS };
  const warmup: Budget = { durationS: config.warmupS, amount: undefined, timeMaxS: config.timeMaxS };
  const windows = new Map<RunResult, [Date, Date]>();
  const measurePostgres = databaseUrl !== undefined;
  const samples: Row[] = [];
  const paced: Row[] = [];
  let sqlStore: Store | undefined;
  try {
    if (databaseUrl && apiSchema && sqlSchema && minimalSchema) {
      await createSchema(databaseUrl, apiSchema);
      await createSchema(databaseUrl, sqlSchema);
      await createSchema(databaseUrl, minimalSchema);
      const minimalStore = await openPostgresStore({
        connectionString: databaseUrl,
        schema: minimalSchema,
        poolConnectionsMax: 1,
      });
      try {
        for (const sql of minimalLedgerSchema(config.sources, FUNDS_MINOR)) await minimalStore.query(sql);
      } finally {
        await minimalStore.close();
      }
      // Set-up only: the loop opens a pool of its own per run and closes it, so that its idle connections do
      // not count against max_connections while pgbench runs (64 clients each would pass 100).
      sqlStore = await openPostgresStore({
        connectionString: databaseUrl,
        schema: sqlSchema,
        poolConnectionsMax: 2,
      });
    } else {
      sqlStore = await openPgliteStore(path.join(work, 'sql-pgdata'));
    }
    const identity = await prepareCeilingDatabase(sqlStore, config);
    log(`${backend}: starting mkoba serve on ${apiSchema ? `schema ${apiSchema}` : dataDir}`);
    const server = await startServer({
      dataDir,
      databaseUrl: databaseUrl && apiSchema ? withSearchPath(databaseUrl, apiSchema) : undefined,
    });
    let rss: { stop(): RssSummary | undefined } | undefined;
    try {
      const api = { origin: server.origin, apiKey: server.apiKey };
      const wallets =
        databaseUrl && apiSchema
          ? await seedServerWallets(api, databaseUrl, apiSchema, config)
          : await createWallets(api, config.sources, FUNDS_TEXT);
      rss = sampleRss(server.pid);
      // wrk when installed (a C generator: little CPU taken from the server); autocannon otherwise, and for --amount.
      const drive = (options: LoadOptions) =>
        wrk && options.amount === undefined
          ? driveTransfersWrk(wrk, api, wallets, options)
          : driveTransfers(api, wallets, options);
      for (let round = 0; round < config.rounds; round++) {
        if (config.rounds > 1) log(`${backend}: round ${round + 1} of ${config.rounds}`);
        const warm = round === 0 && config.warmupS > 0;
        for (const scenario of config.scenarios) {
          const hot = scenario === 'hot';
          const idempotency = config.idempotency;
          const load = { connections: config.connections, timeMaxS: config.timeMaxS, hot, idempotency };
          if (warm) await drive({ ...load, ...warmup, tag: `${scenario}-warmup` });
          const from = new Date();
          const result = await withCpu(
            () => processCpuMs(server.pid),
            measurePostgres,
            () => drive({ ...load, ...measured, tag: `${scenario}-${round}` }),
          );
          windows.set(result, [from, new Date()]);
          const driver = 'API: POST /v1/transfers';
          samples.push({ backend, scenario, driver, isApi: true, result, round });
          log(describeResult(`${scenario}: ${driver}`, result));

          const shape: TransferShape = {
            sources: config.sources,
            clients: config.connections,
            hot,
            idempotency,
          };
          const drivers: Driver[] = [];
          if (databaseUrl && minimalSchema && sqlSchema && pgbench) {
            // pgbench is the client: only PostgreSQL's CPU is counted.
            const viaPgbench = (schema: string, script?: string) => (tag: string, budget: Budget) =>
              withCpu(
                () => undefined,
                true,
                () =>
                  runPgbench(
                    pgbench,
                    withSearchPath(databaseUrl, schema),
                    shape,
                    { ...identity, tag },
                    budget,
                    script,
                  ),
              );
            drivers.push(['minimal ledger: pgbench', viaPgbench(minimalSchema, minimalLedgerScript(shape))]);
            drivers.push(['SQL ceiling: pgbench', viaPgbench(sqlSchema)]);
          }
          const sharedStore = sqlStore;
          const loopSchema = sqlSchema;
          drivers.push([
            backend === 'postgres' ? 'SQL loop: node-postgres' : 'SQL ceiling: in-process loop',
            (tag, budget) =>
              withCpu(ownCpuMs, measurePostgres, async () => {
                const loopStore =
                  databaseUrl && loopSchema
                    ? await openPostgresStore({
                        connectionString: databaseUrl,
                        schema: loopSchema,
                        poolConnectionsMax: config.connections,
                      })
                    : sharedStore;
                try {
                  return await runStoreLoop(loopStore, shape, { ...identity, tag }, budget);
                } finally {
                  if (loopStore !== sharedStore) await loopStore.close();
                }
              }),
          ]);
          for (const [index, [driver, run]] of config.ceilings ? drivers.entries() : []) {
            // Four letters (driver, scenario, warm-up or measured, round): unique within the schema.
            const tag = (phase: string) =>
              `${String.fromCharCode(97 + index)}${scenario[0]}${phase}${String.fromCharCode(97 + round)}`;
            if (warm) await run(tag('w'), warmup);
            const sqlResult = await run(tag('m'), measured);
            sqlResult.transfersPerCommit = 1;
            samples.push({ backend, scenario, driver, isApi: false, result: sqlResult, round });
            log(describeResult(`${scenario}: ${driver}`, sqlResult));
          }
        }
      }
      if (config.paced) {
        for (const scenario of config.scenarios) {
          const apiRuns = samples.filter((r) => r.isApi && r.scenario === scenario);
          const ratePerS = Math.max(1, Math.round(medianRow(apiRuns).result.transfersPerS / 2));
          const from = new Date();
          const result = await withCpu(
            () => processCpuMs(server.pid),
            measurePostgres,
            () =>
              drivePaced(api, wallets, {
                connections: config.connections,
                ratePerS,
                durationS: config.durationS,
                hot: scenario === 'hot',
                idempotency: config.idempotency,
                tag: `${scenario}-paced`,
              }),
          );
          windows.set(result, [from, new Date()]);
          const driver = `API paced at ${ratePerS}/s (half)`;
          paced.push({ backend, scenario, driver, isApi: false, result, round: 0, pacedAtPerS: ratePerS });
          log(describeResult(`${scenario}: ${driver}`, result));
        }
      }
    } finally {
      const memory = rss?.stop();
      if (memory) {
        const line = `${backend}: server RSS ${fixed(memory.startMb, 0)} MB at the start, peak ${fixed(memory.peakMb, 0)} MB, ${fixed(memory.endMb, 0)} MB at the end; a minute apart: ${memory.trend.map(([s, mb]) => `${s} s ${fixed(mb, 0)}`).join(', ')}`;
        log(line);
        serverNotes.push(line);
      }
      await server.stop();
    }
    // Batch sizes and the ledger's invariants, from the database the server used now that it has let go of it.
    const apiStore = await openServerStore({ databaseUrl, schema: apiSchema, dataDir });
    if (!apiStore) throw new Error(`${backend}: the server's database is not where it was expected`);
    try {
      for (const [result, window] of windows) {
        result.transfersPerCommit = await transfersPerCommit(apiStore, ...window);
      }
      const line = await checkLedger(apiStore, backend);
      log(line);
      serverNotes.push(line);
    } finally {
      await apiStore.close();
    }
    const keys = [...new Set(samples.map((r) => `${r.scenario}\u0000${r.driver}`))];
    for (const key of keys) {
      const group = samples.filter((r) => `${r.scenario}\u0000${r.driver}` === key);
      const row = medianRow(group);
      if (!row.isApi) {
        const ratios = group.flatMap((sample) => {
          const api = samples.find(
            (r) => r.isApi && r.scenario === sample.scenario && r.round === sample.round,
          );
          return api ? [api.result.transfersPerS / sample.result.transfersPerS] : [];
        });
        ratios.sort((a, b) => a - b);
        row.ratio = ratios[Math.floor((ratios.length - 1) / 2)];
      }
      rows.push(row);
    }
    rows.push(...paced);
  } finally {
    await sqlStore?.close();
    if (databaseUrl && apiSchema && sqlSchema && minimalSchema) {
      await dropSchema(databaseUrl, apiSchema);
      await dropSchema(databaseUrl, sqlSchema);
      await dropSchema(databaseUrl, minimalSchema);
    }
    rmSync(work, { recursive: true, force: true });
  }
}

function machineNotes(config: Config, pgbench: string | undefined): string[] {
  const cpus = os.cpus();
  const notes = [
    `node ${process.version}, ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
    `${config.connections} connections/clients, ${config.sources} source wallets (+${config.sources} destinations; on PostgreSQL ${config.business ? 'all of one business customer' : `over ${config.customers ?? Math.max(1, Math.floor(config.sources / 2))} customers`}${config.history > 0 ? `, ${config.history} transfers of history` : ''}), ${config.amount === undefined ? `${config.durationS} s` : `${config.amount} transfers`} per run after ${config.warmupS} s warm-up, ${config.rounds} round${config.rounds > 1 ? 's (median run shown)' : ''}, Idempotency-Key ${config.idempotency ? 'on every request' : 'off'}`,
  ];
  if (pgbench) {
    const version = spawnSync(pgbench, ['--version'], { encoding: 'utf8' }).stdout.trim();
    notes.push(`${version} (${pgbench})`);
  }
  return notes;
}

function table(rows: Row[], rounds: number): string[] {
  const range = rounds > 1;
  const lines = [
    `| backend | scenario | driver | transfers/s |${range ? ` range over ${rounds} rounds |` : ''} p50 ms | p99 ms | failed | transfers/commit | app CPU ms/transfer | PostgreSQL CPU ms/transfer | API ÷ this |`,
    `| --- | --- | --- | ---: |${range ? ' ---: |' : ''} ---: | ---: | --- | ---: | ---: | ---: | ---: |`,
  ];
  for (const row of rows) {
    const r = row.result;
    const spread = row.spread ? `${fixed(row.spread[0], 0)}–${fixed(row.spread[1], 0)}` : '';
    lines.push(
      `| ${row.backend} | ${SCENARIO_LABEL[row.scenario]} | ${row.driver} | ${fixed(r.transfersPerS, 0)} |${range ? ` ${spread} |` : ''} ${fixed(r.p50Ms, 1)} | ${fixed(r.p99Ms, 1)} | ${failureText(r.failures)} | ${r.transfersPerCommit === undefined ? '–' : fixed(r.transfersPerCommit, 1)} | ${fixed(r.appCpuMsPerTransfer ?? Number.NaN, 2)} | ${fixed(r.dbCpuMsPerTransfer ?? Number.NaN, 2)} | ${row.ratio === undefined ? '' : `${fixed(row.ratio, 2)}×`} |`,
    );
  }
  return lines;
}

/** The transfer case of `npm run bench`: progress on stderr, a Markdown table on stdout; 2 if nothing ran. */
export async function runTransferBench(values: BenchValues): Promise<number> {
  const config = readConfig(values);
  if (config.backends.length === 0) {
    log('transfers: nothing to run');
    return 2;
  }
  const pgbench = config.backends.includes('postgres') ? findPgbench() : undefined;
  if (config.backends.includes('postgres') && !pgbench) {
    log('pgbench not found (install postgresql-client, or set BENCH_PGBENCH): node-postgres loop only');
  }
  const wrk = findWrk();
  if (!wrk && process.env.BENCH_WRK !== '0') {
    log(`wrk not found: the API is driven by autocannon, which takes more CPU (${WRK_INSTALL_HINT})`);
  }
  const notes = machineNotes(config, pgbench);
  notes.push(
    wrk && config.amount === undefined
      ? `load generator: wrk (${wrk}), ${Math.min(2, config.connections)} threads`
      : 'load generator: autocannon (in Node)',
  );
  if (config.databaseUrl && config.backends.includes('postgres')) {
    const version = await postgresVersion(config.databaseUrl);
    if (version) notes.push(version);
  }
  for (const note of notes) log(note);
  const startedAt = Date.now();
  const rows: Row[] = [];
  const serverNotes: string[] = [];
  for (const backend of config.backends) {
    await benchBackend(backend, config, pgbench, wrk, rows, serverNotes);
  }
  const order = (r: Row) =>
    config.backends.indexOf(r.backend) * 10 + config.scenarios.indexOf(r.scenario) * 2 + (r.isApi ? 0 : 1);
  rows.sort((a, b) => order(a) - order(b));
  const out = [
    '',
    `Mkoba transfer benchmark, ${new Date().toISOString()} (${((Date.now() - startedAt) / 1000).toFixed(0)} s)`,
    ...notes.map((n) => `- ${n}`),
    '',
    ...table(rows, config.rounds),
    '',
    ...serverNotes.map((n) => `- ${n}`),
    '',
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  return 0;
}
