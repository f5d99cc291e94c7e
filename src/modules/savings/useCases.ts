/**
 * Savings products: products as data per organization (terms fixed, rates effective-dated), savings accounts
 * (wallets of a product), the daily accrual and monthly capitalisation run as the organization's day work,
 * withdrawal notices and withdrawals. Every movement goes through a PostingSession: each day's whole units of
 * interest from the organization's `interest_expense` account to its `interest_payable` account, each month's
 * from `interest_payable` to the wallet, a withdrawal from the wallet to another of the same owner (with an
 * early-withdrawal penalty to the fee income account). The residual below one minor unit stays on the account.
 */

import type { DayWork, Deps, MovementSourceGuard } from '../../app/deps.ts';
import { newEvent, recordEvents } from '../../app/events.ts';
import { feeIncomeAccount } from '../../app/fees.ts';
import { PostingSession, refusalError } from '../../app/posting/session.ts';
import { requireProduct } from '../../app/products.ts';
import { createWallet } from '../../app/wallets.ts';
import { AppError, resourceMissing, validationError } from '../../domain/errors.ts';
import type { EventRecord } from '../../domain/events.ts';
import { numberSourceOf } from '../../domain/jsonNumbers.ts';
import { directPostings, type Posting, walletBalances, ZERO_SUMS } from '../../domain/ledger.ts';
import type { Metadata } from '../../domain/metadata.ts';
import {
  type Currency,
  checkSingleAmount,
  formatAmount,
  isCurrency,
  parseAmount,
} from '../../domain/money.ts';
import { type Page, toPage } from '../../domain/pagination.ts';
import { ensureSystemAccount, type JournalEntry } from '../../store/repositories/ledger.ts';
import { findWallet } from '../../store/repositories/wallets.ts';
import type { Queryable, Store } from '../../store/store.ts';
import { organizationNow, utcDay } from '../testClock/index.ts';
import {
  ACCRUAL_DENOMINATOR,
  accrueDay,
  addAccrual,
  addDays,
  capitalise,
  checkAccess,
  checkRateBps,
  type DayCountConvention,
  decideWithdrawal,
  isDayCountConvention,
  isMonthEnd,
  maturityDay,
  previousDay,
  rateOn,
  SAVINGS_PRODUCT_NAME_CHARS_MAX,
} from './domain.ts';
import {
  findSavingsAccount,
  findSavingsNotice,
  findSavingsProduct,
  insertSavingsAccount,
  insertSavingsAccruals,
  insertSavingsNotice,
  insertSavingsProduct,
  insertSavingsRate,
  insertSavingsWithdrawal,
  listSavingsAccounts as listSavingsAccountRows,
  listSavingsAccruals as listSavingsAccrualRows,
  listSavingsNotices as listSavingsNoticeRows,
  listSavingsProducts as listSavingsProductRows,
  lockSavingsAccounts,
  lockSavingsProduct,
  organizationsWithSavings,
  type SavingsAccount,
  type SavingsAccrualRow,
  type SavingsNotice,
  type SavingsProduct,
  type SavingsWithdrawal,
  savingsAccountsDue,
  savingsWalletIds,
  updateSavingsAccounts,
  updateSavingsNoticeStatus,
} from './repository.ts';

export type { SavingsAccount, SavingsAccrualRow, SavingsNotice, SavingsProduct, SavingsWithdrawal };

/** The `rail` the interest accounts are filed under: interest is the organization's own, whatever the rail. */
export const INTEREST_ACCOUNT_RAIL = 'internal';
/** Accounts one accrual transaction covers at most: a day of a large book is done in slices of this many. */
export const SAVINGS_ACCRUAL_ACCOUNTS_PER_TRANSACTION = 500;
/** Wallet ids whose savings-or-not answer one process keeps at most. */
export const SAVINGS_WALLET_CACHE_ENTRIES_MAX = 100_000;

/** The organization's today: its test clock's in the sandbox, the real one otherwise. */
async function today(db: Queryable, deps: Deps, organizationId: string): Promise<string> {
  return utcDay(await organizationNow(db, deps, organizationId));
}

// ---------------------------------------------------------------------------------------------- products

export interface CreateSavingsProductInput {
  name: unknown;
  currency: unknown;
  annual_rate_bps: unknown;
  day_count: unknown;
  minimum_balance?: unknown;
  access: unknown;
  notice_days?: unknown;
  term_days?: unknown;
  early_withdrawal_penalty_bps?: unknown;
  metadata?: Metadata;
}

export async function createSavingsProduct(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: CreateSavingsProductInput,
  createdBy: string,
): Promise<SavingsProduct> {
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (name.length === 0 || name.length > SAVINGS_PRODUCT_NAME_CHARS_MAX) {
    throw validationError('name', `name is 1 to ${SAVINGS_PRODUCT_NAME_CHARS_MAX} characters.`);
  }
  if (typeof input.currency !== 'string' || !isCurrency(input.currency))
    throw validationError('currency', 'currency is not supported', 'invalid_value');
  const currency: Currency = input.currency;
  const rate = checkRateBps(input.annual_rate_bps, 'annual_rate_bps');
  if (!isDayCountConvention(input.day_count)) {
    throw validationError(
      'day_count',
      'day_count must be one of: actual_365_fixed, actual_360, thirty_360',
      'invalid_value',
    );
  }
  const dayCount: DayCountConvention = input.day_count;
  const minimumBalanceMinor =
    input.minimum_balance === undefined
      ? 0n
      : parseAmount(
          input.minimum_balance,
          currency,
          'minimum_balance',
          numberSourceOf(input, 'minimum_balance'),
        );
  if (minimumBalanceMinor < 0n)
    throw validationError('minimum_balance', 'minimum_balance cannot be negative');
  const access = checkAccess({
    access: input.access,
    noticeDays: input.notice_days,
    termDays: input.term_days,
    penaltyBps: input.early_withdrawal_penalty_bps,
  });
  const now = deps.now();
  const product: SavingsProduct = {
    id: deps.newId('savingsProduct'),
    organizationId,
    name,
    currency,
    dayCount,
    minimumBalanceMinor,
    ...access,
    metadata: input.metadata ?? {},
    createdBy,
    createdAt: now,
    rates: [{ effectiveFrom: await today(tx, deps, organizationId), annualRateBps: rate }],
  };
  await insertSavingsProduct(tx, product);
  return product;
}

export async function getSavingsProduct(
  deps: Deps,
  organizationId: string,
  id: string,
): Promise<SavingsProduct> {
  const product = await findSavingsProduct(deps.store, organizationId, id);
  if (!product) throw resourceMissing('savings_product', id);
  return product;
}

export async function listSavingsProducts(
  deps: Deps,
  organizationId: string,
  request: { limit: number; startingAfter?: string | undefined },
): Promise<Page<SavingsProduct>> {
  const rows = await listSavingsProductRows(
    deps.store,
    organizationId,
    request.startingAfter,
    request.limit + 1,
  );
  return toPage(rows, request.limit);
}

/**
 * Appends a rate from a day on (today on the organization's clock by default). Only today or later: a day
 * is accrued once it has ended, so no day already accrued can change its rate.
 */
export async function addSavingsRate(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  productId: string,
  input: { annual_rate_bps: unknown; effective_from?: unknown },
  createdBy: string,
): Promise<SavingsProduct> {
  await lockSavingsProduct(tx, organizationId, productId);
  const product = await findSavingsProduct(tx, organizationId, productId);
  if (!product) throw resourceMissing('savings_product', productId);
  const annualRateBps = checkRateBps(input.annual_rate_bps, 'annual_rate_bps');
  const now = await today(tx, deps, organizationId);
  const effectiveFrom = input.effective_from === undefined ? now : input.effective_from;
  if (
    typeof effectiveFrom !== 'string' ||
    !/^\d{4}-\d{2}-\d{2}$/.test(effectiveFrom) ||
    isNotCalendarDay(effectiveFrom)
  ) {
    throw validationError('effective_from', 'effective_from is a day, YYYY-MM-DD', 'invalid_format');
  }
  if (effectiveFrom < now) {
    throw new AppError({
      status: 422,
      code: 'savings_rate_in_past',
      title: 'A rate cannot start in the past',
      detail: `Today on the organization's clock is ${now}; days before it may already be accrued at the rate they had.`,
      param: 'effective_from',
    });
  }
  if (!(await insertSavingsRate(tx, productId, { effectiveFrom, annualRateBps }, createdBy, deps.now()))) {
    throw new AppError({
      status: 409,
      code: 'savings_rate_exists',
      title: 'A rate already starts that day',
      detail: `Product ${productId} already has a rate from ${effectiveFrom}; rates are never changed, choose another day.`,
      param: 'effective_from',
    });
  }
  const rates = [...product.rates, { effectiveFrom, annualRateBps }].sort((a, b) =>
    a.effectiveFrom < b.effectiveFrom ? -1 : 1,
  );
  return { ...product, rates };
}

/** True when the text is not a real calendar day (2027-02-30). */
function isNotCalendarDay(day: string): boolean {
  const parsed = Date.parse(`${day}T00:00:00.000Z`);
  return Number.isNaN(parsed) || utcDay(new Date(parsed)) !== day;
}

// ---------------------------------------------------------------------------------------------- accounts

export interface SavingsAccountView {
  account: SavingsAccount;
  product: SavingsProduct;
  balanceMinor: bigint;
  currency: Currency;
  ownerId: string;
  metadata: Metadata;
  status: string;
}

export async function openSavingsAccount(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: { product: string; owner: string; metadata?: Metadata },
): Promise<SavingsAccountView> {
  await requireProduct(deps, organizationId, 'digital_banking', undefined, tx);
  const product = await findSavingsProduct(tx, organizationId, input.product);
  if (!product) throw resourceMissing('savings_product', input.product, 'product');
  const wallet = await createWallet(tx, deps, organizationId, {
    owner: input.owner,
    currency: product.currency,
    metadata: input.metadata,
  });
  const openedOn = await today(tx, deps, organizationId);
  const account: SavingsAccount = {
    walletId: wallet.id,
    organizationId,
    productId: product.id,
    openedOn,
    maturesOn: product.termDays === null ? null : maturityDay(openedOn, product.termDays),
    accruedThrough: previousDay(openedOn),
    accruedParts: 0n,
    payableMinor: 0n,
    interestPaidMinor: 0n,
    createdAt: wallet.createdAt,
    updatedAt: wallet.createdAt,
  };
  await insertSavingsAccount(tx, account);
  const view: SavingsAccountView = {
    account,
    product,
    balanceMinor: 0n,
    currency: product.currency,
    ownerId: wallet.ownerId,
    metadata: wallet.metadata,
    status: wallet.status,
  };
  await recordEvents(tx, deps, [
    newEvent(
      deps,
      {
        organizationId,
        type: 'savings.account.opened',
        resourceId: wallet.id,
        data: savingsAccountJson(view),
      },
      wallet.createdAt,
    ),
  ]);
  return view;
}

async function viewOf(db: Queryable, account: SavingsAccount): Promise<SavingsAccountView> {
  const [product, wallet] = await Promise.all([
    findSavingsProduct(db, account.organizationId, account.productId),
    findWallet(db, account.organizationId, account.walletId),
  ]);
  if (!product || !wallet) throw new Error(`savings account ${account.walletId} lost its product or wallet`);
  return {
    account,
    product,
    balanceMinor: wallet.currentMinor,
    currency: product.currency,
    ownerId: wallet.ownerId,
    metadata: wallet.metadata,
    status: wallet.status,
  };
}

export async function getSavingsAccount(
  deps: Deps,
  organizationId: string,
  id: string,
): Promise<SavingsAccountView> {
  const account = await findSavingsAccount(deps.store, organizationId, id);
  if (!account) throw resourceMissing('savings_account', id);
  return viewOf(deps.store, account);
}

export async function listSavingsAccounts(
  deps: Deps,
  organizationId: string,
  request: { limit: number; startingAfter?: string | undefined; productId?: string | undefined },
): Promise<Page<SavingsAccountView>> {
  const rows = await listSavingsAccountRows(deps.store, organizationId, request, request.limit + 1);
  const page = toPage(rows, request.limit);
  return { data: await Promise.all(page.data.map((a) => viewOf(deps.store, a))), hasMore: page.hasMore };
}

export async function listSavingsAccruals(
  deps: Deps,
  organizationId: string,
  walletId: string,
  request: { limit: number; beforeDay?: string | undefined },
): Promise<Page<SavingsAccrualRow>> {
  const account = await findSavingsAccount(deps.store, organizationId, walletId);
  if (!account) throw resourceMissing('savings_account', walletId);
  const rows = await listSavingsAccrualRows(deps.store, walletId, request.beforeDay, request.limit + 1);
  return toPage(rows, request.limit);
}

/** The account as the API and its events show it. */
export function savingsAccountJson(view: SavingsAccountView): Record<string, unknown> {
  const { account, product } = view;
  const money = (minor: bigint) => formatAmount(minor, view.currency);
  const carried = account.accruedParts - account.payableMinor * ACCRUAL_DENOMINATOR;
  return {
    object: 'savings_account',
    id: account.walletId,
    wallet: account.walletId,
    product: product.id,
    owner: view.ownerId,
    currency: view.currency,
    status: view.status,
    balance: money(view.balanceMinor),
    opened_on: account.openedOn,
    matures_on: account.maturesOn,
    accrued_through: account.accruedThrough,
    accrued_interest: {
      payable: money(account.payableMinor),
      residual_numerator: carried.toString(),
      denominator: ACCRUAL_DENOMINATOR.toString(),
    },
    interest_paid: money(account.interestPaidMinor),
    metadata: view.metadata,
    created_at: account.createdAt.toISOString(),
  };
}

// ---------------------------------------------------------------------------- money never leaves as a transfer

const savingsWalletCaches = new WeakMap<Store, Map<string, boolean>>();

/**
 * Whether a wallet is a savings account. A wallet is one from the transaction that creates it, or never, so
 * the answer is kept per process once the wallet exists. `db` is the caller's transaction when it is in one
 * (the embedded database has one session).
 */
export async function isSavingsWallet(deps: Deps, db: Queryable, walletId: string): Promise<boolean> {
  let cache = savingsWalletCaches.get(deps.store);
  if (!cache) {
    cache = new Map();
    savingsWalletCaches.set(deps.store, cache);
  }
  const known = cache.get(walletId);
  if (known !== undefined) return known;
  const found = (await savingsWalletIds(db, [walletId])).has(walletId);
  if (cache.size >= SAVINGS_WALLET_CACHE_ENTRIES_MAX) cache.delete(cache.keys().next().value as string);
  cache.set(walletId, found);
  return found;
}

/**
 * Refuses a transfer, batch or conversion from a savings account: money leaves one only as a withdrawal to a
 * wallet of its owner (the database refuses such a transfer too): a movement source guard, see
 * src/app/composition.ts.
 */
export const refuseSavingsSource: MovementSourceGuard = async (deps, db, walletId, param) => {
  if (!(await isSavingsWallet(deps, db, walletId))) return;
  throw new AppError({
    status: 422,
    code: 'savings_account_cannot_send',
    title: 'A savings account cannot send',
    detail: `Wallet ${walletId} is a savings account: it cannot pay out to a rail or another wallet. Withdraw to a wallet of its owner with POST /v1/savings-accounts/${walletId}/withdrawals.`,
    param,
  });
};

// ---------------------------------------------------------------------------- notices and withdrawals

function refused(detail: string, param: string, reason: string): AppError {
  return new AppError({
    status: 422,
    code: 'savings_withdrawal_refused',
    title: 'Withdrawal refused by the product’s rules',
    detail,
    param,
    extensions: { reason },
  });
}

async function lockedAccount(
  tx: Queryable,
  organizationId: string,
  walletId: string,
): Promise<SavingsAccount> {
  const account = await findSavingsAccount(tx, organizationId, walletId, true);
  if (!account) throw resourceMissing('savings_account', walletId);
  return account;
}

/** Gives notice of a withdrawal on a notice product: the amount is available `notice_days` from today. */
export async function giveSavingsNotice(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  walletId: string,
  input: { amount: unknown },
): Promise<{ notice: SavingsNotice; currency: Currency }> {
  const account = await lockedAccount(tx, organizationId, walletId);
  const product = await findSavingsProduct(tx, organizationId, account.productId);
  if (!product) throw new Error(`savings account ${walletId} lost its product`);
  const amountMinor = checkSingleAmount(
    parseAmount(input.amount, product.currency, 'amount', numberSourceOf(input, 'amount')),
    product.currency,
  );
  if (product.access !== 'notice' || product.noticeDays === null) {
    throw refused(
      `Product ${product.id} is ${product.access === 'instant' ? 'instant access' : 'a fixed term'}: its withdrawals need no notice.`,
      'amount',
      'notice_not_applicable',
    );
  }
  const givenOn = await today(tx, deps, organizationId);
  const now = deps.now();
  const notice: SavingsNotice = {
    id: deps.newId('savingsNotice'),
    organizationId,
    walletId,
    amountMinor,
    givenOn,
    availableOn: addDays(givenOn, product.noticeDays),
    status: 'open',
    createdAt: now,
    updatedAt: now,
  };
  await insertSavingsNotice(tx, notice);
  await recordEvents(tx, deps, [
    newEvent(
      deps,
      {
        organizationId,
        type: 'savings.notice.given',
        resourceId: notice.id,
        data: savingsNoticeJson(notice, product.currency),
      },
      now,
    ),
  ]);
  return { notice, currency: product.currency };
}

export async function listSavingsNotices(
  deps: Deps,
  organizationId: string,
  walletId: string,
  limit: number,
): Promise<{ notices: SavingsNotice[]; currency: Currency }> {
  const account = await findSavingsAccount(deps.store, organizationId, walletId);
  if (!account) throw resourceMissing('savings_account', walletId);
  const product = await findSavingsProduct(deps.store, organizationId, account.productId);
  if (!product) throw new Error(`savings account ${walletId} lost its product`);
  return {
    notices: await listSavingsNoticeRows(deps.store, organizationId, walletId, limit),
    currency: product.currency,
  };
}

export function savingsNoticeJson(notice: SavingsNotice, currency: Currency): Record<string, unknown> {
  return {
    object: 'savings_notice',
    id: notice.id,
    savings_account: notice.walletId,
    amount: formatAmount(notice.amountMinor, currency),
    currency,
    given_on: notice.givenOn,
    available_on: notice.availableOn,
    status: notice.status,
    created_at: notice.createdAt.toISOString(),
  };
}

export interface WithdrawalInput {
  destination: string;
  amount: unknown;
  notice?: string;
}

/**
 * Withdraws to a wallet of the same owner, by the product's rules (src/modules/savings/domain.ts), in one entry: the
 * amount to the destination and any early-withdrawal penalty to the fee income account. The account's row is
 * locked first, so a notice is used once and two withdrawals see each other's balance.
 */
export async function withdrawSavings(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  walletId: string,
  input: WithdrawalInput,
): Promise<{ withdrawal: SavingsWithdrawal; currency: Currency }> {
  const account = await lockedAccount(tx, organizationId, walletId);
  const product = await findSavingsProduct(tx, organizationId, account.productId);
  if (!product) throw new Error(`savings account ${walletId} lost its product`);
  const currency = product.currency;
  const amountMinor = checkSingleAmount(
    parseAmount(input.amount, currency, 'amount', numberSourceOf(input, 'amount')),
    currency,
  );
  const [source, destination] = await Promise.all([
    findWallet(tx, organizationId, walletId),
    findWallet(tx, organizationId, input.destination),
  ]);
  if (!source) throw new Error(`savings account ${walletId} lost its wallet`);
  if (!destination) throw resourceMissing('wallet', input.destination, 'destination');
  if (destination.id === walletId)
    throw validationError('destination', 'a wallet cannot pay itself', 'same_as_source');
  if (destination.ownerId !== source.ownerId) {
    throw refused(
      `Money leaves a savings account only to a wallet of its owner (${source.ownerId}).`,
      'destination',
      'destination_not_owner',
    );
  }
  if (destination.currency !== currency) {
    throw validationError(
      'destination',
      `destination wallet holds ${destination.currency}, not ${currency}`,
      'currency_mismatch',
    );
  }
  let notice: SavingsNotice | null = null;
  if (input.notice !== undefined) {
    const found = await findSavingsNotice(tx, organizationId, input.notice);
    if (!found || found.walletId !== walletId)
      throw resourceMissing('savings_notice', input.notice, 'notice');
    notice = found;
  }
  const day = await today(tx, deps, organizationId);
  const feeAccount =
    product.access === 'fixed_term' ? await feeIncomeAccount(deps, tx, organizationId, currency) : undefined;
  const session = new PostingSession(tx);
  await session.lock([walletId, destination.id, ...(feeAccount ? [feeAccount] : [])]);
  const sums = session.sumsOf(walletId);
  if (!sums) throw new Error(`savings account ${walletId} has no ledger account`);
  const decision = decideWithdrawal({
    terms: product,
    today: day,
    balanceMinor: walletBalances(sums).availableMinor,
    amountMinor,
    maturesOn: account.maturesOn,
    notice,
  });
  const now = deps.now();
  const postings: Posting[] = directPostings(walletId, destination.id, amountMinor, currency);
  if (decision.penaltyMinor > 0n && feeAccount) {
    postings.push(...directPostings(walletId, feeAccount, decision.penaltyMinor, currency));
  }
  const entry: JournalEntry = {
    id: deps.newId('journalEntry'),
    organizationId,
    transferId: null,
    kind: 'direct',
    holdEntryId: null,
    createdAt: now,
    postings,
  };
  const gate = session.release('savings_withdrawal', { source: walletId, destination: destination.id });
  if (gate.outcome === 'refuse') {
    throw refusalError(gate.refusal, 'withdrawal', gate.side === 'source' ? 'id' : 'destination');
  }
  const refusal = session.tryPost(entry);
  if (refusal) throw refusalError(refusal, 'withdrawal', 'amount');
  await session.flush(now);
  const withdrawal: SavingsWithdrawal = {
    id: deps.newId('savingsWithdrawal'),
    organizationId,
    walletId,
    destinationWalletId: destination.id,
    amountMinor,
    penaltyMinor: decision.penaltyMinor,
    noticeId: notice?.id ?? null,
    day,
    entryId: entry.id,
    createdAt: now,
  };
  await insertSavingsWithdrawal(tx, withdrawal);
  if (notice) await updateSavingsNoticeStatus(tx, notice.id, 'used', now);
  await recordEvents(tx, deps, [
    newEvent(
      deps,
      {
        organizationId,
        type: 'savings.withdrawal.completed',
        resourceId: withdrawal.id,
        data: savingsWithdrawalJson(withdrawal, currency),
      },
      now,
    ),
  ]);
  return { withdrawal, currency };
}

export function savingsWithdrawalJson(w: SavingsWithdrawal, currency: Currency): Record<string, unknown> {
  return {
    object: 'savings_withdrawal',
    id: w.id,
    savings_account: w.walletId,
    destination: w.destinationWalletId,
    amount: formatAmount(w.amountMinor, currency),
    penalty: formatAmount(w.penaltyMinor, currency),
    currency,
    notice: w.noticeId,
    day: w.day,
    journal_entry: w.entryId,
    created_at: w.createdAt.toISOString(),
  };
}

// ---------------------------------------------------------------------------- accrual and capitalisation

/** The organization's interest expense and payable accounts in a currency, created on first use. */
async function interestAccounts(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  currency: Currency,
): Promise<{ expense: string; payable: string }> {
  const ensure = (kind: 'interest_expense' | 'interest_payable') =>
    ensureSystemAccount(tx, {
      id: deps.newId('ledgerAccount'),
      organizationId,
      kind,
      rail: INTEREST_ACCOUNT_RAIL,
      currency,
      now: deps.now(),
    });
  return { expense: await ensure('interest_expense'), payable: await ensure('interest_payable') };
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
    const booked = new Map<Currency, bigint>();
    const decided: {
      account: SavingsAccount;
      product: SavingsProduct;
      row: Omit<SavingsAccrualRow, 'bookingEntryId' | 'capitalizationEntryId'>;
      capitalisedMinor: bigint;
    }[] = [];
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
    // The day's booking first: capitalisation then moves what is payable.
    const bookingEntries = new Map<Currency, string>();
    for (const [currency, minor] of booked) {
      if (minor === 0n) continue;
      const l = ledgerAccounts.get(currency);
      if (!l) throw new Error(`no interest accounts for ${currency}`);
      const entry: JournalEntry = {
        id: deps.newId('journalEntry'),
        organizationId,
        transferId: null,
        kind: 'direct',
        holdEntryId: null,
        createdAt: now,
        postings: directPostings(l.expense, l.payable, minor, currency),
      };
      const refusal = session.tryPost(entry);
      if (refusal) throw refusalError(refusal, 'interest accrual');
      bookingEntries.set(currency, entry.id);
    }
    const capitalisationEntries = new Map<string, string>();
    const events: EventRecord[] = [];
    if (isMonthEnd(day)) {
      for (const item of decided) {
        const { account, product } = item;
        const { capitalisedMinor, accrued } = capitalise({
          parts: account.accruedParts,
          payableMinor: account.payableMinor,
        });
        if (capitalisedMinor === 0n) continue;
        const l = ledgerAccounts.get(product.currency);
        if (!l) throw new Error(`no interest accounts for ${product.currency}`);
        const entry: JournalEntry = {
          id: deps.newId('journalEntry'),
          organizationId,
          transferId: null,
          kind: 'direct',
          holdEntryId: null,
          createdAt: now,
          postings: directPostings(l.payable, account.walletId, capitalisedMinor, product.currency),
        };
        // A frozen or closed wallet receives nothing new: its interest stays payable until a month's end
        // finds it able to receive.
        if (session.tryPost(entry)) continue;
        capitalisationEntries.set(account.walletId, entry.id);
        item.capitalisedMinor = capitalisedMinor;
        item.account = {
          ...account,
          accruedParts: accrued.parts,
          payableMinor: accrued.payableMinor,
          interestPaidMinor: account.interestPaidMinor + capitalisedMinor,
        };
        events.push(
          newEvent(
            deps,
            {
              organizationId,
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
                  walletBalances(session.sumsOf(account.walletId) ?? ZERO_SUMS).currentMinor,
                  product.currency,
                ),
                interest_paid: formatAmount(item.account.interestPaidMinor, product.currency),
                residual_numerator: item.account.accruedParts.toString(),
                denominator: ACCRUAL_DENOMINATOR.toString(),
                journal_entry: entry.id,
              },
            },
            now,
          ),
        );
      }
    }
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
