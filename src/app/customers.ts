import type { CustomerType } from '../domain/customers.ts';
import { resourceMissing } from '../domain/errors.ts';
import type { Metadata } from '../domain/metadata.ts';
import { type Page, type PageRequest, toPage } from '../domain/pagination.ts';
import {
  type Customer,
  findCustomer,
  insertCustomer,
  listCustomers as listCustomerRows,
} from '../store/repositories/customers.ts';
import type { Queryable } from '../store/store.ts';
import type { Deps } from './deps.ts';

export interface CreateCustomerInput {
  type: CustomerType;
  name: string;
  email?: string | undefined;
  phone?: string | undefined;
  metadata?: Metadata | undefined;
}

export async function createCustomer(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: CreateCustomerInput,
): Promise<Customer> {
  const now = deps.now();
  const customer: Customer = {
    id: deps.newId('customer'),
    organizationId,
    type: input.type,
    name: input.name,
    email: input.email ?? null,
    phone: input.phone ?? null,
    kycStatus: 'unverified',
    riskOverride: null,
    riskOverrideReason: null,
    sanctionsHit: false,
    openAlerts: 0,
    metadata: input.metadata ?? {},
    createdAt: now,
    updatedAt: now,
  };
  await insertCustomer(tx, customer);
  return customer;
}

export async function getCustomer(deps: Deps, organizationId: string, id: string): Promise<Customer> {
  const customer = await findCustomer(deps.store, organizationId, id);
  if (!customer) throw resourceMissing('customer', id);
  return customer;
}

export async function listCustomers(
  deps: Deps,
  organizationId: string,
  page: PageRequest & { type?: CustomerType | undefined },
): Promise<Page<Customer>> {
  const rows = await listCustomerRows(deps.store, organizationId, page, page.limit + 1);
  return toPage(rows, page.limit);
}
