import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Currency } from '../../domain/money.ts';
import { BEARER_SECURITY, principalOf } from '../../http/auth.ts';
import {
  type ListQuery,
  pageRequestOf,
  presentJournalEntry,
  presentLedgerAccount,
  presentList,
} from '../../http/presenters.ts';
import { problemResponses, READ_PROBLEMS } from '../../http/problems.ts';
import {
  currencySchema,
  idSchema,
  LEDGER_ACCOUNT_ID_PREFIXES,
  listEnvelopeSchema,
  listQuerySchema,
} from '../../http/schemas.ts';
import { ACCOUNT_KINDS, type AccountKind } from './domain/ledger.ts';
import { listJournalEntries, listLedgerAccounts } from './useCases/accounts.ts';

const TAGS = ['Ledger'];
/** Lists have no {id} to miss: an unknown or foreign filter value is an empty page, not a 404. */
const LIST_PROBLEMS = READ_PROBLEMS.filter((s) => s !== 404);

export function ledgerRoutes(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: ListQuery & { wallet?: string; transfer?: string } }>(
    '/v1/ledger/entries',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listLedgerEntries',
        summary: 'List journal entries',
        description:
          'Newest first, each with its postings. A rail transfer shows a `hold` and later the `post` (settled) or `void` (failed, canceled) that refers to it; an internal transfer or a collection one `direct` entry; a return a `reversal`.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.journalEntry, {
          wallet: idSchema(ID_PREFIXES.wallet, "Only entries that post to this wallet's account."),
          transfer: idSchema(ID_PREFIXES.transfer, 'Only entries of this transfer.'),
        }),
        response: {
          200: listEnvelopeSchema('JournalEntry', 'A page of journal entries.'),
          ...problemResponses(...LIST_PROBLEMS),
        },
      },
    },
    async (request) => {
      const page = await listJournalEntries(deps, principalOf(request).organizationId, {
        ...pageRequestOf(request.query),
        walletId: request.query.wallet,
        transferId: request.query.transfer,
      });
      return presentList(page, presentJournalEntry);
    },
  );

  app.get<{ Querystring: ListQuery & { kind?: AccountKind; currency?: Currency } }>(
    '/v1/ledger/accounts',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listLedgerAccounts',
        summary: 'List ledger accounts',
        description:
          "Every account of your organization with its four sums and signed nets (credits − debits): wallets, with the same `balance` as the wallet's, and the rails' settlement and clearing accounts. Ordered by id, descending: wallets newest first, then system accounts. Per currency, the nets of all accounts sum to zero.",
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(LEDGER_ACCOUNT_ID_PREFIXES, {
          kind: { type: 'string', enum: ACCOUNT_KINDS, description: 'Only accounts of this kind.' },
          currency: { ...currencySchema, description: 'Only accounts of this currency.' },
        }),
        response: {
          200: listEnvelopeSchema('LedgerAccount', 'A page of ledger accounts.'),
          ...problemResponses(...LIST_PROBLEMS),
        },
      },
    },
    async (request) => {
      const page = await listLedgerAccounts(deps, principalOf(request).organizationId, {
        ...pageRequestOf(request.query),
        kind: request.query.kind,
        currency: request.query.currency,
      });
      return presentList(page, presentLedgerAccount);
    },
  );
}
