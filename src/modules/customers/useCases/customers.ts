/**
 * Customers created, changed, read and listed. Each write is one transaction with its `customer.*` event and
 * its evidence; a change of a verified fact drops the customer back to `unverified` (the core's
 * `decideCustomerChange`), so the tier its limits follow is never one the new facts did not earn.
 */
import type { Deps } from '../../../app/deps.ts';
import { recordEvent } from '../../../app/events.ts';
import { appendEvidence } from '../../../app/evidence.ts';
import { getById, listPage, lockById, requireById } from '../../../app/reads.ts';
import {
  type Address,
  CUSTOMER_CHANGE_FIELDS,
  type CustomerChangeField,
  type CustomerType,
  decideCustomerChange,
} from '../../../domain/customers.ts';
import { tierOf } from '../../../domain/decisions/limits.ts';
import { type EvidenceActor, type EvidenceValue, valueDigest } from '../../../domain/evidence.ts';
import type { Metadata } from '../../../domain/metadata.ts';
import type { Queryable } from '../../../store/store.ts';
import {
  type Customer,
  type CustomerFilter,
  findCustomer,
  insertCustomer,
  listCustomers as listCustomerRows,
  saveCustomerDetails,
} from '../repository.ts';

/** The customer with this id, its row locked for the transaction; 404 when there is none. */
const lockCustomer = lockById(findCustomer, 'customer');

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { Customer } from '../repository.ts';

export interface CreateCustomerInput {
  type: CustomerType;
  name: string;
  email?: string | undefined;
  phone?: string | undefined;
  address?: Address | undefined;
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
    address: input.address ?? null,
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

/** `PATCH /v1/customers/{id}`: a field given replaces the stored one; `null` clears email, phone or address. */
export interface CustomerChange {
  name?: string | undefined;
  email?: string | null | undefined;
  phone?: string | null | undefined;
  address?: Address | null | undefined;
  metadata?: Metadata | undefined;
}

function sameValue(a: unknown, b: unknown): boolean {
  return valueDigest(a) === valueDigest(b);
}

/**
 * What the evidence keeps of a changed field: the name in clear (the verification it asks for names it too),
 * the other fields as digests of their old and new values (personal data, in a chain that is never rewritten).
 */
function changeRecord(field: CustomerChangeField, from: unknown, to: unknown): EvidenceValue {
  if (field === 'name') return { from: String(from), to: String(to) };
  return { from_sha256: valueDigest(from), to_sha256: valueDigest(to) };
}

/**
 * Changes a customer's details, with the customer locked: the fields that differ are written with the KYC
 * status the change leaves (decideCustomerChange: a verified fact changed on a verified customer asks for a
 * new verification), a `customer.updated` event and a `customer.update` evidence record naming who changed
 * what. A change that changes nothing writes nothing.
 */
export async function updateCustomer(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  change: CustomerChange,
  actor: EvidenceActor,
): Promise<Customer> {
  const customer = await lockCustomer(tx, organizationId, id);
  const changed = CUSTOMER_CHANGE_FIELDS.filter(
    (field) => change[field] !== undefined && !sameValue(customer[field], change[field]),
  );
  if (changed.length === 0) return customer;
  const decision = decideCustomerChange(customer.type, customer.kycStatus, changed);
  const now = deps.now();
  const updated: Customer = {
    ...customer,
    name: change.name ?? customer.name,
    email: change.email === undefined ? customer.email : change.email,
    phone: change.phone === undefined ? customer.phone : change.phone,
    address: change.address === undefined ? customer.address : change.address,
    metadata: change.metadata ?? customer.metadata,
    kycStatus: decision.kycStatus,
    updatedAt: now,
  };
  await saveCustomerDetails(tx, updated);
  const verification = {
    kyc_status: updated.kycStatus,
    previous_kyc_status: customer.kycStatus,
    verification_required_for: decision.reverify,
  };
  await recordEvent(tx, deps, now, {
    organizationId,
    type: 'customer.updated',
    resourceId: customer.id,
    data: {
      customer_id: customer.id,
      type: customer.type,
      changed,
      ...verification,
      tier: tierOf(updated.kycStatus, updated.type),
    },
  });
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'customer.update',
      actor,
      customerId: customer.id,
      data: {
        changes: Object.fromEntries(
          changed.map((field) => [field, changeRecord(field, customer[field], updated[field])]),
        ),
        ...verification,
      },
    },
  ]);
  return updated;
}

export const getCustomer = getById<Customer>(findCustomer, 'customer');

/** The customer with this id, read on a transaction (or the pool); 404 naming `param` when the organization has none. */
export const requireCustomer = requireById<Customer>(findCustomer, 'customer');

export const listCustomers = listPage<CustomerFilter, Customer>(listCustomerRows);
