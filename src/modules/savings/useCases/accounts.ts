/**
 * Savings accounts: wallets of a product, opened with the organization's today as their first day, and
 * shown with their balance, the interest accrued and not yet paid, and what was paid.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvent } from '../../../app/events.ts';
import { requireProduct } from '../../../app/products.ts';
import { requireById } from '../../../app/reads.ts';
import type { Metadata } from '../../../domain/metadata.ts';
import { type Currency, formatAmount } from '../../../domain/money.ts';
import { type Page, toPage } from '../../../domain/pagination.ts';
import type { Queryable } from '../../../store/store.ts';
import { createWallet, findWallet } from '../../wallets/index.ts';
import { ACCRUAL_DENOMINATOR, maturityDay, previousDay } from '../domain.ts';
import {
  findSavingsAccount,
  insertSavingsAccount,
  listSavingsAccounts as listSavingsAccountRows,
  type SavingsAccount,
} from '../repository/accounts.ts';
import {
  listSavingsAccruals as listSavingsAccrualRows,
  type SavingsAccrualRow,
} from '../repository/accruals.ts';
import { findSavingsProduct, type SavingsProduct } from '../repository/products.ts';
import { requireSavingsProduct } from './products.ts';
import { organizationToday } from './today.ts';

export type { SavingsAccount, SavingsAccrualRow };

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
  const product = await requireSavingsProduct(tx, organizationId, input.product, 'product');
  const wallet = await createWallet(tx, deps, organizationId, {
    owner: input.owner,
    currency: product.currency,
    metadata: input.metadata,
  });
  const openedOn = await organizationToday(tx, deps, organizationId);
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
  await recordEvent(tx, deps, wallet.createdAt, {
    organizationId,
    type: 'savings.account.opened',
    resourceId: wallet.id,
    data: savingsAccountJson(view),
  });
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

/** The savings account of this wallet id, read with no lock; 404 when the organization has none. */
export const requireSavingsAccount = requireById(findSavingsAccount, 'savings_account');

export async function getSavingsAccount(
  deps: Deps,
  organizationId: string,
  id: string,
): Promise<SavingsAccountView> {
  const account = await requireSavingsAccount(deps.store, organizationId, id);
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
  await requireSavingsAccount(deps.store, organizationId, walletId); // 404 unless it is the organization's
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
