/** Domain records to their wire form: snake_case fields, decimal-string amounts, ISO 8601 times. */

import { formatAmount } from '../domain/money.ts';
import type { Page, PageRequest } from '../domain/pagination.ts';
import type { Wallet } from '../domain/wallets.ts';
import type { Customer } from '../store/repositories/customers.ts';

export function presentBalances(wallet: Wallet) {
  return {
    available: formatAmount(wallet.availableMinor, wallet.currency),
    pending: formatAmount(wallet.pendingMinor, wallet.currency),
    current: formatAmount(wallet.currentMinor, wallet.currency),
  };
}

export function presentWallet(wallet: Wallet) {
  return {
    id: wallet.id,
    object: 'wallet',
    owner: wallet.ownerId,
    currency: wallet.currency,
    status: wallet.status,
    balance: presentBalances(wallet),
    metadata: wallet.metadata,
    created_at: wallet.createdAt.toISOString(),
    updated_at: wallet.updatedAt.toISOString(),
  };
}

export function presentBalance(wallet: Wallet) {
  return { object: 'balance', wallet: wallet.id, currency: wallet.currency, ...presentBalances(wallet) };
}

export function presentCustomer(customer: Customer) {
  return {
    id: customer.id,
    object: 'customer',
    type: customer.type,
    name: customer.name,
    email: customer.email,
    phone: customer.phone,
    kyc_status: customer.kycStatus,
    metadata: customer.metadata,
    created_at: customer.createdAt.toISOString(),
    updated_at: customer.updatedAt.toISOString(),
  };
}

export function presentList<T extends { id: string }, W>(page: Page<T>, present: (item: T) => W) {
  const last = page.data.at(-1);
  return {
    object: 'list',
    data: page.data.map(present),
    has_more: page.hasMore,
    next_cursor: page.hasMore && last ? last.id : null,
  };
}

export interface ListQuery {
  limit: number;
  starting_after?: string;
  'created[gte]'?: string;
  'created[lte]'?: string;
}

export function pageRequestOf(query: ListQuery): PageRequest {
  return {
    limit: query.limit,
    startingAfter: query.starting_after,
    createdGte: query['created[gte]'] === undefined ? undefined : new Date(query['created[gte]']),
    createdLte: query['created[lte]'] === undefined ? undefined : new Date(query['created[lte]']),
  };
}
