/**
 * The fees case (`npm run bench -- --cases fees`), in two parts.
 *
 * 1. The fee decision, the pure step every new transfer and quote runs: a schedule with a rule for every
 *    rail and currency the rails carry (every third one tiered with the most bands allowed) is parsed from
 *    its stored JSON, as each process does when its cache refreshes, then fees are decided for random
 *    transfers. Prints the parse time and the per-decision p50 and p99.
 * 2. The writer's batch shape with fees: in one process on an in-memory PGlite, the same load of payouts
 *    through `POST /v1/transfers` (app.inject, `--fee-concurrency` at a time) for an organization with no
 *    fee rules and one whose every payout pays a fee, counting the database statements and transactions.
 *    A fee adds a third account to the batch's one lock statement and a third posting to its inserts, so
 *    the statements per transfer should be the same in both rows: no round trip per transfer.
 */

import { systemDeps } from '../src/app/deps.ts';
import { defaultRateLimitSettings } from '../src/config.ts';
import { formatAmount, SUPPORTED_CURRENCIES } from '../src/domain/money.ts';
import { RAILS, type Rail, railBounds } from '../src/domain/transfers.ts';
import { buildApp } from '../src/http/app.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import {
  decideFee,
  FEE_CONVERSION_RAIL,
  FEE_TIERS_MAX,
  type FeeSchedule,
  feeRulesFromStored,
} from '../src/modules/fees/domain.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPgliteStore } from '../src/store/pglite.ts';
import type { Queryable, Store } from '../src/store/store.ts';
import { type BenchValues, fixed, log, textOption, wholeNumber } from './options.ts';
import { percentile, seededRandom } from './stats.ts';

export const FEES_USAGE = `Fees (the fee decision in process; the writer's statements per transfer with and without fees):

  --fee-decisions N      fees decided (BENCH_FEE_DECISIONS, default 100000)
  --fee-transfers N      payouts per organization in part 2 (BENCH_FEE_TRANSFERS, default 2000)
  --fee-concurrency N    requests in flight in part 2 (BENCH_FEE_CONCURRENCY, default 64)
`;

export const FEES_OPTIONS = {
  'fee-decisions': { type: 'string' },
  'fee-transfers': { type: 'string' },
  'fee-concurrency': { type: 'string' },
} as const;

const DECISIONS_DEFAULT = 100_000;
const DECISIONS_MAX = 10_000_000;
const TRANSFERS_DEFAULT = 2_000;
const TRANSFERS_MAX = 100_000;
const CONCURRENCY_DEFAULT = 64;
const CONCURRENCY_MAX = 1_024;
/** Source wallets per organization in part 2: a few, so batches take several wallets' transfers. */
const SOURCE_WALLETS = 16;
const GENERATOR_SEED = 20_261_126;
/** Each payout: small, so that a run stays within the customers' tier limits (150,000.00 KES a day at tier 0). */
const PAYOUT_AMOUNT = '10.00';
/** Each source wallet's funding: far more than any run moves. */
const FUNDS = '100000000.00';

/** A rule for every rail and currency the rails carry, cycling through the three types. */
function fullSchedule(): unknown[] {
  const rules: unknown[] = [];
  for (const rail of RAILS) {
    for (const currency of SUPPORTED_CURRENCIES) {
      const bounds = railBounds(rail, currency);
      if (!bounds) continue;
      const kind = rules.length % 3;
      const id = `${rail}_${currency.toLowerCase()}`;
      const money = (minor: bigint) => formatAmount(minor, currency);
      if (kind === 0) rules.push({ id, rail, currency, type: 'fixed', fixed: money(bounds.min) });
      else if (kind === 1) {
        rules.push({
          id,
          rail,
          currency,
          type: 'percentage',
          percent_bps: 150,
          min: money(bounds.min),
          max: money(bounds.min * 100n),
        });
      } else {
        const step = (bounds.max - bounds.min) / BigInt(FEE_TIERS_MAX) || 1n;
        rules.push({
          id,
          rail,
          currency,
          type: 'tiered',
          tiers: Array.from({ length: FEE_TIERS_MAX }, (_, i) =>
            i === FEE_TIERS_MAX - 1
              ? { percent_bps: 10 }
              : {
                  up_to: money(bounds.min + step * BigInt(i + 1)),
                  fixed: money(bounds.min),
                  percent_bps: 20,
                },
          ),
        });
      }
    }
  }
  return rules;
}

function decisionBench(decisions: number): string[] {
  const stored = JSON.parse(JSON.stringify(fullSchedule()));
  const parseStarted = performance.now();
  const rules = feeRulesFromStored(stored);
  const parseMs = performance.now() - parseStarted;
  const schedule: Pick<FeeSchedule, 'version' | 'rules'> = { version: 2, rules };
  const pairs = rules.map((r) => ({
    rail: r.rail,
    currency: r.currency,
    bounds: r.rail === FEE_CONVERSION_RAIL ? undefined : railBounds(r.rail, r.currency),
  }));
  const random = seededRandom(GENERATOR_SEED);
  const micros: number[] = [];
  let charged = 0n;
  const started = performance.now();
  for (let i = 0; i < decisions; i++) {
    const pair = pairs[Math.floor(random() * pairs.length)] as (typeof pairs)[number];
    const span = Number((pair.bounds?.max ?? 1n) - (pair.bounds?.min ?? 0n));
    const amountMinor = (pair.bounds?.min ?? 1n) + BigInt(Math.floor(random() * span));
    const begin = performance.now();
    charged += decideFee(schedule, {
      rail: pair.rail as Rail,
      currency: pair.currency,
      amountMinor,
    }).feeMinor;
    micros.push((performance.now() - begin) * 1_000);
  }
  const totalMs = performance.now() - started;
  micros.sort((a, b) => a - b);
  if (charged < 0n) throw new Error('a negative fee');
  log(`fees: ${rules.length} rules (every rail and currency), ${decisions} decisions`);
  return [
    '| rules | parse ms | decisions | decisions/s | p50 µs | p99 µs |',
    '| ----: | -------: | --------: | ----------: | -----: | -----: |',
    `| ${rules.length} | ${fixed(parseMs, 2)} | ${decisions} | ${Math.round(decisions / (totalMs / 1_000))} | ${fixed(percentile(micros, 50), 2)} | ${fixed(percentile(micros, 99), 2)} |`,
    '',
  ];
}

/** The store with its statements and transactions counted (inside transactions too). */
function counted(store: Store): { store: Store; counts: { statements: number; transactions: number } } {
  const counts = { statements: 0, transactions: 0 };
  const wrap = (q: Queryable): Queryable => ({
    query: (sql, params) => {
      counts.statements++;
      return q.query(sql, params);
    },
    exec: (sql) => {
      counts.statements++;
      return q.exec(sql);
    },
  });
  const outer = wrap(store);
  return {
    counts,
    store: {
      ...store,
      driver: store.driver,
      query: outer.query,
      exec: outer.exec,
      transaction: (fn) => {
        counts.transactions++;
        return store.transaction((tx) => fn(wrap(tx)));
      },
      close: () => store.close(),
      ...(store.listen ? { listen: store.listen.bind(store) } : {}),
    },
  };
}

async function shapeBench(transfers: number, concurrency: number): Promise<string[]> {
  const raw = await openPgliteStore(undefined);
  const { store, counts } = counted(raw);
  const deps = systemDeps(store, 'sandbox');
  await migrate(store);
  // The API is measured, not the rate limiter (as in the transfer case).
  const app = await buildApp({
    deps,
    rateLimits: { ...defaultRateLimitSettings('sandbox'), enabled: false },
  });
  const rows: string[] = [
    '| organization | transfers | statements/transfer | transactions/transfer | transfers/s | failed |',
    '| ------------ | --------: | ------------------: | --------------------: | ----------: | -----: |',
  ];
  try {
    for (const withFees of [false, true]) {
      const { key } = await issueApiKey(deps, {
        organizationName: `Bench fees ${withFees ? 'on' : 'off'}`,
        scopes: ['read', 'write', 'admin'],
      });
      const call = async (method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown) => {
        const response = await app.inject({
          method,
          url,
          headers: { authorization: `Bearer ${key}` },
          ...(body === undefined ? {} : { payload: body as object }),
        });
        return { status: response.statusCode, data: JSON.parse(response.body) };
      };
      if (withFees) {
        const put = await call('PUT', '/v1/fee-schedule', {
          rules: [
            {
              id: 'mm_kes',
              rail: 'mobile_money',
              currency: 'KES',
              type: 'percentage',
              percent_bps: 150,
              min: '10.00',
            },
          ],
        });
        if (put.status !== 200) throw new Error(`fee schedule refused: ${JSON.stringify(put.data)}`);
      }
      const sources: string[] = [];
      for (let i = 0; i < SOURCE_WALLETS; i++) {
        // A customer per wallet: one customer's tier limits would stop the run, not the writer.
        const owner = await call('POST', '/v1/customers', { type: 'individual', name: `Bench ${i}` });
        const wallet = await call('POST', '/v1/wallets', { owner: owner.data.id, currency: 'KES' });
        await call('POST', `/v1/sandbox/wallets/${wallet.data.id}/fund`, { amount: FUNDS });
        sources.push(wallet.data.id);
      }
      // Warm the process caches (policy, fee schedule, fee income account) as a running server has them.
      await call('POST', '/v1/transfers', payout(sources[0] as string));
      const before = { ...counts };
      let next = 0;
      let failed = 0;
      const failures = new Map<string, number>();
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < transfers) {
            const i = next++;
            const answer = await call('POST', '/v1/transfers', payout(sources[i % sources.length] as string));
            if (answer.status !== 201) {
              failed++;
              failures.set(answer.data.code, (failures.get(answer.data.code) ?? 0) + 1);
            }
          }
        }),
      );
      const seconds = (performance.now() - started) / 1_000;
      const statements = counts.statements - before.statements;
      const transactions = counts.transactions - before.transactions;
      rows.push(
        `| ${withFees ? 'every payout pays a fee' : 'no fee rules'} | ${transfers} | ${fixed(statements / transfers, 2)} | ${fixed(transactions / transfers, 3)} | ${Math.round(transfers / seconds)} | ${failed} |`,
      );
      log(
        `fees: ${withFees ? 'with' : 'without'} fees, ${transfers} payouts in ${fixed(seconds, 2)} s${failed > 0 ? `, refused: ${[...failures].map(([c, n]) => `${n}×${c}`).join(' ')}` : ''}`,
      );
    }
  } finally {
    await app.close();
    await raw.close();
  }
  rows.push('');
  return rows;
}

function payout(source: string) {
  return {
    source,
    destination: { type: 'mobile_money', network: 'mpesa', phone: '+254711000999' },
    amount: PAYOUT_AMOUNT,
    currency: 'KES',
  };
}

export async function runFeesBench(values: BenchValues): Promise<number> {
  const env = process.env;
  const decisions = wholeNumber(
    '--fee-decisions',
    textOption(values, 'fee-decisions') ?? env.BENCH_FEE_DECISIONS,
    DECISIONS_DEFAULT,
    1,
    DECISIONS_MAX,
  );
  const transfers = wholeNumber(
    '--fee-transfers',
    textOption(values, 'fee-transfers') ?? env.BENCH_FEE_TRANSFERS,
    TRANSFERS_DEFAULT,
    1,
    TRANSFERS_MAX,
  );
  const concurrency = wholeNumber(
    '--fee-concurrency',
    textOption(values, 'fee-concurrency') ?? env.BENCH_FEE_CONCURRENCY,
    CONCURRENCY_DEFAULT,
    1,
    CONCURRENCY_MAX,
  );
  process.stdout.write(
    [...decisionBench(decisions), ...(await shapeBench(transfers, concurrency))].join('\n'),
  );
  return 0;
}
