/** Customers: their records (with their open AML alerts counted), written, found and listed newest first. */

import type { Address, CustomerType, KycStatus } from '../../domain/customers.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Metadata } from '../../domain/metadata.ts';
import type { RiskLevel } from '../../domain/risk.ts';
import {
  byFields,
  newestFirstLister,
  organizationRecordFinder,
  type RecordTable,
} from '../../store/repositories/records.ts';
import { computed, rowMapper, stored } from '../../store/repositories/rowMappers.ts';
import {
  isTrue,
  type KeysetFilter,
  nullableJsonObject,
  nullableText,
  toDate,
  toJsonObject,
} from '../../store/repositories/rows.ts';
import type { Queryable } from '../../store/store.ts';

export interface Customer {
  id: string;
  organizationId: string;
  type: CustomerType;
  name: string;
  email: string | null;
  phone: string | null;
  /** Where the customer lives or is established; null until given. */
  address: Address | null;
  kycStatus: KycStatus;
  /** An operator's risk level, when one was set. */
  riskOverride: RiskLevel | null;
  riskOverrideReason: string | null;
  /** A sanctions match confirmed on this customer by an operator. */
  sanctionsHit: boolean;
  /** Open AML alerts on the customer's wallets (read, never written). */
  openAlerts: number;
  metadata: Metadata;
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS =
  'id, organization_id, type, name, email, phone, kyc_status, metadata, created_at, updated_at, risk_override, risk_override_reason, sanctions_hit, address';

/** With the count of the customer's open AML alerts, which its risk level depends on. */
const SELECT_COLUMNS = `${COLUMNS}, (SELECT count(*)::int FROM aml_alerts a
   WHERE a.organization_id = customers.organization_id AND a.customer_id = customers.id AND a.status = 'open')
   AS open_alerts`;

const fromRow = rowMapper<Customer>({
  id: String,
  organizationId: String,
  type: stored,
  name: String,
  email: nullableText,
  phone: nullableText,
  address: nullableJsonObject<Address>,
  kycStatus: stored,
  riskOverride: stored,
  riskOverrideReason: nullableText,
  sanctionsHit: isTrue,
  openAlerts: computed((row) => Number(row.open_alerts ?? 0)),
  metadata: toJsonObject<Metadata>,
  createdAt: toDate,
  updatedAt: toDate,
});

export async function insertCustomer(db: Queryable, c: Customer): Promise<void> {
  await db.query(
    `INSERT INTO customers (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13, $14::jsonb)`,
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
      c.riskOverride,
      c.riskOverrideReason,
      c.sanctionsHit,
      c.address === null ? null : JSON.stringify(c.address),
    ],
  );
}

/** Writes what the integrator changes on a customer, and the KYC status the change leaves it in. */
export async function saveCustomerDetails(db: Queryable, c: Customer): Promise<void> {
  await db.query(
    `UPDATE customers SET name = $2, email = $3, phone = $4, address = $5::jsonb, metadata = $6::jsonb,
            kyc_status = $7, updated_at = $8 WHERE id = $1`,
    [
      c.id,
      c.name,
      c.email,
      c.phone,
      c.address === null ? null : JSON.stringify(c.address),
      JSON.stringify(c.metadata),
      c.kycStatus,
      c.updatedAt,
    ],
  );
}

/** Writes what compliance changes on a customer: its KYC status, risk override and sanctions flag. */
export async function saveCustomerCompliance(db: Queryable, c: Customer): Promise<void> {
  await db.query(
    `UPDATE customers SET kyc_status = $2, risk_override = $3, risk_override_reason = $4, sanctions_hit = $5,
            updated_at = $6 WHERE id = $1`,
    [c.id, c.kycStatus, c.riskOverride, c.riskOverrideReason, c.sanctionsHit, c.updatedAt],
  );
}

const CUSTOMERS: RecordTable<Customer> = {
  name: 'customers',
  columns: SELECT_COLUMNS,
  prefix: ID_PREFIXES.customer,
  fromRow,
};

export const findCustomer = organizationRecordFinder(CUSTOMERS);

export interface CustomerFilter extends KeysetFilter {
  type?: CustomerType | undefined;
}

export const listCustomers = newestFirstLister(CUSTOMERS, byFields<CustomerFilter>('type'));
