import type { CustomerType, KycStatus } from '../../domain/customers.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Metadata } from '../../domain/metadata.ts';
import type { Queryable } from '../store.ts';
import { type KeysetFilter, keysetConditions, toDate, toJsonObject } from './rows.ts';

export interface Customer {
  id: string;
  organizationId: string;
  type: CustomerType;
  name: string;
  email: string | null;
  phone: string | null;
  kycStatus: KycStatus;
  metadata: Metadata;
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS = 'id, organization_id, type, name, email, phone, kyc_status, metadata, created_at, updated_at';

function fromRow(row: Record<string, unknown>): Customer {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    type: row.type as CustomerType,
    name: String(row.name),
    email: row.email === null ? null : String(row.email),
    phone: row.phone === null ? null : String(row.phone),
    kycStatus: row.kyc_status as KycStatus,
    metadata: toJsonObject<Metadata>(row.metadata),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

export async function insertCustomer(db: Queryable, c: Customer): Promise<void> {
  await db.query(
    `INSERT INTO customers (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10)`,
    [
      c.id,
      c.organizationId,
      c.type,
      c.name,
      c.email,
      c.phone,
      c.kycStatus,
      JSON.stringify(c.metadata),
      c.createdAt,
      c.updatedAt,
    ],
  );
}

export async function findCustomer(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<Customer | undefined> {
  const [row] = await db.query(`SELECT ${COLUMNS} FROM customers WHERE organization_id = $1 AND id = $2`, [
    organizationId,
    id,
  ]);
  return row && fromRow(row);
}

export interface CustomerFilter extends KeysetFilter {
  type?: CustomerType | undefined;
}

export async function listCustomers(
  db: Queryable,
  organizationId: string,
  filter: CustomerFilter,
  rowsMax: number,
): Promise<Customer[]> {
  const params: unknown[] = [organizationId];
  const conditions = ['organization_id = $1', ...keysetConditions(filter, params, '', ID_PREFIXES.customer)];
  if (filter.type !== undefined) {
    params.push(filter.type);
    conditions.push(`type = $${params.length}`);
  }
  params.push(rowsMax);
  const rows = await db.query(
    `SELECT ${COLUMNS} FROM customers WHERE ${conditions.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map(fromRow);
}
