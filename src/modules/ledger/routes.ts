/** The ledger API: the organization's journal entries with their postings, and its accounts with their sums. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Currency } from '../../domain/money.ts';
import { LEDGER_ACCOUNT_ID_PREFIXES } from '../../http/ledgerSchemas.ts';
import { presentJournalEntry, presentLedgerAccount } from '../../http/presenters.ts';
import { enumFilter, listRoute, pagedList } from '../../http/readRoutes.ts';
import { accessByScope } from '../../http/routeKit.ts';
import { routesInOrder } from '../../http/routeOrder.ts';
import { currencySchema, idSchema } from '../../http/schemas.ts';
import { ACCOUNT_KINDS, type AccountKind } from './domain/ledger.ts';
import { listJournalEntries, listLedgerAccounts } from './useCases/accounts.ts';

const ACCESS = accessByScope(['Ledger']);

// Lists have no {id} to miss: an unknown or foreign filter value is an empty page, not a 404 (LIST_PROBLEMS).

function listLedgerEntriesRoute(app: FastifyInstance, deps: Deps): void {
  listRoute(app, deps, {
    path: '/v1/ledger/entries',
    access: ACCESS.read,
    present: presentJournalEntry,
    list: {
      operationId: 'listLedgerEntries',
      summary: 'List journal entries',
      description:
        'Newest first, each with its postings. A rail transfer shows a `hold` and later the `post` (settled) or `void` (failed, canceled) that refers to it; an internal transfer or a collection one `direct` entry; a return a `reversal`.',
      ...pagedList('JournalEntry', 'A page of journal entries.', ID_PREFIXES.journalEntry, {
        wallet: idSchema(ID_PREFIXES.wallet, "Only entries that post to this wallet's account."),
        transfer: idSchema(ID_PREFIXES.transfer, 'Only entries of this transfer.'),
      }),
    },
    page: listJournalEntries,
    filtersOf: (query: { wallet?: string; transfer?: string }) => ({
      walletId: query.wallet,
      transferId: query.transfer,
    }),
  });
}

function listLedgerAccountsRoute(app: FastifyInstance, deps: Deps): void {
  listRoute(app, deps, {
    path: '/v1/ledger/accounts',
    access: ACCESS.read,
    present: presentLedgerAccount,
    list: {
      operationId: 'listLedgerAccounts',
      summary: 'List ledger accounts',
      description:
        "Every account of your organization with its four sums and signed nets (credits − debits): wallets, with the same `balance` as the wallet's, and the rails' settlement and clearing accounts. Ordered by id, descending: wallets newest first, then system accounts. Per currency, the nets of all accounts sum to zero.",
      ...pagedList('LedgerAccount', 'A page of ledger accounts.', LEDGER_ACCOUNT_ID_PREFIXES, {
        kind: enumFilter(ACCOUNT_KINDS, 'Only accounts of this kind.'),
        currency: { ...currencySchema, description: 'Only accounts of this currency.' },
      }),
    },
    page: listLedgerAccounts,
    filtersOf: (query: { kind?: AccountKind; currency?: Currency }) => ({
      kind: query.kind,
      currency: query.currency,
    }),
  });
}

export const ledgerRoutes = routesInOrder(listLedgerEntriesRoute, listLedgerAccountsRoute);
