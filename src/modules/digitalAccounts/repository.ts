/**
 * Digital accounts: the organization's sponsor-bank setting, the account details issued to wallets, virtual
 * accounts, and the ledger reads behind statements (read as balances as of an instant are: walletBalances.ts).
 */

import type { WalletAccountDetails } from '../../domain/wallets.ts';
import {
  columnFinderBy,
  organizationRecordFinder,
  recordFinderBy,
  rowTable,
} from '../../store/repositories/records.ts';
import { column, computed, rowMapper, stored } from '../../store/repositories/rowMappers.ts';
import { nullableText, toBigInt, toDate, toJsonObject } from '../../store/repositories/rows.ts';
import { entryIdWindow, POSTED_NET, sinceSql } from '../../store/repositories/walletBalances.ts';
import type { Queryable } from '../../store/store.ts';
import { ACCOUNT_DETAILS_COLUMNS, ACCOUNT_DETAILS_JOIN, accountDetailsFromRow } from '../wallets/index.ts';
import type { DigitalAccountSettings } from './domain.ts';

const SETTINGS = rowTable<DigitalAccountSettings>('digital_account_settings', {
  organizationId: String,
  bankCode: String,
  bankName: String,
  updatedAt: toDate,
});

export const findDigitalAccountSettings = recordFinderBy(SETTINGS, 'organization_id');

export async function saveDigitalAccountSettings(db: Queryable, s: DigitalAccountSettings): Promise<void> {
  await db.query(
    `INSERT INTO digital_account_settings (${SETTINGS.columns}) VALUES ($1, $2, $3, $4)
     ON CONFLICT (organization_id) DO UPDATE SET bank_code = $2, bank_name = $3, updated_at = $4`,
    [s.organizationId, s.bankCode, s.bankName, s.updatedAt],
  );
}

/**
 * False when the wallet has details already, or the number is taken in the organization or under the bank
 * code (another wallet drew the same digits): the caller draws again or reads what is there.
 */
export async function insertWalletAccountDetails(
  db: Queryable,
  d: Omit<WalletAccountDetails, 'virtualReference'>,
): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO wallet_account_details (wallet_id, organization_id, account_number, bank_code, bank_name, created_at)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING wallet_id`,
    [d.walletId, d.organizationId, d.accountNumber, d.bankCode, d.bankName, d.createdAt],
  );
  return rows.length === 1;
}

export async function findWalletAccountDetails(
  db: Queryable,
  organizationId: string,
  walletId: string,
): Promise<WalletAccountDetails | undefined> {
  const [row] = await db.query(
    `SELECT w.id, w.organization_id, ${ACCOUNT_DETAILS_COLUMNS} FROM wallets w ${ACCOUNT_DETAILS_JOIN}
      WHERE w.organization_id = $1 AND w.id = $2`,
    [organizationId, walletId],
  );
  return (row && accountDetailsFromRow(row)) ?? undefined;
}

/** The wallet an account number was issued to in the organization (wallet_account_details_number_idx). */
export const findWalletIdByAccountNumber = columnFinderBy(
  'wallet_account_details',
  'wallet_id',
  String,
  'organization_id',
  'account_number',
);

/**
 * Makes the transaction's reads one snapshot (PostgreSQL's default gives each statement its own): a statement
 * is read with several statements, and a transfer committing between them must be in all or none. The first
 * statement of the transaction.
 */
export async function readOneSnapshot(tx: Queryable): Promise<void> {
  await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
}

/** The posted balance of a wallet account at the start and at the end of a period, one snapshot. */
export async function readStatementFrame(
  db: Queryable,
  walletId: string,
  from: Date,
  to: Date,
): Promise<{ openingMinor: bigint; closingMinor: bigint } | undefined> {
  const start = entryIdWindow(from);
  const end = entryIdWindow(to);
  const posted = "p.phase = 'posted'";
  const [row] = await db.query(
    `SELECT (a.credits_posted - a.debits_posted)::text AS current_minor,
            ${sinceSql(POSTED_NET, posted, '$2', '$3', '$4')}::text AS since_from_minor,
            ${sinceSql(POSTED_NET, posted, '$5', '$6', '$7')}::text AS since_to_minor
       FROM ledger_accounts a
      WHERE a.id = $1 AND a.kind = 'wallet'`,
    [walletId, from, start.lo, start.hi, to, end.lo, end.hi],
  );
  if (!row) return undefined;
  const current = toBigInt(row.current_minor);
  return {
    openingMinor: current - toBigInt(row.since_from_minor),
    closingMinor: current - toBigInt(row.since_to_minor),
  };
}

/** An entry that moved a wallet's posted balance, with what the statement line needs to describe it. */
export interface MovementRow {
  entryId: string;
  kind: string;
  createdAt: Date;
  netMinor: bigint;
  /** The transfer's fee when this wallet paid it (it rides in the same entry: charged, or given back). */
  feeMinor: bigint;
  /** For an entry without a transfer: the kinds of the other accounts it moved. */
  otherAccountKinds: string[];
  transfer: {
    id: string;
    direction: 'outbound' | 'inbound';
    sourceWalletId: string | null;
    destinationWalletId: string | null;
    destination: Record<string, unknown>;
    rail: string;
    railReference: string | null;
    statusReason: string | null;
  } | null;
  payerName: string | null;
  payerPhone: string | null;
}

/**
 * The entries that moved the wallet account's posted balance in [from, to), oldest first (by `created_at`,
 * then id), at most `rowsMax`: the account's postings in the period's id range (widened by the id windows
 * of its ends) from postings_account_entry_idx, each entry by primary key for its `created_at`, then its
 * transfer and the collection that brought it (if any).
 */
export async function listStatementMovements(
  db: Queryable,
  walletId: string,
  from: Date,
  to: Date,
  rowsMax: number,
): Promise<MovementRow[]> {
  const rows = await db.query(
    `WITH moves AS MATERIALIZED (
       SELECT e.id, e.kind, e.created_at, e.transfer_id,
              sum(CASE WHEN p.side = 'credit' THEN p.amount_minor ELSE -p.amount_minor END) AS net_minor
         FROM postings p
         JOIN journal_entries e ON e.id = p.entry_id
        WHERE p.account_id = $1 AND p.phase = 'posted' AND p.entry_id >= $4 AND p.entry_id <= $5
          AND e.created_at >= $2 AND e.created_at < $3
        GROUP BY e.id, e.kind, e.created_at, e.transfer_id
        ORDER BY e.created_at, e.id
        LIMIT $6
     )
     SELECT m.id, m.kind, m.created_at, m.transfer_id, m.net_minor::text AS net_minor,
            CASE WHEN t.source_wallet_id = $1 THEN t.fee_minor ELSE 0 END::text AS fee_minor,
            coalesce(o.kinds, '{}') AS other_kinds,
            t.direction, t.source_wallet_id, t.destination_wallet_id, t.destination, t.rail, t.rail_reference,
            t.status_reason, c.payer_name, c.payer_phone
       FROM moves m
       LEFT JOIN LATERAL (
         SELECT array_agg(DISTINCT a.kind) AS kinds
           FROM postings x
           JOIN ledger_accounts a ON a.id = x.account_id
          WHERE m.transfer_id IS NULL AND x.entry_id = m.id AND x.account_id <> $1
       ) o ON true
       LEFT JOIN transfers t ON t.id = m.transfer_id
       LEFT JOIN collections c ON c.transfer_id = m.transfer_id
      ORDER BY m.created_at, m.id`,
    [walletId, from, to, entryIdWindow(from).lo, entryIdWindow(to).hi, rowsMax],
  );
  return rows.map(movementFromRow);
}

/** The transfer an entry belongs to, as a statement line describes it. */
const movementTransferFromRow = rowMapper<NonNullable<MovementRow['transfer']>>({
  id: column('transfer_id', String),
  direction: stored,
  sourceWalletId: nullableText,
  destinationWalletId: nullableText,
  destination: toJsonObject<Record<string, unknown>>,
  rail: String,
  railReference: nullableText,
  statusReason: nullableText,
});

const movementFromRow = rowMapper<MovementRow>({
  entryId: column('id', String),
  kind: String,
  createdAt: toDate,
  netMinor: toBigInt,
  feeMinor: toBigInt,
  otherAccountKinds: column('other_kinds', toTextArray),
  transfer: computed((row) =>
    row.transfer_id === null || row.direction === null ? null : movementTransferFromRow(row),
  ),
  payerName: nullableText,
  payerPhone: nullableText,
});

/** A text[] as either driver returns it (an array, or PostgreSQL's `{a,b}` text form). */
function toTextArray(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  const text = String(value ?? '');
  if (text === '{}' || text === '') return [];
  return text.replace(/^\{|\}$/g, '').split(',');
}

export interface VirtualAccount {
  walletId: string;
  organizationId: string;
  reference: string;
  createdAt: Date;
}

/** The virtual accounts table as its finders read it. */
const VIRTUAL_ACCOUNTS = rowTable<VirtualAccount>('wallet_virtual_accounts', {
  walletId: String,
  organizationId: String,
  reference: String,
  createdAt: toDate,
});

/** False when the reference is taken (another wallet drew the same digits) or the wallet has one. */
export async function insertVirtualAccount(db: Queryable, account: VirtualAccount): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO wallet_virtual_accounts (${VIRTUAL_ACCOUNTS.columns}) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING RETURNING wallet_id`,
    [account.walletId, account.organizationId, account.reference, account.createdAt],
  );
  return rows.length === 1;
}

export const findVirtualAccountOfWallet = organizationRecordFinder(VIRTUAL_ACCOUNTS, 'wallet_id');

export const findVirtualAccountByReference = organizationRecordFinder(VIRTUAL_ACCOUNTS, 'reference');
