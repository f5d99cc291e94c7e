import type { Currency } from '../../domain/money.ts';
import type { Wallet, WalletStatus } from '../../domain/wallets.ts';
import type { Queryable } from '../store.ts';
import { type KeysetFilter, keysetConditions, toBigInt, toDate, toJsonObject } from './rows.ts';

const COLUMNS =
  'id, organization_id, owner_id, currency, status, available_minor, pending_minor, current_minor, metadata, created_at, updated_at';

function fromRow(row: Record<string, unknown>): Wallet {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    ownerId: String(row.owner_id),
    currency: row.currency as Currency,
    status: row.status as WalletStatus,
    availableMinor: toBigInt(row.available_minor),
    pendingMinor: toBigInt(row.pending_minor),
    currentMinor: toBigInt(row.current_minor),
    metadata: toJsonObject<Record<string, string>>(row.metadata),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

export async function insertWallet(db: Queryable, w: Wallet): Promise<void> {
  await db.query(
    `INSERT INTO wallets (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6::bigint, $7::bigint, $8::bigint, $9::jsonb, $10, $11)`,
    [
      w.id,
      w.organizationId,
      w.ownerId,
      w.currency,
      w.status,
      w.availableMinor.toString(),
      w.pendingMinor.toString(),
      w.currentMinor.toString(),
      JSON.stringify(w.metadata),
      w.createdAt,
      w.updatedAt,
    ],
  );
}

export async function findWallet(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<Wallet | undefined> {
  const [row] = await db.query(`SELECT ${COLUMNS} FROM wallets WHERE organization_id = $1 AND id = $2`, [
    organizationId,
    id,
  ]);
  return row && fromRow(row);
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
  const conditions = ['organization_id = $1', ...keysetConditions(filter, params)];
  for (const [column, value] of [
    ['owner_id', filter.ownerId],
    ['currency', filter.currency],
    ['status', filter.status],
  ] as const) {
    if (value === undefined) continue;
    params.push(value);
    conditions.push(`${column} = $${params.length}`);
  }
  params.push(rowsMax);
  const rows = await db.query(
    `SELECT ${COLUMNS} FROM wallets WHERE ${conditions.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map(fromRow);
}
