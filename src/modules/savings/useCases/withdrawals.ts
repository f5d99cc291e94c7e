/**
 * Withdrawal notices and withdrawals: money leaves a savings account only to a wallet of its owner, by the
 * product's rules, in one entry through a PostingSession (with an early-withdrawal penalty to the fee
 * income account on a fixed term).
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvent } from '../../../app/events.ts';
import { lockById } from '../../../app/reads.ts';
import { addDays } from '../../../domain/days.ts';
import { resourceMissing } from '../../../domain/errors.ts';
import { numberSourceOf } from '../../../domain/jsonNumbers.ts';
import { type Currency, checkSingleAmount, formatAmount, parseAmount } from '../../../domain/money.ts';
import { requirePayableDestination, type Wallet } from '../../../domain/wallets.ts';
import type { Queryable } from '../../../store/store.ts';
import { feeIncomeAccount } from '../../fees/index.ts';
import {
  directEntry,
  directPostings,
  type Posting,
  PostingSession,
  refusalError,
  walletBalances,
} from '../../ledger/index.ts';
import { findWallet } from '../../wallets/index.ts';
import { decideWithdrawal, withdrawalRefusal } from '../domain.ts';
import { findSavingsAccount } from '../repository/accounts.ts';
import { findSavingsProduct } from '../repository/products.ts';
import {
  findSavingsNotice,
  insertSavingsNotice,
  insertSavingsWithdrawal,
  listSavingsNotices as listSavingsNoticeRows,
  type SavingsNotice,
  type SavingsWithdrawal,
  updateSavingsNoticeStatus,
} from '../repository/withdrawals.ts';
import { requireSavingsAccount } from './accounts.ts';
import { organizationToday } from './today.ts';

export type { SavingsNotice, SavingsWithdrawal };

/** The savings account of this wallet id, its row locked for the transaction; 404 when there is none. */
const lockedAccount = lockById(findSavingsAccount, 'savings_account');

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
    throw withdrawalRefusal(
      `Product ${product.id} is ${product.access === 'instant' ? 'instant access' : 'a fixed term'}: its withdrawals need no notice.`,
      'amount',
      'notice_not_applicable',
    );
  }
  const givenOn = await organizationToday(tx, deps, organizationId);
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
  await recordEvent(tx, deps, now, {
    organizationId,
    type: 'savings.notice.given',
    resourceId: notice.id,
    data: savingsNoticeJson(notice, product.currency),
  });
  return { notice, currency: product.currency };
}

export async function listSavingsNotices(
  deps: Deps,
  organizationId: string,
  walletId: string,
  limit: number,
): Promise<{ notices: SavingsNotice[]; currency: Currency }> {
  const account = await requireSavingsAccount(deps.store, organizationId, walletId);
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
 * The destination a withdrawal names, checked: another wallet of the savings account's owner, in the
 * product's currency.
 */
async function checkDestination(
  tx: Queryable,
  organizationId: string,
  walletId: string,
  destinationId: string,
  currency: Currency,
): Promise<Wallet> {
  const [source, destination] = await Promise.all([
    findWallet(tx, organizationId, walletId),
    findWallet(tx, organizationId, destinationId),
  ]);
  if (!source) throw new Error(`savings account ${walletId} lost its wallet`);
  if (!destination) throw resourceMissing('wallet', destinationId, 'destination');
  // Before the shared checks: the savings wallet itself is its owner's, so this never hides `same_as_source`.
  if (destination.ownerId !== source.ownerId) {
    throw withdrawalRefusal(
      `Money leaves a savings account only to a wallet of its owner (${source.ownerId}).`,
      'destination',
      'destination_not_owner',
    );
  }
  requirePayableDestination(destination, walletId, currency);
  return destination;
}

/** The notice a withdrawal names, if it names one: it must be the savings account's own. */
async function namedNotice(
  tx: Queryable,
  organizationId: string,
  walletId: string,
  noticeId: string | undefined,
): Promise<SavingsNotice | null> {
  if (noticeId === undefined) return null;
  const found = await findSavingsNotice(tx, organizationId, noticeId);
  if (!found || found.walletId !== walletId) throw resourceMissing('savings_notice', noticeId, 'notice');
  return found;
}

/** Records a posted withdrawal: its row, its notice used, and its `savings.withdrawal.completed` event. */
async function recordWithdrawal(
  tx: Queryable,
  deps: Deps,
  withdrawal: SavingsWithdrawal,
  notice: SavingsNotice | null,
  currency: Currency,
): Promise<void> {
  await insertSavingsWithdrawal(tx, withdrawal);
  if (notice) await updateSavingsNoticeStatus(tx, notice.id, 'used', withdrawal.createdAt);
  await recordEvent(tx, deps, withdrawal.createdAt, {
    organizationId: withdrawal.organizationId,
    type: 'savings.withdrawal.completed',
    resourceId: withdrawal.id,
    data: savingsWithdrawalJson(withdrawal, currency),
  });
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
  const destination = await checkDestination(tx, organizationId, walletId, input.destination, currency);
  const notice = await namedNotice(tx, organizationId, walletId, input.notice);
  const day = await organizationToday(tx, deps, organizationId);
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
  const entry = directEntry(deps, organizationId, postings, now);
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
  await recordWithdrawal(tx, deps, withdrawal, notice, currency);
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
