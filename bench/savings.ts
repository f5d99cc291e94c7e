/**
 * The savings case (`npm run bench -- --cases savings`): the day work of one organization's savings book, on
 * an in-memory PGlite. `--savings-accounts` accounts are opened and funded (through the use cases, as the API
 * does), then one day is accrued for all of them, then a month (the day work's catch-up after a test clock's
 * advance, with the month's capitalisation: one entry and one event per account). Prints the wall time and
 * the accounts accrued per second for each, and the statements and transactions per account-day.
 */

import { systemDeps } from '../src/app/deps.ts';
import { addDays } from '../src/domain/days.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { createCustomer } from '../src/modules/customers/index.ts';
import { updateOrganizationProfile } from '../src/modules/organization/index.ts';
import { openSavingsAccount } from '../src/modules/savings/useCases/accounts.ts';
import { accrueSavingsThrough } from '../src/modules/savings/useCases/dayWork.ts';
import { createSavingsProduct } from '../src/modules/savings/useCases/products.ts';
import { utcDay } from '../src/modules/testClock/domain.ts';
import { fundWallet } from '../src/modules/transfers/useCases/railCredits.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPgliteStore } from '../src/store/pglite.ts';
import type { Queryable, Store } from '../src/store/store.ts';
import { type BenchValues, fixed, log, textOption, wholeNumber } from './options.ts';

export const SAVINGS_USAGE = `Savings (the day work of a savings book: a day, then a month with its capitalisation; PGlite in memory):

  --savings-accounts N   accounts in the book (BENCH_SAVINGS_ACCOUNTS, default 2000)
`;

export const SAVINGS_OPTIONS = {
  'savings-accounts': { type: 'string' },
} as const;

const ACCOUNTS_DEFAULT = 2_000;
const ACCOUNTS_MAX = 200_000;
/** Each account's deposit. */
const DEPOSIT = '25000.00';

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
    },
  };
}

export async function runSavingsBench(values: BenchValues): Promise<number> {
  const accounts = wholeNumber(
    '--savings-accounts',
    textOption(values, 'savings-accounts') ?? process.env.BENCH_SAVINGS_ACCOUNTS,
    ACCOUNTS_DEFAULT,
    1,
    ACCOUNTS_MAX,
  );
  const raw = await openPgliteStore(undefined);
  const { store, counts } = counted(raw);
  // Production's deps: the real clock, so the book's days are the real ones, passed explicitly below.
  const deps = systemDeps(store, 'production');
  try {
    await migrate(store);
    const { record } = await issueApiKey(deps, { organizationName: 'Bench savings', scopes: ['admin'] });
    const organizationId = record.organizationId;
    // Savings is the digital banking product: the organization launches it beside mobile money.
    await store.transaction((tx) =>
      updateOrganizationProfile(tx, deps, organizationId, { products: ['mobile_money', 'digital_banking'] }),
    );
    const product = await store.transaction((tx) =>
      createSavingsProduct(
        tx,
        deps,
        organizationId,
        {
          name: 'Bench',
          currency: 'KES',
          annual_rate_bps: 725,
          day_count: 'actual_365_fixed',
          access: 'instant',
        },
        'bench',
      ),
    );
    const setupStarted = performance.now();
    for (let i = 0; i < accounts; i++) {
      await store.transaction(async (tx) => {
        const owner = (
          await createCustomer(tx, deps, organizationId, { type: 'individual', name: `Saver ${i}` })
        ).id;
        const view = await openSavingsAccount(tx, deps, organizationId, { product: product.id, owner });
        await fundWallet(tx, deps, organizationId, view.account.walletId, DEPOSIT, {});
      });
    }
    log(
      `savings: ${accounts} accounts opened and funded in ${fixed((performance.now() - setupStarted) / 1_000, 1)} s`,
    );
    const today = utcDay(deps.now());
    const rows = [
      '| accounts | run | account-days | seconds | account-days/s | statements/account-day | transactions/account-day |',
      '| -------: | --- | -----------: | ------: | -------------: | ---------------------: | -----------------------: |',
    ];
    for (const [run, through, days] of [
      ['one day', addDays(today, 1), 1],
      ['a month, capitalised', addDays(today, 32), 31],
    ] as const) {
      const before = { ...counts };
      const started = performance.now();
      await accrueSavingsThrough(deps, organizationId, through);
      const seconds = (performance.now() - started) / 1_000;
      const accountDays = accounts * days;
      rows.push(
        `| ${accounts} | ${run} | ${accountDays} | ${fixed(seconds, 2)} | ${Math.round(accountDays / seconds)} | ${fixed((counts.statements - before.statements) / accountDays, 3)} | ${fixed((counts.transactions - before.transactions) / accountDays, 4)} |`,
      );
      log(`savings: ${run}, ${accountDays} account-days in ${fixed(seconds, 2)} s`);
    }
    rows.push('');
    process.stdout.write(rows.join('\n'));
    return 0;
  } finally {
    await raw.close();
  }
}
