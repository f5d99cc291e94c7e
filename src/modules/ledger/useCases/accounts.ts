/** Accounts of the ledger: journal entries with their postings, accounts with their sums, and the trust account made on first use. */

import type { Deps } from '../../../app/deps.ts';
import { keepNewest, mapForStore } from '../../../app/processCaches.ts';
import { listPage } from '../../../app/reads.ts';
import type { Currency } from '../../../domain/money.ts';
import type { Page, PageRequest } from '../../../domain/pagination.ts';
import type { Rail } from '../../../domain/transfers.ts';
import type { Queryable, Store } from '../../../store/store.ts';
import { type AccountKind, TRUST_LEDGER_RAIL } from '../domain/ledger.ts';
import {
  ensureSystemAccount,
  type JournalEntry,
  type LedgerAccount,
  listJournalEntries as listJournalEntryRows,
  listLedgerAccounts as listLedgerAccountRows,
} from '../repository/ledger.ts';

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { JournalEntry, LedgerAccount } from '../repository/ledger.ts';

export interface JournalEntryListRequest extends PageRequest {
  /** Only entries with a posting on this wallet's account. */
  walletId?: string | undefined;
  transferId?: string | undefined;
}

export const listJournalEntries: (
  deps: Deps,
  organizationId: string,
  request: JournalEntryListRequest,
) => Promise<Page<JournalEntry>> = listPage(listJournalEntryRows);

export interface LedgerAccountListRequest extends PageRequest {
  kind?: AccountKind | undefined;
  currency?: Currency | undefined;
}

export const listLedgerAccounts: (
  deps: Deps,
  organizationId: string,
  request: LedgerAccountListRequest,
) => Promise<Page<LedgerAccount>> = listPage(listLedgerAccountRows);

/** The organization's trust ledger account in a currency, made on first use; its id. */
export function trustLedgerAccount(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  currency: Currency,
): Promise<string> {
  return ensureSystemAccount(tx, {
    id: deps.newId('ledgerAccount'),
    organizationId,
    kind: 'trust',
    rail: TRUST_LEDGER_RAIL,
    currency,
    now: deps.now(),
  });
}

/** Rail clearing accounts' ids one process keeps at most (one per organization, rail and currency in use). */
export const RAIL_CLEARING_ACCOUNT_CACHE_ENTRIES_MAX = 10_000;

const railClearingAccounts = new WeakMap<Store, Map<string, string>>();

/**
 * The organization's clearing account of a rail in a currency, made on first use (committed at once, outside
 * any transaction); its id. Kept per process once known: a system account never changes or goes away, so a
 * payout reads nothing here after the first (an insert that conflicted and a select, two round trips).
 */
export async function railClearingAccount(
  deps: Deps,
  organizationId: string,
  rail: Rail,
  currency: Currency,
): Promise<string> {
  const cache = mapForStore(railClearingAccounts, deps.store);
  const key = `${organizationId}\u0000${rail}\u0000${currency}`;
  const known = cache.get(key);
  if (known !== undefined) return known;
  const id = await ensureSystemAccount(deps.store, {
    id: deps.newId('ledgerAccount'),
    organizationId,
    kind: 'rail_clearing',
    rail,
    currency,
    now: deps.now(),
  });
  keepNewest(cache, key, id, RAIL_CLEARING_ACCOUNT_CACHE_ENTRIES_MAX);
  return id;
}
