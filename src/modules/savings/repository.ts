/** Savings products, their rates, accounts, daily accruals, notices and withdrawals. */
import type { Metadata } from '../../domain/metadata.ts';
import type { Currency } from '../../domain/money.ts';
import { toBigInt, toDate, toJsonObject } from '../../store/repositories/rows.ts';
import type { Queryable } from '../../store/store.ts';
import type {
  DayCountConvention,
  NoticeFacts,
  SavingsAccessType,
  SavingsProductTerms,
  SavingsRate,
} from './domain.ts';

export interface SavingsProduct extends SavingsProductTerms {
  id: string;
  organizationId: string;
  currency: Currency;
  metadata: Metadata;
  createdBy: string;
  createdAt: Date;
  /** Every rate, oldest first. */
  rates: SavingsRate[];
}

export interface SavingsAccount {
  walletId: string;
  organizationId: string;
  productId: string;
  openedOn: string;
  maturesOn: string | null;
  accruedThrough: string;
  accruedParts: bigint;
  payableMinor: bigint;
  interestPaidMinor: bigint;
  createdAt: Date;
  updatedAt: Date;
}

export interface SavingsAccrualRow {
  walletId: string;
  day: string;
  organizationId: string;
  balanceMinor: bigint;
  annualRateBps: number;
  dayCountDays: number;
  dayCountBasis: number;
  parts: bigint;
  accruedPartsAfter: bigint;
  bookedMinor: bigint;
  capitalizedMinor: bigint;
  bookingEntryId: string | null;
  capitalizationEntryId: string | null;
  createdAt: Date;
}

export interface SavingsNotice extends NoticeFacts {
  organizationId: string;
  walletId: string;
  givenOn: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface SavingsWithdrawal {
  id: string;
  organizationId: string;
  walletId: string;
  destinationWalletId: string;
  amountMinor: bigint;
  penaltyMinor: bigint;
  noticeId: string | null;
  day: string;
  entryId: string;
  createdAt: Date;
}

const PRODUCT_COLUMNS = `id, organization_id, name, currency, day_count, minimum_balance_minor, access, notice_days,
  term_days, early_withdrawal_penalty_bps, metadata, created_by, created_at`;

function productFromRow(row: Record<string, unknown>, rates: SavingsRate[]): SavingsProduct {
  const int = (v: unknown) => (v === null ? null : Number(v));
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    name: String(row.name),
    currency: row.currency as Currency,
    dayCount: row.day_count as DayCountConvention,
    minimumBalanceMinor: toBigInt(row.minimum_balance_minor),
    access: row.access as SavingsAccessType,
    noticeDays: int(row.notice_days),
    termDays: int(row.term_days),
    earlyWithdrawalPenaltyBps: int(row.early_withdrawal_penalty_bps),
    metadata: toJsonObject<Metadata>(row.metadata),
    createdBy: String(row.created_by),
    createdAt: toDate(row.created_at),
    rates,
  };
}

async function ratesOf(db: Queryable, productIds: readonly string[]): Promise<Map<string, SavingsRate[]>> {
  const rows = await db.query(
    `SELECT product_id, effective_from::text AS effective_from, annual_rate_bps
       FROM savings_product_rates WHERE product_id = ANY($1::text[]) ORDER BY product_id, effective_from`,
    [productIds],
  );
  const byProduct = new Map<string, SavingsRate[]>();
  for (const row of rows) {
    const list = byProduct.get(String(row.product_id)) ?? [];
    list.push({ effectiveFrom: String(row.effective_from), annualRateBps: Number(row.annual_rate_bps) });
    byProduct.set(String(row.product_id), list);
  }
  return byProduct;
}

export async function insertSavingsProduct(db: Queryable, p: SavingsProduct): Promise<void> {
  await db.query(
    `INSERT INTO savings_products (${PRODUCT_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13)`,
    [
      p.id,
      p.organizationId,
      p.name,
      p.currency,
      p.dayCount,
      p.minimumBalanceMinor.toString(),
      p.access,
      p.noticeDays,
      p.termDays,
      p.earlyWithdrawalPenaltyBps,
      JSON.stringify(p.metadata),
      p.createdBy,
      p.createdAt,
    ],
  );
  for (const rate of p.rates) await insertSavingsRate(db, p.id, rate, p.createdBy, p.createdAt);
}

/** Appends a rate; false when the product already has one from that day. */
export async function insertSavingsRate(
  db: Queryable,
  productId: string,
  rate: SavingsRate,
  createdBy: string,
  now: Date,
): Promise<boolean> {
  const inserted = await db.query(
    `INSERT INTO savings_product_rates (product_id, effective_from, annual_rate_bps, created_by, created_at)
     VALUES ($1, $2::date, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING product_id`,
    [productId, rate.effectiveFrom, rate.annualRateBps, createdBy, now],
  );
  return inserted.length === 1;
}

export async function findSavingsProduct(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<SavingsProduct | undefined> {
  const [row] = await db.query(
    `SELECT ${PRODUCT_COLUMNS} FROM savings_products WHERE organization_id = $1 AND id = $2`,
    [organizationId, id],
  );
  if (!row) return undefined;
  return productFromRow(row, (await ratesOf(db, [id])).get(id) ?? []);
}

/** Locks a product against concurrent rate changes for the transaction. */
export async function lockSavingsProduct(db: Queryable, organizationId: string, id: string): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtext('mkoba.savings_product'), hashtext($1))", [
    `${organizationId}/${id}`,
  ]);
}

/** Products newest first, `limit` rows after the cursor. */
export async function listSavingsProducts(
  db: Queryable,
  organizationId: string,
  startingAfter: string | undefined,
  limit: number,
): Promise<SavingsProduct[]> {
  const rows = await db.query(
    `SELECT ${PRODUCT_COLUMNS} FROM savings_products
      WHERE organization_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`,
    [organizationId, startingAfter ?? null, limit],
  );
  const rates = await ratesOf(
    db,
    rows.map((r) => String(r.id)),
  );
  return rows.map((r) => productFromRow(r, rates.get(String(r.id)) ?? []));
}

const ACCOUNT_COLUMNS = `wallet_id, organization_id, product_id, opened_on::text AS opened_on,
  matures_on::text AS matures_on, accrued_through::text AS accrued_through, accrued_parts, payable_minor,
  interest_paid_minor, created_at, updated_at`;

function accountFromRow(row: Record<string, unknown>): SavingsAccount {
  return {
    walletId: String(row.wallet_id),
    organizationId: String(row.organization_id),
    productId: String(row.product_id),
    openedOn: String(row.opened_on),
    maturesOn: row.matures_on === null ? null : String(row.matures_on),
    accruedThrough: String(row.accrued_through),
    accruedParts: toBigInt(row.accrued_parts),
    payableMinor: toBigInt(row.payable_minor),
    interestPaidMinor: toBigInt(row.interest_paid_minor),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

export async function insertSavingsAccount(db: Queryable, a: SavingsAccount): Promise<void> {
  await db.query(
    `INSERT INTO savings_accounts (wallet_id, organization_id, product_id, opened_on, matures_on, accrued_through,
       accrued_parts, payable_minor, interest_paid_minor, created_at, updated_at)
     VALUES ($1, $2, $3, $4::date, $5::date, $6::date, $7, $8, $9, $10, $11)`,
    [
      a.walletId,
      a.organizationId,
      a.productId,
      a.openedOn,
      a.maturesOn,
      a.accruedThrough,
      a.accruedParts.toString(),
      a.payableMinor.toString(),
      a.interestPaidMinor.toString(),
      a.createdAt,
      a.updatedAt,
    ],
  );
}

export async function findSavingsAccount(
  db: Queryable,
  organizationId: string,
  walletId: string,
  forUpdate = false,
): Promise<SavingsAccount | undefined> {
  const [row] = await db.query(
    `SELECT ${ACCOUNT_COLUMNS} FROM savings_accounts WHERE organization_id = $1 AND wallet_id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    [organizationId, walletId],
  );
  return row ? accountFromRow(row) : undefined;
}

/** Which of these wallets are savings accounts. */
export async function savingsWalletIds(db: Queryable, walletIds: readonly string[]): Promise<Set<string>> {
  if (walletIds.length === 0) return new Set();
  const rows = await db.query('SELECT wallet_id FROM savings_accounts WHERE wallet_id = ANY($1::text[])', [
    walletIds,
  ]);
  return new Set(rows.map((r) => String(r.wallet_id)));
}

export async function listSavingsAccounts(
  db: Queryable,
  organizationId: string,
  filter: { productId?: string | undefined; startingAfter?: string | undefined },
  limit: number,
): Promise<SavingsAccount[]> {
  const rows = await db.query(
    `SELECT ${ACCOUNT_COLUMNS} FROM savings_accounts
      WHERE organization_id = $1 AND ($2::text IS NULL OR product_id = $2) AND ($3::text IS NULL OR wallet_id < $3)
      ORDER BY wallet_id DESC LIMIT $4`,
    [organizationId, filter.productId ?? null, filter.startingAfter ?? null, limit],
  );
  return rows.map(accountFromRow);
}

/**
 * Up to `limit` of the organization's accounts with a day before `throughDay` not accrued yet, after `after`
 * in id order: the accrual pages through them. A closed wallet's account accrues no more (it holds nothing).
 */
export async function savingsAccountsDue(
  db: Queryable,
  organizationId: string,
  throughDay: string,
  after: string | undefined,
  limit: number,
): Promise<SavingsAccount[]> {
  const rows = await db.query(
    `SELECT ${ACCOUNT_COLUMNS} FROM savings_accounts a
      WHERE a.organization_id = $1 AND a.accrued_through < $2::date AND ($3::text IS NULL OR a.wallet_id > $3)
        AND NOT EXISTS (SELECT 1 FROM wallets w WHERE w.id = a.wallet_id AND w.status = 'closed')
      ORDER BY a.wallet_id LIMIT $4`,
    [organizationId, throughDay, after ?? null, limit],
  );
  return rows.map(accountFromRow);
}

/** Locks these accounts (in id order, so two passes never deadlock) and reads them as they now stand. */
export async function lockSavingsAccounts(
  db: Queryable,
  walletIds: readonly string[],
): Promise<SavingsAccount[]> {
  const rows = await db.query(
    `SELECT ${ACCOUNT_COLUMNS} FROM savings_accounts WHERE wallet_id = ANY($1::text[]) ORDER BY wallet_id FOR UPDATE`,
    [walletIds],
  );
  return rows.map(accountFromRow);
}

/** Organizations with savings accounts, in id order after `after`. */
export async function organizationsWithSavings(
  db: Queryable,
  after: string | undefined,
  limit: number,
): Promise<string[]> {
  const rows = await db.query(
    `SELECT DISTINCT organization_id FROM savings_accounts
      WHERE ($1::text IS NULL OR organization_id > $1) ORDER BY organization_id LIMIT $2`,
    [after ?? null, limit],
  );
  return rows.map((r) => String(r.organization_id));
}

export async function updateSavingsAccounts(
  db: Queryable,
  accounts: readonly SavingsAccount[],
): Promise<void> {
  if (accounts.length === 0) return;
  await db.query(
    `UPDATE savings_accounts a
        SET accrued_through = u.accrued_through, accrued_parts = u.accrued_parts, payable_minor = u.payable_minor,
            interest_paid_minor = u.interest_paid_minor, updated_at = u.updated_at
       FROM unnest($1::text[], $2::date[], $3::bigint[], $4::bigint[], $5::bigint[], $6::timestamptz[])
            AS u (wallet_id, accrued_through, accrued_parts, payable_minor, interest_paid_minor, updated_at)
      WHERE a.wallet_id = u.wallet_id`,
    [
      accounts.map((a) => a.walletId),
      accounts.map((a) => a.accruedThrough),
      accounts.map((a) => a.accruedParts.toString()),
      accounts.map((a) => a.payableMinor.toString()),
      accounts.map((a) => a.interestPaidMinor.toString()),
      accounts.map((a) => a.updatedAt.toISOString()),
    ],
  );
}

const ACCRUAL_COLUMNS = `wallet_id, day::text AS day, organization_id, balance_minor, annual_rate_bps, day_count_days,
  day_count_basis, parts, accrued_parts_after, booked_minor, capitalized_minor, booking_entry_id,
  capitalization_entry_id, created_at`;

/** Inserts the day's accruals; the primary key (account, day) refuses a second one for the same day. */
export async function insertSavingsAccruals(
  db: Queryable,
  rows: readonly SavingsAccrualRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO savings_accruals (wallet_id, day, organization_id, balance_minor, annual_rate_bps, day_count_days,
       day_count_basis, parts, accrued_parts_after, booked_minor, capitalized_minor, booking_entry_id,
       capitalization_entry_id, created_at)
     SELECT * FROM unnest($1::text[], $2::date[], $3::text[], $4::bigint[], $5::int[], $6::int[], $7::int[],
       $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::text[], $13::text[], $14::timestamptz[])`,
    [
      rows.map((r) => r.walletId),
      rows.map((r) => r.day),
      rows.map((r) => r.organizationId),
      rows.map((r) => r.balanceMinor.toString()),
      rows.map((r) => r.annualRateBps),
      rows.map((r) => r.dayCountDays),
      rows.map((r) => r.dayCountBasis),
      rows.map((r) => r.parts.toString()),
      rows.map((r) => r.accruedPartsAfter.toString()),
      rows.map((r) => r.bookedMinor.toString()),
      rows.map((r) => r.capitalizedMinor.toString()),
      rows.map((r) => r.bookingEntryId),
      rows.map((r) => r.capitalizationEntryId),
      rows.map((r) => r.createdAt.toISOString()),
    ],
  );
}

/** An account's accruals, newest day first, before `beforeDay`. */
export async function listSavingsAccruals(
  db: Queryable,
  walletId: string,
  beforeDay: string | undefined,
  limit: number,
): Promise<SavingsAccrualRow[]> {
  const rows = await db.query(
    `SELECT ${ACCRUAL_COLUMNS} FROM savings_accruals
      WHERE wallet_id = $1 AND ($2::date IS NULL OR day < $2::date) ORDER BY day DESC LIMIT $3`,
    [walletId, beforeDay ?? null, limit],
  );
  return rows.map((row) => ({
    walletId: String(row.wallet_id),
    day: String(row.day),
    organizationId: String(row.organization_id),
    balanceMinor: toBigInt(row.balance_minor),
    annualRateBps: Number(row.annual_rate_bps),
    dayCountDays: Number(row.day_count_days),
    dayCountBasis: Number(row.day_count_basis),
    parts: toBigInt(row.parts),
    accruedPartsAfter: toBigInt(row.accrued_parts_after),
    bookedMinor: toBigInt(row.booked_minor),
    capitalizedMinor: toBigInt(row.capitalized_minor),
    bookingEntryId: row.booking_entry_id === null ? null : String(row.booking_entry_id),
    capitalizationEntryId: row.capitalization_entry_id === null ? null : String(row.capitalization_entry_id),
    createdAt: toDate(row.created_at),
  }));
}

const NOTICE_COLUMNS = `id, organization_id, wallet_id, amount_minor, given_on::text AS given_on,
  available_on::text AS available_on, status, created_at, updated_at`;

function noticeFromRow(row: Record<string, unknown>): SavingsNotice {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    walletId: String(row.wallet_id),
    amountMinor: toBigInt(row.amount_minor),
    givenOn: String(row.given_on),
    availableOn: String(row.available_on),
    status: row.status as SavingsNotice['status'],
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

export async function insertSavingsNotice(db: Queryable, n: SavingsNotice): Promise<void> {
  await db.query(
    `INSERT INTO savings_notices (id, organization_id, wallet_id, amount_minor, given_on, available_on, status,
       created_at, updated_at) VALUES ($1, $2, $3, $4, $5::date, $6::date, $7, $8, $9)`,
    [
      n.id,
      n.organizationId,
      n.walletId,
      n.amountMinor.toString(),
      n.givenOn,
      n.availableOn,
      n.status,
      n.createdAt,
      n.updatedAt,
    ],
  );
}

export async function findSavingsNotice(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<SavingsNotice | undefined> {
  const [row] = await db.query(
    `SELECT ${NOTICE_COLUMNS} FROM savings_notices WHERE organization_id = $1 AND id = $2`,
    [organizationId, id],
  );
  return row ? noticeFromRow(row) : undefined;
}

export async function listSavingsNotices(
  db: Queryable,
  organizationId: string,
  walletId: string,
  limit: number,
): Promise<SavingsNotice[]> {
  const rows = await db.query(
    `SELECT ${NOTICE_COLUMNS} FROM savings_notices WHERE organization_id = $1 AND wallet_id = $2
      ORDER BY id DESC LIMIT $3`,
    [organizationId, walletId, limit],
  );
  return rows.map(noticeFromRow);
}

export async function updateSavingsNoticeStatus(
  db: Queryable,
  id: string,
  status: SavingsNotice['status'],
  now: Date,
): Promise<void> {
  await db.query('UPDATE savings_notices SET status = $2, updated_at = $3 WHERE id = $1', [id, status, now]);
}

export async function insertSavingsWithdrawal(db: Queryable, w: SavingsWithdrawal): Promise<void> {
  await db.query(
    `INSERT INTO savings_withdrawals (id, organization_id, wallet_id, destination_wallet_id, amount_minor,
       penalty_minor, notice_id, day, entry_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::date, $9, $10)`,
    [
      w.id,
      w.organizationId,
      w.walletId,
      w.destinationWalletId,
      w.amountMinor.toString(),
      w.penaltyMinor.toString(),
      w.noticeId,
      w.day,
      w.entryId,
      w.createdAt,
    ],
  );
}
