/** Accounts of the ledger: journal entries with their postings, accounts with their sums, and the trust account made on first use. */

import type { Deps } from '../../../app/deps.ts';
import type { Currency } from '../../../domain/money.ts';
import { type Page, type PageRequest, toPage } from '../../../domain/pagination.ts';
import type { Queryable } from '../../../store/store.ts';
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

export async function listJournalEntries(
  deps: Deps,
  organizationId: string,
  request: JournalEntryListRequest,
): Promise<Page<JournalEntry>> {
  const rows = await listJournalEntryRows(deps.store, organizationId, request, request.limit + 1);
  return toPage(rows, request.limit);
}

export interface LedgerAccountListRequest extends PageRequest {
  kind?: AccountKind | undefined;
  currency?: Currency | undefined;
}

export async function listLedgerAccounts(
  deps: Deps,
  organizationId: string,
  request: LedgerAccountListRequest,
): Promise<Page<LedgerAccount>> {
  const rows = await listLedgerAccountRows(deps.store, organizationId, request, request.limit + 1);
  return toPage(rows, request.limit);
}

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
