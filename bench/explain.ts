/**
 * The explain case of `npm run bench` (`--cases explain`): the plans and timings of every list and scan query
 * the repositories run, on a generated history of a million rows per big table (bench/explainData.ts), on
 * PostgreSQL only. Each case calls the repository function itself through a Queryable that records its
 * statements, so the plans are those of the exact SQL and parameters the service sends; each statement is
 * then timed (median of --explain-runs, inside a transaction rolled back afterwards, so the claim's UPDATE
 * leaves nothing behind) and explained with EXPLAIN (ANALYZE, BUFFERS). The schema is dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { RETENTION_PRUNE_BATCH_EVENTS } from '../src/config/retention.ts';
import { slidRange, type TallySpec, windowRange } from '../src/domain/activityTally.ts';
import { AML_HISTORY_TRANSFERS_MAX } from '../src/domain/decisions/aml.ts';
import { PAGE_SIZE_DEFAULT } from '../src/domain/pagination.ts';
import { WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX } from '../src/domain/webhooks.ts';
import { QUEUE_DEPTH_COUNT_MAX } from '../src/metrics.ts';
import { listCustomers } from '../src/modules/customers/repository.ts';
import { STATEMENT_ENTRIES_MAX } from '../src/modules/digitalAccounts/domain.ts';
import { listStatementMovements, readStatementFrame } from '../src/modules/digitalAccounts/repository.ts';
import {
  findOpenHold,
  listJournalEntries,
  listLedgerAccounts,
} from '../src/modules/ledger/repository/ledger.ts';
import { findTransferByRailReference, listTransfers } from '../src/modules/transfers/repository.ts';
import { listWallets } from '../src/modules/wallets/repository.ts';
import { claimDueDeliveries } from '../src/modules/webhooks/repository/claims.ts';
import { eventsSince } from '../src/modules/webhooks/repository/requeue.ts';
import { listSubscriptions } from '../src/modules/webhooks/repository/subscriptions.ts';
import { WEBHOOK_RECOVER_EVENTS_MAX } from '../src/modules/webhooks/useCases/deliveries.ts';
import { WEBHOOK_DISPATCH_BATCH_ROWS } from '../src/modules/webhooks/workers/dispatcher.ts';
import { migrate } from '../src/store/migrate.ts';
import { createSchema, dropSchema, openPostgresStore } from '../src/store/postgres.ts';
import { listEvents } from '../src/store/repositories/events.ts';
import { openTransferCounts, subscriptionQueues } from '../src/store/repositories/operations.ts';
import { pruneEventsBatch } from '../src/store/repositories/retention.ts';
import { readWalletActivity, tallyWalletActivity } from '../src/store/repositories/walletActivity.ts';
import { walletBalanceAsOf } from '../src/store/repositories/walletBalances.ts';
import type { Queryable, Store } from '../src/store/store.ts';
import {
  addManySubscriptions,
  type DataShape,
  dataShape,
  generateData,
  MANY_SUBSCRIPTIONS,
} from './explainData.ts';
import {
  type BenchValues,
  benchDatabaseUrl,
  fixed,
  log,
  postgresVersion,
  textOption,
  wholeNumber,
} from './options.ts';
import { percentile } from './stats.ts';

export const EXPLAIN_USAGE = `Explain (plans and timings of the list and scan queries on a generated history; PostgreSQL only):

  --explain-rows N     transfers, events and journal entries each; deliveries about as many, postings twice
                       as many (BENCH_EXPLAIN_ROWS, default 1000000)
  --explain-runs N     timed runs of each statement, the median is shown (BENCH_EXPLAIN_RUNS, default 5)
  --explain-plans FILE also write every full plan to FILE (BENCH_EXPLAIN_PLANS)
  --database-url       as above
`;

export const EXPLAIN_OPTIONS = {
  'explain-rows': { type: 'string' },
  'explain-runs': { type: 'string' },
  'explain-plans': { type: 'string' },
} as const;

/** A page as the API asks for it: the page size plus one row that tells whether there is more. */
const PAGE_ROWS = PAGE_SIZE_DEFAULT + 1;
const LEASE_MS = 30_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** The counts a busy wallet's AML rules and policy may take: the defaults' windows and a long one. */
const AML_BENCH_SPECS: TallySpec[] = [
  { direction: 'outgoing', windowSeconds: HOUR_MS / 1_000 },
  { direction: 'outgoing', windowSeconds: DAY_MS / 1_000 },
  { direction: 'incoming', windowSeconds: DAY_MS / 1_000 },
  { direction: 'outgoing', windowSeconds: DAY_MS / 1_000, amountGteMinor: 90_000n, amountLtMinor: 100_000n },
  { direction: 'outgoing', windowSeconds: (30 * DAY_MS) / 1_000 },
];
/** A claim at a time before the history began: every pending delivery is still to come. */
const BEFORE_HISTORY_MS = 91 * DAY_MS;

interface Statement {
  sql: string;
  params: readonly unknown[];
}

interface Case {
  name: string;
  run: (db: Queryable) => Promise<unknown>;
}

interface Measured {
  name: string;
  statement: string;
  rows: number;
  medianMs: number;
  scans: string;
  removedByFilter: number;
  buffers: number;
  plan: string;
}

const ROLLBACK = Symbol('rollback');

/** Runs fn in a transaction that is always rolled back. */
async function rolledBack<T>(store: Store, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  let result: T | undefined;
  try {
    await store.transaction(async (tx) => {
      result = await fn(tx);
      throw ROLLBACK;
    });
  } catch (error) {
    if (error !== ROLLBACK) throw error;
  }
  return result as T;
}

/** The statements a repository function sends, with their parameters, from a real (rolled back) call. */
async function capture(store: Store, run: Case['run']): Promise<Statement[]> {
  const statements: Statement[] = [];
  await rolledBack(store, (tx) =>
    run({
      query: (sql, params = []) => {
        statements.push({ sql, params });
        return tx.query(sql, params);
      },
      exec: (sql) => tx.exec(sql),
    }),
  );
  return statements;
}

const SCAN_PATTERN =
  /((?:Parallel )?(?:Seq Scan|Index Scan(?: Backward)?|Index Only Scan(?: Backward)?|Bitmap Index Scan|Bitmap Heap Scan)(?: using \S+)?(?: on \S+)?)/;

/** The plan's scans in order (with repeats counted), the rows its filters threw away, its pages touched. */
export function summarisePlan(plan: string): { scans: string; removedByFilter: number; buffers: number } {
  const scans: string[] = [];
  let removedByFilter = 0;
  let buffers: number | undefined;
  for (const line of plan.split('\n')) {
    const scan = SCAN_PATTERN.exec(line)?.[1];
    if (scan) {
      const loops = /loops=(\d+)\)\s*$/.exec(line)?.[1];
      const text = loops && loops !== '1' ? `${scan} ×${loops}` : scan;
      scans.push(text);
    }
    const removed = /Rows Removed by (?:Filter|Join Filter|Index Recheck): (\d+)/.exec(line)?.[1];
    if (removed) {
      const loops = Number(/loops=(\d+)/.exec(line)?.[1] ?? 1);
      removedByFilter += Number(removed) * loops;
    }
    if (buffers === undefined) {
      const hit = /Buffers: shared(?: hit=(\d+))?(?: read=(\d+))?/.exec(line);
      if (hit) buffers = Number(hit[1] ?? 0) + Number(hit[2] ?? 0);
    }
  }
  return { scans: scans.join('; '), removedByFilter, buffers: buffers ?? 0 };
}

async function measure(store: Store, c: Case, runs: number): Promise<Measured[]> {
  const statements = await capture(store, c.run);
  const out: Measured[] = [];
  for (const [index, s] of statements.entries()) {
    const times: number[] = [];
    let rows = 0;
    // One unmeasured run first, so every statement is timed with a warm cache.
    for (let run = 0; run <= runs; run++) {
      await rolledBack(store, async (tx) => {
        const started = performance.now();
        rows = (await tx.query(s.sql, s.params)).length;
        if (run > 0) times.push(performance.now() - started);
      });
    }
    const planRows = await rolledBack(store, (tx) =>
      tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${s.sql}`, s.params),
    );
    const plan = planRows.map((r) => r['QUERY PLAN']).join('\n');
    times.sort((a, b) => a - b);
    out.push({
      name: c.name,
      statement: statements.length > 1 ? `${index + 1}/${statements.length}` : '',
      rows,
      medianMs: percentile(times, 50),
      ...summarisePlan(plan),
      plan,
    });
  }
  return out;
}

async function oneId(store: Store, sql: string, params: unknown[]): Promise<string> {
  const [row] = await store.query<{ id: string }>(sql, params);
  if (!row) throw new Error(`no row for: ${sql}`);
  return row.id;
}

async function cases(
  store: Store,
  shape: DataShape,
  ids: { organizations: string[]; hotWalletId: string; walletId: string },
): Promise<Case[]> {
  const [big, , , , small] = ids.organizations;
  if (big === undefined || small === undefined) throw new Error('organizations missing');
  const now = new Date(shape.endMs + 60_000);
  const ago = (ms: number) => new Date(shape.endMs - ms);
  const middle = ago(45 * DAY_MS);
  const transferInMiddle = await oneId(
    store,
    'SELECT id FROM transfers WHERE organization_id = $1 AND created_at >= $2 ORDER BY created_at LIMIT 1',
    [big, middle],
  );
  const pendingTransfer = await oneId(
    store,
    "SELECT id FROM transfers WHERE organization_id = $1 AND status = 'pending' ORDER BY created_at DESC LIMIT 1",
    [big],
  );
  const owner = await oneId(store, 'SELECT owner_id AS id FROM wallets WHERE id = $1', [ids.walletId]);
  const claim = (at: Date) => (db: Queryable) =>
    claimDueDeliveries(
      db,
      at,
      new Date(at.getTime() + LEASE_MS),
      WEBHOOK_DISPATCH_BATCH_ROWS,
      WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX,
    );
  return [
    { name: 'transfers: newest page', run: (db) => listTransfers(db, big, {}, PAGE_ROWS) },
    {
      name: 'transfers: status=processing (1.5 %)',
      run: (db) => listTransfers(db, big, { status: 'processing' }, PAGE_ROWS),
    },
    {
      name: 'transfers: status=settled (90 %)',
      run: (db) => listTransfers(db, big, { status: 'settled' }, PAGE_ROWS),
    },
    {
      name: 'transfers: status=pending_approval, small org',
      run: (db) => listTransfers(db, small, { status: 'pending_approval' }, PAGE_ROWS),
    },
    {
      name: 'transfers: wallet (hot source)',
      run: (db) => listTransfers(db, big, { walletId: ids.hotWalletId }, PAGE_ROWS),
    },
    {
      name: 'transfers: wallet (ordinary)',
      run: (db) => listTransfers(db, big, { walletId: ids.walletId }, PAGE_ROWS),
    },
    {
      name: 'transfers: created[gte] an hour ago',
      run: (db) => listTransfers(db, big, { createdGte: ago(HOUR_MS) }, PAGE_ROWS),
    },
    {
      name: 'transfers: created[lte] 80 days ago',
      run: (db) => listTransfers(db, big, { createdLte: ago(80 * DAY_MS) }, PAGE_ROWS),
    },
    {
      name: 'transfers: created one hour, 45 days ago',
      run: (db) =>
        listTransfers(
          db,
          big,
          { createdGte: middle, createdLte: new Date(middle.getTime() + HOUR_MS) },
          PAGE_ROWS,
        ),
    },
    {
      name: 'transfers: status=processing, created[lte] 45 days ago',
      run: (db) => listTransfers(db, big, { status: 'processing', createdLte: middle }, PAGE_ROWS),
    },
    {
      name: 'transfers: wallet (hot), created[lte] 45 days ago',
      run: (db) => listTransfers(db, big, { walletId: ids.hotWalletId, createdLte: middle }, PAGE_ROWS),
    },
    {
      name: 'transfers: page after a cursor 45 days back',
      run: (db) => listTransfers(db, big, { startingAfter: transferInMiddle }, PAGE_ROWS),
    },
    {
      name: 'transfers: by rail reference (a partner callback)',
      run: (db) => findTransferByRailReference(db, big, 'mobile_money', 'AG_20261126_00000000000000000001'),
    },
    { name: 'events: newest page', run: (db) => listEvents(db, big, {}, PAGE_ROWS) },
    {
      name: 'events: type=transfer.failed',
      run: (db) => listEvents(db, big, { type: 'transfer.failed' }, PAGE_ROWS),
    },
    {
      name: 'events: resource',
      run: (db) => listEvents(db, big, { resourceId: transferInMiddle }, PAGE_ROWS),
    },
    {
      name: 'events: created[gte] an hour ago',
      run: (db) => listEvents(db, big, { createdGte: ago(HOUR_MS) }, PAGE_ROWS),
    },
    {
      name: 'events: created[lte] 80 days ago',
      run: (db) => listEvents(db, big, { createdLte: ago(80 * DAY_MS) }, PAGE_ROWS),
    },
    {
      name: 'events: type=transfer.failed, created one day, 45 days ago',
      run: (db) =>
        listEvents(
          db,
          big,
          { type: 'transfer.failed', createdGte: middle, createdLte: new Date(middle.getTime() + DAY_MS) },
          PAGE_ROWS,
        ),
    },
    {
      name: 'events: delivery_success=false',
      run: (db) => listEvents(db, big, { deliverySuccess: false }, PAGE_ROWS),
    },
    {
      name: 'events: delivery_success=true',
      run: (db) => listEvents(db, big, { deliverySuccess: true }, PAGE_ROWS),
    },
    {
      name: 'recover: events since an hour ago',
      run: (db) => eventsSince(db, big, ago(HOUR_MS), WEBHOOK_RECOVER_EVENTS_MAX),
    },
    {
      name: 'recover: events since 30 days ago',
      run: (db) => eventsSince(db, big, ago(30 * DAY_MS), WEBHOOK_RECOVER_EVENTS_MAX),
    },
    {
      name: 'recover: events since an hour ago, small org',
      run: (db) => eventsSince(db, small, ago(HOUR_MS), WEBHOOK_RECOVER_EVENTS_MAX),
    },
    { name: 'ledger entries: newest page', run: (db) => listJournalEntries(db, big, {}, PAGE_ROWS) },
    {
      name: 'ledger entries: wallet (hot)',
      run: (db) => listJournalEntries(db, big, { walletId: ids.hotWalletId }, PAGE_ROWS),
    },
    {
      name: 'ledger entries: wallet (ordinary)',
      run: (db) => listJournalEntries(db, big, { walletId: ids.walletId }, PAGE_ROWS),
    },
    {
      name: 'ledger entries: transfer',
      run: (db) => listJournalEntries(db, big, { transferId: transferInMiddle }, PAGE_ROWS),
    },
    {
      name: 'ledger entries: created[lte] 80 days ago',
      run: (db) => listJournalEntries(db, big, { createdLte: ago(80 * DAY_MS) }, PAGE_ROWS),
    },
    { name: 'ledger: open hold of a transfer (settle path)', run: (db) => findOpenHold(db, pendingTransfer) },
    {
      name: 'balance as of: hot wallet, an hour ago',
      run: (db) => walletBalanceAsOf(db, ids.hotWalletId, ago(HOUR_MS)),
    },
    {
      name: 'balance as of: hot wallet, 45 days ago',
      run: (db) => walletBalanceAsOf(db, ids.hotWalletId, middle),
    },
    {
      name: 'balance as of: ordinary wallet, 45 days ago',
      run: (db) => walletBalanceAsOf(db, ids.walletId, middle),
    },
    {
      name: 'statement: hot wallet, the last day',
      run: (db) => statement(db, ids.hotWalletId, ago(DAY_MS), now),
    },
    {
      name: 'statement: hot wallet, one day 45 days ago',
      run: (db) => statement(db, ids.hotWalletId, middle, new Date(middle.getTime() + DAY_MS)),
    },
    {
      name: 'statement: hot wallet, the last 30 days',
      run: (db) => statement(db, ids.hotWalletId, ago(30 * DAY_MS), now),
    },
    {
      name: 'statement: ordinary wallet, 30 days, 45 days ago',
      run: (db) => statement(db, ids.walletId, middle, new Date(middle.getTime() + 30 * DAY_MS)),
    },
    {
      name: 'AML activity: hot wallet, the last day (500 listed each way)',
      run: (db) =>
        readWalletActivity(
          db,
          big,
          [{ walletId: ids.hotWalletId, destination: { type: 'mobile_money', phone: '+254700000001' } }],
          ago(DAY_MS),
          AML_HISTORY_TRANSFERS_MAX,
        ),
    },
    {
      name: 'AML tallies: hot wallet, an hour, a day (in, out, a band), 30 days',
      run: (db) =>
        tallyWalletActivity(
          db,
          big,
          AML_BENCH_SPECS.map((spec) => ({ walletId: ids.hotWalletId, spec, ...windowRange(spec, now) })),
        ),
    },
    {
      name: 'AML tallies: the same windows slid on by a second',
      run: (db) =>
        tallyWalletActivity(
          db,
          big,
          AML_BENCH_SPECS.map((spec) => ({
            walletId: ids.hotWalletId,
            spec,
            ...slidRange(spec, new Date(now.getTime() - 1_000), now),
          })),
        ),
    },
    { name: 'ledger accounts: newest page', run: (db) => listLedgerAccounts(db, big, {}, PAGE_ROWS) },
    {
      name: 'ledger accounts: kind=rail_settlement',
      run: (db) => listLedgerAccounts(db, big, { kind: 'rail_settlement' }, PAGE_ROWS),
    },
    {
      name: 'ledger accounts: created[lte] 100 days ago',
      run: (db) => listLedgerAccounts(db, big, { createdLte: ago(100 * DAY_MS) }, PAGE_ROWS),
    },
    { name: 'customers: newest page', run: (db) => listCustomers(db, big, {}, PAGE_ROWS) },
    {
      name: 'customers: created[lte] 100 days ago',
      run: (db) => listCustomers(db, big, { createdLte: ago(100 * DAY_MS) }, PAGE_ROWS),
    },
    { name: 'wallets: newest page', run: (db) => listWallets(db, big, {}, PAGE_ROWS) },
    { name: 'wallets: owner', run: (db) => listWallets(db, big, { ownerId: owner }, PAGE_ROWS) },
    {
      name: 'wallets: created[lte] 100 days ago',
      run: (db) => listWallets(db, big, { createdLte: ago(100 * DAY_MS) }, PAGE_ROWS),
    },
    { name: 'webhook subscriptions: list', run: (db) => listSubscriptions(db, big, {}, PAGE_ROWS) },
    { name: 'webhook claim: nothing due (600k pending later)', run: claim(ago(BEFORE_HISTORY_MS)) },
    { name: 'webhook claim: backlog due', run: claim(now) },
    {
      name: 'retention: prune batch, 30 days',
      run: (db) =>
        pruneEventsBatch(withoutEventDeletes(db), ago(30 * DAY_MS), undefined, RETENTION_PRUNE_BATCH_EVENTS),
    },
    { name: 'metrics: open transfers by status and rail', run: (db) => openTransferCounts(db) },
    {
      name: 'metrics: webhook queues',
      run: (db) => subscriptionQueues(db, now, QUEUE_DEPTH_COUNT_MAX),
    },
  ];
}

/** A wallet statement's two reads, as getWalletStatement makes them. */
async function statement(db: Queryable, walletId: string, from: Date, to: Date): Promise<void> {
  await readStatementFrame(db, walletId, from, to);
  await listStatementMovements(db, walletId, from, to, STATEMENT_ENTRIES_MAX);
}

/**
 * Each statement is timed alone in its own rolled-back transaction, where deleting the events before their
 * deliveries would break the deliveries' foreign key: the prune case leaves out that last delete, a delete
 * by primary key of the batch's events.
 */
function withoutEventDeletes(db: Queryable): Queryable {
  return {
    query: (sql, params) =>
      /^\s*DELETE FROM events\b/.test(sql) ? Promise.resolve([]) : db.query(sql, params),
    exec: (sql) => db.exec(sql),
  };
}

function table(measured: readonly Measured[]): string[] {
  const lines = [
    '| case | stmt | rows | median ms | plan: scans (×loops) | rows removed by filters | pages touched |',
    '| ---- | ---- | ---: | --------: | -------------------- | ----------------------: | ------------: |',
  ];
  for (const m of measured) {
    lines.push(
      `| ${m.name} | ${m.statement} | ${m.rows} | ${fixed(m.medianMs, 2)} | ${m.scans || '–'} | ${m.removedByFilter} | ${m.buffers} |`,
    );
  }
  return lines;
}

export async function runExplainBench(values: BenchValues): Promise<number> {
  const env = process.env;
  const databaseUrl = benchDatabaseUrl(values);
  if (databaseUrl === undefined) {
    log('explain: needs PostgreSQL: set BENCH_DATABASE_URL (or pass --database-url)');
    return 2;
  }
  const rows = wholeNumber(
    'explain-rows',
    textOption(values, 'explain-rows') ?? env.BENCH_EXPLAIN_ROWS,
    1_000_000,
    10_000,
    10_000_000,
  );
  const runs = wholeNumber(
    'explain-runs',
    textOption(values, 'explain-runs') ?? env.BENCH_EXPLAIN_RUNS,
    5,
    1,
    100,
  );
  const plansFile = textOption(values, 'explain-plans') ?? env.BENCH_EXPLAIN_PLANS;
  const cpus = os.cpus();
  const notes = [
    `node ${process.version}, ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
    (await postgresVersion(databaseUrl)) ?? 'PostgreSQL',
  ];
  for (const note of notes) log(note);
  const schema = `bench_explain_${randomBytes(4).toString('hex')}`;
  await createSchema(databaseUrl, schema);
  // Making the history is a few long statements: the service's statement time-out would cancel them.
  const store = await openPostgresStore({
    connectionString: databaseUrl,
    schema,
    poolConnectionsMax: 2,
    statementTimeoutMs: 0,
  });
  const startedAt = Date.now();
  try {
    await migrate(store);
    const shape = dataShape(rows, Date.now() - 60_000);
    log(`explain: generating ${rows} transfers, events and journal entries in schema ${schema}`);
    const ids = await generateData(store, shape, (name, ms) => log(`  ${name}: ${(ms / 1000).toFixed(1)} s`));
    const measured: Measured[] = [];
    for (const c of await cases(store, shape, ids)) {
      log(`explain: ${c.name}`);
      measured.push(...(await measure(store, c, runs)));
    }
    log(`explain: adding ${MANY_SUBSCRIPTIONS} subscriptions with small backlogs`);
    await addManySubscriptions(store, shape);
    const many: Case = {
      name: `webhook claim: backlog due, ${MANY_SUBSCRIPTIONS} more subscriptions with 2 due each`,
      run: (db) =>
        claimDueDeliveries(
          db,
          new Date(shape.endMs + 60_000),
          new Date(shape.endMs + 60_000 + LEASE_MS),
          WEBHOOK_DISPATCH_BATCH_ROWS,
          WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX,
        ),
    };
    log(`explain: ${many.name}`);
    measured.push(...(await measure(store, many, runs)));
    const [sizes] = await store.query<{
      transfers: string;
      events: string;
      entries: string;
      postings: string;
      deliveries: string;
    }>(
      `SELECT (SELECT count(*) FROM transfers)::text AS transfers, (SELECT count(*) FROM events)::text AS events,
              (SELECT count(*) FROM journal_entries)::text AS entries, (SELECT count(*) FROM postings)::text AS postings,
              (SELECT count(*) FROM webhook_deliveries)::text AS deliveries`,
    );
    const out = [
      '',
      `Mkoba explain benchmark, ${new Date().toISOString()} (${((Date.now() - startedAt) / 1000).toFixed(0)} s)`,
      ...notes.map((n) => `- ${n}`),
      `- rows: ${sizes?.transfers} transfers, ${sizes?.events} events, ${sizes?.entries} journal entries, ${sizes?.postings} postings, ${sizes?.deliveries} webhook deliveries; median of ${runs} runs`,
      '',
      ...table(measured),
      '',
    ];
    process.stdout.write(`${out.join('\n')}\n`);
    if (plansFile) {
      writeFileSync(
        plansFile,
        measured
          .map((m) => `## ${m.name}${m.statement ? ` (${m.statement})` : ''}\n\n${m.plan}\n`)
          .join('\n'),
      );
      log(`explain: plans written to ${plansFile}`);
    }
    return 0;
  } finally {
    await store.close();
    await dropSchema(databaseUrl, schema);
  }
}
