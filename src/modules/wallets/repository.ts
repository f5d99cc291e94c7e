/**
 * Wallets' rows: inserted, their status and metadata changed, locked, found one or many at a time (with their
 * account details joined and their balances read from the ledger), and listed by keyset.
 */
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Currency } from '../../domain/money.ts';
import type {
  Wallet,
  WalletAccountDetails,
  WalletIdentity,
  WalletStatus,
  WalletStatusReason,
} from '../../domain/wallets.ts';
import { prepared, queryByIds } from '../../store/preparedStatements.ts';
import { column, columnRows, rowMapper, text } from '../../store/repositories/rowMappers.ts';
import {
  accountSumsFromRow,
  idRangeConditions,
  type KeysetFilter,
  keysetConditions,
  toDate,
  toJsonObject,
} from '../../store/repositories/rows.ts';
import type { Queryable } from '../../store/store.ts';
import { walletBalances } from '../ledger/index.ts';

/** A wallet's account details and virtual reference, as reads of wallets (`w`) embed them. */
export const ACCOUNT_DETAILS_JOIN = `LEFT JOIN wallet_account_details d ON d.wallet_id = w.id
  LEFT JOIN wallet_virtual_accounts v ON v.wallet_id = w.id`;

export const ACCOUNT_DETAILS_COLUMNS =
  'd.account_number, d.bank_code, d.bank_name, d.created_at AS details_created_at, v.reference AS virtual_reference';

const embeddedAccountDetailsFromRow = rowMapper<WalletAccountDetails>({
  walletId: column('id', String),
  organizationId: String,
  accountNumber: String,
  bankCode: String,
  bankName: String,
  virtualReference: String,
  createdAt: column('details_created_at', toDate),
});

/** The details embedded in a wallet row (ACCOUNT_DETAILS_COLUMNS), or null while it has none. */
export function accountDetailsFromRow(row: Record<string, unknown>): WalletAccountDetails | null {
  if (row.account_number === null || row.account_number === undefined) return null;
  return embeddedAccountDetailsFromRow(row);
}

const WALLET_COLUMNS = 'id, organization_id, owner_id, currency, status, metadata, created_at, updated_at';
/** A wallet with its balances, which live on its ledger account (same id), and its account details. */
const SELECT_WALLET = `SELECT w.id, w.organization_id, w.owner_id, w.currency, w.status, w.status_reason, w.status_changed_at,
    w.metadata, w.created_at, w.updated_at,
    a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted, ${ACCOUNT_DETAILS_COLUMNS}
  FROM wallets w JOIN ledger_accounts a ON a.id = w.id ${ACCOUNT_DETAILS_JOIN}`;

const FIND_WALLET_SQL = prepared(`${SELECT_WALLET} WHERE w.organization_id = $1 AND w.id = $2`);
/**
 * One or two wallets (a transfer's source and destination) by a statement of fixed arity: PostgreSQL keeps
 * its plan, where a `= ANY($2)` lookup was planned again on every call.
 */
const FIND_TWO_WALLETS_SQL = prepared(`${SELECT_WALLET} WHERE w.organization_id = $1 AND w.id IN ($2, $3)`);
const FIND_WALLETS_SQL = `${SELECT_WALLET} WHERE w.organization_id = $1 AND w.id = ANY($2::text[])`;

function fromRow(row: Record<string, unknown>): Wallet {
  const balances = walletBalances(accountSumsFromRow(row));
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    ownerId: String(row.owner_id),
    currency: row.currency as Currency,
    status: row.status as WalletStatus,
    statusReason: row.status_reason === null ? null : (row.status_reason as WalletStatusReason),
    statusChangedAt: row.status_changed_at === null ? null : toDate(row.status_changed_at),
    ...balances,
    metadata: toJsonObject<Record<string, string>>(row.metadata),
    accountDetails: accountDetailsFromRow(row),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

/** Inserts the wallet and its ledger account, which starts at zero. */
export async function insertWallet(db: Queryable, w: Wallet): Promise<void> {
  await db.query(`INSERT INTO wallets (${WALLET_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8)`, [
    w.id,
    w.organizationId,
    w.ownerId,
    w.currency,
    w.status,
    JSON.stringify(w.metadata),
    w.createdAt,
    w.updatedAt,
  ]);
  await db.query(
    `INSERT INTO ledger_accounts (id, organization_id, kind, wallet_id, currency, created_at, updated_at)
     VALUES ($1, $2, 'wallet', $1, $3, $4, $4)`,
    [w.id, w.organizationId, w.currency, w.createdAt],
  );
}

/** Writes a wallet's new status; the database copies it onto the wallet's ledger account. */
export async function updateWalletStatus(
  db: Queryable,
  wallet: Pick<Wallet, 'id' | 'status' | 'statusReason' | 'statusChangedAt' | 'updatedAt'>,
): Promise<void> {
  await db.query(
    'UPDATE wallets SET status = $2, status_reason = $3, status_changed_at = $4, updated_at = $5 WHERE id = $1',
    [wallet.id, wallet.status, wallet.statusReason, wallet.statusChangedAt, wallet.updatedAt],
  );
}

/**
 * Locks the wallet's own row (not its ledger account: a change of its metadata moves no money), so two
 * changes of one wallet queue; false when the organization has no such wallet.
 */
export async function lockWalletRow(db: Queryable, organizationId: string, id: string): Promise<boolean> {
  const rows = await db.query('SELECT id FROM wallets WHERE organization_id = $1 AND id = $2 FOR UPDATE', [
    organizationId,
    id,
  ]);
  return rows.length > 0;
}

/** Writes a wallet's metadata. */
export async function updateWalletMetadata(
  db: Queryable,
  wallet: Pick<Wallet, 'id' | 'metadata' | 'updatedAt'>,
): Promise<void> {
  await db.query('UPDATE wallets SET metadata = $2::jsonb, updated_at = $3 WHERE id = $1', [
    wallet.id,
    JSON.stringify(wallet.metadata),
    wallet.updatedAt,
  ]);
}

export async function findWallet(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<Wallet | undefined> {
  const [row] = await db.query(FIND_WALLET_SQL, [organizationId, id]);
  return row && fromRow(row);
}

const { columns: IDENTITY_COLUMNS, fromRow: identityFromRow } = columnRows<WalletIdentity>({
  id: String,
  organizationId: String,
  ownerId: String,
  currency: text,
});

/**
 * Wallets' identities by id, whatever their organization: the caller keeps each to the organization that
 * asked (wallets/useCases/identities.ts, whose reads are shared by concurrent requests of any organization).
 */
export async function findWalletIdentitiesByIds(
  db: Queryable,
  ids: readonly string[],
): Promise<WalletIdentity[]> {
  const rows = await db.query(`SELECT ${IDENTITY_COLUMNS} FROM wallets WHERE id = ANY($1::text[])`, [ids]);
  return rows.map(identityFromRow);
}

/** Several wallets of an organization with one statement, by id; missing ones are absent from the map. */
export async function findWallets(
  db: Queryable,
  organizationId: string,
  ids: readonly string[],
): Promise<Map<string, Wallet>> {
  const rows = await queryByIds(
    db,
    { one: FIND_WALLET_SQL, two: FIND_TWO_WALLETS_SQL, many: FIND_WALLETS_SQL },
    [organizationId],
    ids,
  );
  return new Map(rows.map((row) => [String(row.id), fromRow(row)]));
}

export interface WalletFilter extends KeysetFilter {
  ownerId?: string | undefined;
  currency?: Currency | undefined;
  status?: WalletStatus | undefined;
}

export async function listWallets(
  db: Queryable,
  organizationId: string,
  filter: WalletFilter,
  rowsMax: number,
): Promise<Wallet[]> {
  const params: unknown[] = [organizationId];
  const conditions = [
    'w.organization_id = $1',
    ...keysetConditions(filter, params, 'w.', ID_PREFIXES.wallet),
    // The same id range on the account side (same id), so a merge join does not read every newer account.
    ...idRangeConditions(filter, params, 'a.id', ID_PREFIXES.wallet),
  ];
  for (const [column, value] of [
    ['owner_id', filter.ownerId],
    ['currency', filter.currency],
    ['status', filter.status],
  ] as const) {
    if (value === undefined) continue;
    params.push(value);
    conditions.push(`w.${column} = $${params.length}`);
  }
  params.push(rowsMax);
  const rows = await db.query(
    `${SELECT_WALLET} WHERE ${conditions.join(' AND ')} ORDER BY w.id DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map(fromRow);
}
