/**
 * Savings' day work: each day's accrual, booked from the organization's interest expense account to its
 * interest payable account in whole units (the residual below one minor unit stays on the account), and
 * each month's capitalisation from interest payable to the wallet; once per account and day.
 */

import type { DayWork, Deps } from '../../../app/deps.ts';
import { newEvent, recordEvents } from '../../../app/events.ts';
import { addDays } from '../../../domain/days.ts';
import type { EventRecord } from '../../../domain/events.ts';
import { type Currency, formatAmount } from '../../../domain/money.ts';
import {
  directEntry,
  directPostings,
  PostingSession,
  refusalError,
  walletBalances,
  ZERO_SUMS,
} from '../../ledger/index.ts';
import {
  ACCRUAL_DENOMINATOR,
  accrueDay,
  addAccrual,
  capitalise,
  isMonthEnd,
  previousDay,
  rateOn,
} from '../domain.ts';
import {
  lockSavingsAccounts,
  organizationsWithSavings,
  type SavingsAccount,
  savingsAccountsDue,
  updateSavingsAccounts,
} from '../repository/accounts.ts';
import { insertSavingsAccruals, type SavingsAccrualRow } from '../repository/accruals.ts';
import { findSavingsProduct, type SavingsProduct } from '../repository/products.ts';
import { interestAccounts } from './ledger.ts';

/** Accounts one accrual transaction covers at most: a day of a large book is done in slices of this many. */
export const SAVINGS_ACCRUAL_ACCOUNTS_PER_TRANSACTION = 500;

/** What the steps of one day's accrual share: the transaction's posting session, the interest accounts, the day. */
interface AccrualPass {
  deps: Deps;
  organizationId: string;
  day: string;
  now: Date;
  session: PostingSession;
  interestAccounts: Map<Currency, { expense: string; payable: string }>;
}

/** One account's accrual for the day, decided before anything is posted. */
interface DecidedAccrual {
  account: SavingsAccount;
  product: SavingsProduct;
  row: Omit<SavingsAccrualRow, 'bookingEntryId' | 'capitalizationEntryId'>;
  capitalisedMinor: bigint;
}

/**
 * Each due account's accrual for the day: its closing balance at the rate in force that day, added to what
 * it accrued before; and, per currency, the whole units the day made newly payable.
 */
function decideAccruals(
  pass: AccrualPass,
  due: readonly SavingsAccount[],
  products: Map<string, SavingsProduct>,
): { decided: DecidedAccrual[]; booked: Map<Currency, bigint> } {
  const { session, day, organizationId, now } = pass;
  const booked = new Map<Currency, bigint>();
  const decided: DecidedAccrual[] = [];
  for (const account of due) {
    const product = products.get(account.productId);
    if (!product) throw new Error(`savings account ${account.walletId} lost its product`);
    const sums = session.sumsOf(account.walletId);
    if (!sums) throw new Error(`savings account ${account.walletId} has no ledger account`);
    const balanceMinor = walletBalances(sums).currentMinor;
    const rate = rateOn(product.rates, day)?.annualRateBps ?? 0;
    const accrual = accrueDay(day, balanceMinor, rate, product.dayCount);
    const { accrued, newlyPayableMinor } = addAccrual(
      { parts: account.accruedParts, payableMinor: account.payableMinor },
      accrual.parts,
    );
    booked.set(product.currency, (booked.get(product.currency) ?? 0n) + newlyPayableMinor);
    decided.push({
      account: {
        ...account,
        accruedThrough: day,
        accruedParts: accrued.parts,
        payableMinor: accrued.payableMinor,
      },
      product,
      row: {
        walletId: account.walletId,
        day,
        organizationId,
        balanceMinor,
        annualRateBps: rate,
        dayCountDays: accrual.days,
        dayCountBasis: accrual.basis,
        parts: accrual.parts,
        accruedPartsAfter: accrued.parts,
        bookedMinor: newlyPayableMinor,
        capitalizedMinor: 0n,
        createdAt: now,
      },
      capitalisedMinor: 0n,
    });
  }
  return { decided, booked };
}

/** The day's booking: one entry a currency from interest expense to interest payable; each entry's id. */
function bookAccruals(pass: AccrualPass, booked: Map<Currency, bigint>): Map<Currency, string> {
  const bookingEntries = new Map<Currency, string>();
  for (const [currency, minor] of booked) {
    if (minor === 0n) continue;
    const l = pass.interestAccounts.get(currency);
    if (!l) throw new Error(`no interest accounts for ${currency}`);
    const entry = directEntry(
      pass.deps,
      pass.organizationId,
      directPostings(l.expense, l.payable, minor, currency),
      pass.now,
    );
    const refusal = pass.session.tryPost(entry);
    if (refusal) throw refusalError(refusal, 'interest accrual');
    bookingEntries.set(currency, entry.id);
  }
  return bookingEntries;
}

/** The `savings.interest.capitalized` event of an account's capitalisation. */
function capitalisationEvent(
  pass: AccrualPass,
  item: DecidedAccrual,
  capitalisedMinor: bigint,
  entryId: string,
): EventRecord {
  const { account, product } = item;
  const { day } = pass;
  return newEvent(
    pass.deps,
    {
      organizationId: pass.organizationId,
      type: 'savings.interest.capitalized',
      resourceId: account.walletId,
      data: {
        object: 'savings_interest_capitalization',
        savings_account: account.walletId,
        product: product.id,
        amount: formatAmount(capitalisedMinor, product.currency),
        currency: product.currency,
        month: day.slice(0, 7),
        day,
        balance_after: formatAmount(
          walletBalances(pass.session.sumsOf(account.walletId) ?? ZERO_SUMS).currentMinor,
          product.currency,
        ),
        interest_paid: formatAmount(account.interestPaidMinor, product.currency),
        residual_numerator: account.accruedParts.toString(),
        denominator: ACCRUAL_DENOMINATOR.toString(),
        journal_entry: entryId,
      },
    },
    pass.now,
  );
}

/**
 * A month's last day: each account's whole units capitalised from interest payable to its wallet (the
 * decided accruals updated in place); the entries by wallet, and the events.
 */
function capitaliseMonth(
  pass: AccrualPass,
  decided: DecidedAccrual[],
): { capitalisationEntries: Map<string, string>; events: EventRecord[] } {
  const capitalisationEntries = new Map<string, string>();
  const events: EventRecord[] = [];
  for (const item of decided) {
    const { account, product } = item;
    const { capitalisedMinor, accrued } = capitalise({
      parts: account.accruedParts,
      payableMinor: account.payableMinor,
    });
    if (capitalisedMinor === 0n) continue;
    const l = pass.interestAccounts.get(product.currency);
    if (!l) throw new Error(`no interest accounts for ${product.currency}`);
    const entry = directEntry(
      pass.deps,
      pass.organizationId,
      directPostings(l.payable, account.walletId, capitalisedMinor, product.currency),
      pass.now,
    );
    // A frozen or closed wallet receives nothing new: its interest stays payable until a month's end
    // finds it able to receive.
    if (pass.session.tryPost(entry)) continue;
    capitalisationEntries.set(account.walletId, entry.id);
    item.capitalisedMinor = capitalisedMinor;
    item.account = {
      ...account,
      accruedParts: accrued.parts,
      payableMinor: accrued.payableMinor,
      interestPaidMinor: account.interestPaidMinor + capitalisedMinor,
    };
    events.push(capitalisationEvent(pass, item, capitalisedMinor, entry.id));
  }
  return { capitalisationEntries, events };
}

/**
 * Accrues one day for the accounts among `walletIds` whose next day it is, in one transaction: each
 * account's closing balance (its posted balance when the day is done: see docs/PRODUCTS.md) at the rate in
 * force that day; the whole units the day took each account's sum across booked in one entry from interest
 * expense to interest payable; on a month's last day each account's whole units capitalised from interest
 * payable to its wallet. An account already done for the day (another pass) is left alone; the primary key
 * (account, day) refuses a second accrual in any case.
 */
async function accrueDayFor(
  deps: Deps,
  organizationId: string,
  walletIds: readonly string[],
  day: string,
  products: Map<string, SavingsProduct>,
): Promise<void> {
  await deps.store.transaction(async (tx) => {
    const locked = await lockSavingsAccounts(tx, walletIds);
    const due = locked.filter((a) => a.accruedThrough === previousDay(day));
    if (due.length === 0) return;
    const currencies = new Set(due.map((a) => products.get(a.productId)?.currency as Currency));
    const ledgerAccounts = new Map<Currency, { expense: string; payable: string }>();
    for (const currency of currencies) {
      ledgerAccounts.set(currency, await interestAccounts(tx, deps, organizationId, currency));
    }
    const session = new PostingSession(tx);
    await session.lock([
      ...due.map((a) => a.walletId),
      ...[...ledgerAccounts.values()].flatMap((l) => [l.expense, l.payable]),
    ]);
    const now = deps.now();
    const pass: AccrualPass = { deps, organizationId, day, now, session, interestAccounts: ledgerAccounts };
    const { decided, booked } = decideAccruals(pass, due, products);
    // The day's booking first: capitalisation then moves what is payable.
    const bookingEntries = bookAccruals(pass, booked);
    const { capitalisationEntries, events } = isMonthEnd(day)
      ? capitaliseMonth(pass, decided)
      : { capitalisationEntries: new Map<string, string>(), events: [] };
    await session.flush(now);
    await insertSavingsAccruals(
      tx,
      decided.map((item) => ({
        ...item.row,
        capitalizedMinor: item.capitalisedMinor,
        bookingEntryId:
          item.row.bookedMinor > 0n ? (bookingEntries.get(item.product.currency) ?? null) : null,
        capitalizationEntryId: capitalisationEntries.get(item.account.walletId) ?? null,
      })),
    );
    await updateSavingsAccounts(
      tx,
      decided.map((item) => ({ ...item.account, updatedAt: now })),
    );
    await recordEvents(tx, deps, events);
  });
}

/**
 * Accrues every day before `throughDay` (the organization's today: a day is accrued once it has ended) not
 * accrued yet, for each of the organization's savings accounts, slice by slice of accounts, day by day.
 */
export async function accrueSavingsThrough(
  deps: Deps,
  organizationId: string,
  throughDay: string,
): Promise<void> {
  const lastDay = previousDay(throughDay);
  let after: string | undefined;
  for (;;) {
    const page = await savingsAccountsDue(
      deps.store,
      organizationId,
      lastDay,
      after,
      SAVINGS_ACCRUAL_ACCOUNTS_PER_TRANSACTION,
    );
    if (page.length === 0) return;
    const products = new Map<string, SavingsProduct>();
    for (const productId of new Set(page.map((a) => a.productId))) {
      const product = await findSavingsProduct(deps.store, organizationId, productId);
      if (product) products.set(productId, product);
    }
    const ids = page.map((a) => a.walletId);
    const [first = lastDay] = page.map((a) => a.accruedThrough).sort();
    for (let day = addDays(first, 1); day <= lastDay; day = addDays(day, 1)) {
      await accrueDayFor(deps, organizationId, ids, day, products);
    }
    if (page.length < SAVINGS_ACCRUAL_ACCOUNTS_PER_TRANSACTION) return;
    after = page.at(-1)?.walletId;
  }
}

/** Savings accrual and capitalisation as the organization's day work. */
export const SAVINGS_DAY_WORK: DayWork = {
  name: 'savings_accrual',
  organizations: (deps, after, limit) => organizationsWithSavings(deps.store, after, limit),
  catchUp: accrueSavingsThrough,
};
