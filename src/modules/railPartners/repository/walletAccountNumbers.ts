/**
 * Wallets' bank account numbers a partner issued (Flutterwave static virtual accounts): one per wallet and
 * partner, written once; a second writer finds the first's row.
 */
import { columnRows } from '../../../store/repositories/rowMappers.ts';
import { nullableText, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

export interface WalletPartnerAccount {
  walletId: string;
  organizationId: string;
  partner: string;
  configId: string;
  /** What the account was made with at the partner, and what its deposits name: the wallet's reference. */
  txRef: string;
  accountNumber: string;
  bankName: string;
  orderRef: string;
  flwRef: string | null;
  createdAt: Date;
}

const { columns: COLUMNS, fromRow } = columnRows<WalletPartnerAccount>({
  walletId: String,
  organizationId: String,
  partner: String,
  configId: String,
  txRef: String,
  accountNumber: String,
  bankName: String,
  orderRef: String,
  flwRef: nullableText,
  createdAt: toDate,
});

/**
 * The organization's first-issued account that meets `condition`, whose parameters (`params`) are $2 on: a
 * wallet may hold accounts from several partners.
 */
async function firstIssuedAccount(
  db: Queryable,
  organizationId: string,
  condition: string,
  params: readonly unknown[],
): Promise<WalletPartnerAccount | undefined> {
  const [row] = await db.query(
    `SELECT ${COLUMNS} FROM wallet_partner_accounts WHERE organization_id = $1 AND ${condition}
     ORDER BY created_at LIMIT 1`,
    [organizationId, ...params],
  );
  return row && fromRow(row);
}

/** The wallet's account from `partner`, or (no partner named) from whichever partner issued it first. */
export const findWalletPartnerAccount = (
  db: Queryable,
  organizationId: string,
  walletId: string,
  partner?: string,
): Promise<WalletPartnerAccount | undefined> =>
  firstIssuedAccount(db, organizationId, 'wallet_id = $2 AND ($3::text IS NULL OR partner = $3)', [
    walletId,
    partner ?? null,
  ]);

/** Records the account; false when the wallet had one from this partner already (that one stands). */
export async function insertWalletPartnerAccount(db: Queryable, a: WalletPartnerAccount): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO wallet_partner_accounts (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (wallet_id, partner) DO NOTHING RETURNING wallet_id`,
    // biome-ignore format: the columns' order, one line
    [a.walletId, a.organizationId, a.partner, a.configId, a.txRef, a.accountNumber, a.bankName, a.orderRef, a.flwRef, a.createdAt],
  );
  return rows.length > 0;
}

/** The organization's wallet account with this number, from whichever partner issued it. */
export const findWalletPartnerAccountByNumber = (
  db: Queryable,
  organizationId: string,
  accountNumber: string,
): Promise<WalletPartnerAccount | undefined> =>
  firstIssuedAccount(db, organizationId, 'account_number = $2', [accountNumber]);
