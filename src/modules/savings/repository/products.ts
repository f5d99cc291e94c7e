/** Savings products and their effective-dated rates. */
import type { Metadata } from '../../../domain/metadata.ts';
import type { Currency } from '../../../domain/money.ts';
import { organizationRecordFinder } from '../../../store/repositories/records.ts';
import { rowMapper, stored } from '../../../store/repositories/rowMappers.ts';
import { nullableNumber, toBigInt, toDate, toJsonObject } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { SavingsProductTerms, SavingsRate } from '../domain.ts';

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

const PRODUCT_COLUMNS = `id, organization_id, name, currency, day_count, minimum_balance_minor, access, notice_days,
  term_days, early_withdrawal_penalty_bps, metadata, created_by, created_at`;

const productFieldsFromRow = rowMapper<Omit<SavingsProduct, 'rates'>>({
  id: String,
  organizationId: String,
  name: String,
  currency: stored,
  dayCount: stored,
  minimumBalanceMinor: toBigInt,
  access: stored,
  noticeDays: nullableNumber,
  termDays: nullableNumber,
  earlyWithdrawalPenaltyBps: nullableNumber,
  metadata: toJsonObject<Metadata>,
  createdBy: String,
  createdAt: toDate,
});

function productFromRow(row: Record<string, unknown>, rates: SavingsRate[]): SavingsProduct {
  return { ...productFieldsFromRow(row), rates };
}

const rateFromRow = rowMapper<SavingsRate>({ effectiveFrom: String, annualRateBps: Number });

async function ratesOf(db: Queryable, productIds: readonly string[]): Promise<Map<string, SavingsRate[]>> {
  const rows = await db.query(
    `SELECT product_id, effective_from::text AS effective_from, annual_rate_bps
       FROM savings_product_rates WHERE product_id = ANY($1::text[]) ORDER BY product_id, effective_from`,
    [productIds],
  );
  const byProduct = new Map<string, SavingsRate[]>();
  for (const row of rows) {
    const list = byProduct.get(String(row.product_id)) ?? [];
    list.push(rateFromRow(row));
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

const findProductRow = organizationRecordFinder({
  name: 'savings_products',
  columns: PRODUCT_COLUMNS,
  fromRow: productFieldsFromRow,
});

/** A product with its rates. */
export async function findSavingsProduct(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<SavingsProduct | undefined> {
  const product = await findProductRow(db, organizationId, id);
  return product && { ...product, rates: (await ratesOf(db, [id])).get(id) ?? [] };
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
