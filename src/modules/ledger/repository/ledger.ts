/** Ledger accounts and journal entries: accounts locked in id order, sums written, entries with their postings. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type { Currency } from '../../../domain/money.ts';
import { lockingAccounts } from '../../../store/lockOrder.ts';
import {
  byFields,
  newestFirstLister,
  recordFinderBy,
  rowTable,
} from '../../../store/repositories/records.ts';
import { rowMapper, stored } from '../../../store/repositories/rowMappers.ts';
import {
  ACCOUNT_SUMS_FIELDS,
  fieldArrays,
  idRangeConditions,
  isTrue,
  type KeysetFilter,
  newestFirstConditions,
  nullableText,
  toBigInt,
  toDate,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { AccountKind, AccountSums, JournalEntryKind, Posting } from '../domain/ledger.ts';
import type { PostingAccount } from '../domain/posting.ts';

export type { AccountKind };

export interface LedgerAccount extends AccountSums {
  id: string;
  organizationId: string;
  kind: AccountKind;
  walletId: string | null;
  rail: string | null;
  currency: Currency;
  createdAt: Date;
  updatedAt: Date;
}

/** Accounts' ids have several prefixes (one per kind), so the table is described without one. */
const ACCOUNTS = rowTable<LedgerAccount>('ledger_accounts', {
  id: String,
  organizationId: String,
  kind: stored,
  walletId: nullableText,
  rail: nullableText,
  currency: stored,
  ...ACCOUNT_SUMS_FIELDS,
  createdAt: toDate,
  updatedAt: toDate,
});

/** Finds or creates an organization's system account for a rail and currency; returns its id. */
export async function ensureSystemAccount(
  db: Queryable,
  candidate: {
    id: string;
    organizationId: string;
    kind: Exclude<AccountKind, 'wallet'>;
    rail: string;
    currency: Currency;
    now: Date;
  },
): Promise<string> {
  const [inserted] = await db.query<{ id: string }>(
    `INSERT INTO ledger_accounts (id, organization_id, kind, rail, currency, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6)
     ON CONFLICT (organization_id, kind, rail, currency) WHERE kind <> 'wallet' DO NOTHING
     RETURNING id`,
    [
      candidate.id,
      candidate.organizationId,
      candidate.kind,
      candidate.rail,
      candidate.currency,
      candidate.now,
    ],
  );
  if (inserted) return inserted.id;
  const [existing] = await db.query<{ id: string }>(
    `SELECT id FROM ledger_accounts WHERE organization_id = $1 AND kind = $2 AND rail = $3 AND currency = $4 AND kind <> 'wallet'`,
    [candidate.organizationId, candidate.kind, candidate.rail, candidate.currency],
  );
  if (!existing) throw new Error('system account vanished after insert conflict');
  return existing.id;
}

export type LockedAccount = LedgerAccount & PostingAccount;

/**
 * Locks accounts in id order (one statement, so every writer takes locks in the same order and writers
 * cannot deadlock on each other) and returns them with the status of the wallets among them.
 */
export async function lockAccounts(
  db: Queryable,
  ids: readonly string[],
): Promise<Map<string, LockedAccount>> {
  const sorted = [...new Set(ids)].sort();
  lockingAccounts(db, sorted);
  const rows = await db.query(
    // The wallet's status is read from the locked row itself (a copy kept by the database), so a freeze or
    // close that commits while this waits for the lock is what the decision sees.
    `SELECT a.id, a.organization_id, a.kind, a.wallet_id, a.rail, a.currency, a.debits_pending, a.debits_posted,
            a.credits_pending, a.credits_posted, a.overdraft_limit_minor, a.created_at, a.updated_at,
            a.wallet_status
       FROM ledger_accounts a
      WHERE a.id = ANY($1::text[])
      ORDER BY a.id
        FOR UPDATE`,
    [sorted],
  );
  return new Map(
    rows.map((row) => [
      String(row.id),
      {
        ...ACCOUNTS.fromRow(row),
        walletStatus: nullableText(row.wallet_status),
        overdraftLimitMinor: toBigInt(row.overdraft_limit_minor),
      },
    ]),
  );
}

/** Writes new sums for accounts whose sums changed; one statement for the whole batch. */
export async function updateAccountSums(
  db: Queryable,
  accounts: readonly (AccountSums & { id: string })[],
  now: Date,
): Promise<void> {
  if (accounts.length === 0) return;
  await db.query(
    `UPDATE ledger_accounts a SET
        debits_pending = v.debits_pending, debits_posted = v.debits_posted,
        credits_pending = v.credits_pending, credits_posted = v.credits_posted, updated_at = $6
       FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[])
         AS v(id, debits_pending, debits_posted, credits_pending, credits_posted)
      WHERE a.id = v.id`,
    [
      accounts.map((a) => a.id),
      accounts.map((a) => a.debitsPending.toString()),
      accounts.map((a) => a.debitsPosted.toString()),
      accounts.map((a) => a.creditsPending.toString()),
      accounts.map((a) => a.creditsPosted.toString()),
      now,
    ],
  );
}

export interface JournalEntry {
  id: string;
  organizationId: string;
  transferId: string | null;
  kind: JournalEntryKind;
  holdEntryId: string | null;
  createdAt: Date;
  postings: Posting[];
}

/**
 * Inserts entries and all their postings with two statements, however many entries the batch has. An
 * entry's currency is its postings' (the database refuses a posting in another currency than its entry or
 * its account).
 */
export async function insertJournalEntries(db: Queryable, entries: readonly JournalEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await db.query(
    `INSERT INTO journal_entries (id, organization_id, transfer_id, kind, hold_entry_id, currency, created_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])`,
    [
      ...fieldArrays(entries, 'id', 'organizationId', 'transferId', 'kind', 'holdEntryId'),
      entries.map((e) => e.postings[0]?.currency ?? null),
      entries.map((e) => e.createdAt.toISOString()),
    ],
  );
  const lines = entries.flatMap((e) =>
    e.postings.map((p, index) => ({ entryId: e.id, line: index + 1, ...p })),
  );
  await db.query(
    `INSERT INTO postings (entry_id, line, account_id, side, phase, releases_hold, amount_minor, currency)
     SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::boolean[], $7::bigint[], $8::text[])`,
    [
      ...fieldArrays(lines, 'entryId', 'line', 'accountId', 'side', 'phase', 'releasesHold'),
      lines.map((l) => l.amountMinor.toString()),
      lines.map((l) => l.currency),
    ],
  );
}

const postingFromRow = rowMapper<Posting>({
  accountId: String,
  side: stored,
  phase: stored,
  releasesHold: isTrue,
  amountMinor: toBigInt,
  currency: stored,
});

/** The open hold of a transfer: a hold entry with no post or void referring to it. */
export async function findOpenHold(db: Queryable, transferId: string): Promise<JournalEntry | undefined> {
  const [entry] = await db.query(
    `SELECT h.id, h.organization_id, h.transfer_id, h.kind, h.hold_entry_id, h.created_at
       FROM journal_entries h
      WHERE h.transfer_id = $1 AND h.kind = 'hold'
        AND NOT EXISTS (SELECT 1 FROM journal_entries r WHERE r.hold_entry_id = h.id)`,
    [transferId],
  );
  if (!entry) return undefined;
  const postings = await db.query('SELECT * FROM postings WHERE entry_id = $1 ORDER BY line', [entry.id]);
  return entryFromRow(entry, postings.map(postingFromRow));
}

/** Entries' rows, without their postings (read separately). */
const ENTRIES = rowTable<Omit<JournalEntry, 'postings'>>('journal_entries', {
  id: String,
  organizationId: String,
  transferId: nullableText,
  kind: stored,
  holdEntryId: nullableText,
  createdAt: toDate,
});

export const JOURNAL_ENTRY_COLUMNS = ENTRIES.columns;

function entryFromRow(row: Record<string, unknown>, postings: Posting[]): JournalEntry {
  return { ...ENTRIES.fromRow(row), postings };
}

const findEntryRow = recordFinderBy(ENTRIES, 'id');

/** One entry with its postings. */
export async function findJournalEntry(db: Queryable, id: string): Promise<JournalEntry | undefined> {
  const entry = await findEntryRow(db, id);
  if (!entry) return undefined;
  const postings = await db.query('SELECT * FROM postings WHERE entry_id = $1 ORDER BY line', [id]);
  return { ...entry, postings: postings.map(postingFromRow) };
}

export interface EntryFilter extends KeysetFilter {
  walletId?: string | undefined;
  transferId?: string | undefined;
}

/**
 * Newest first. For a wallet, its account's postings (account_id, entry_id) give the entry ids newest first
 * straight from the index, and only as many entries are read as the page needs.
 */
export async function listJournalEntries(
  db: Queryable,
  organizationId: string,
  filter: EntryFilter,
  rowsMax: number,
): Promise<JournalEntry[]> {
  const { conditions, params } = newestFirstConditions({
    alias: 'e.',
    prefix: ID_PREFIXES.journalEntry,
    organizationId,
    filter,
    equal: [['e.transfer_id', filter.transferId]],
  });
  let from = 'journal_entries e';
  if (filter.walletId !== undefined) {
    params.push(filter.walletId);
    // The same id range bounds the postings' index range; DISTINCT keeps an entry with two postings on the
    // account once, and on the index's order it streams.
    const postings = [
      `p.account_id = $${params.length}`,
      ...idRangeConditions(filter, params, 'p.entry_id', ID_PREFIXES.journalEntry),
    ];
    from = `(SELECT DISTINCT p.entry_id FROM postings p WHERE ${postings.join(' AND ')}
              ORDER BY p.entry_id DESC) AS w
            JOIN journal_entries e ON e.id = w.entry_id`;
  }
  params.push(rowsMax);
  const entries = await db.query(
    `SELECT e.id, e.organization_id, e.transfer_id, e.kind, e.hold_entry_id, e.created_at FROM ${from}
      WHERE ${conditions.join(' AND ')} ORDER BY e.id DESC LIMIT $${params.length}`,
    params,
  );
  return withPostings(db, entries);
}

export interface AccountFilter extends KeysetFilter {
  kind?: AccountKind | undefined;
  currency?: Currency | undefined;
}

/**
 * The same keyset as every other list (id descending), so the API pages accounts like everything else;
 * accounts' ids have several prefixes, so a created range is left to created_at alone.
 */
export const listLedgerAccounts = newestFirstLister(ACCOUNTS, byFields<AccountFilter>('kind', 'currency'));

/** Entries with their postings, by id (an export's page of entries read with `readAscending`). */
export async function withPostings(
  db: Queryable,
  entries: readonly Record<string, unknown>[],
): Promise<JournalEntry[]> {
  if (entries.length === 0) return [];
  const postings = await db.query(
    'SELECT * FROM postings WHERE entry_id = ANY($1::text[]) ORDER BY entry_id, line',
    [entries.map((e) => e.id)],
  );
  const byEntry = new Map<string, Posting[]>();
  for (const row of postings) {
    const list = byEntry.get(String(row.entry_id)) ?? [];
    list.push(postingFromRow(row));
    byEntry.set(String(row.entry_id), list);
  }
  return entries.map((e) => entryFromRow(e, byEntry.get(String(e.id)) ?? []));
}
