/** A customer in its wire form: its tier and risk level derived as they stand. */
import { tierOf } from '../../../domain/decisions/limits.ts';
import { effectiveRiskLevel } from '../../../domain/risk.ts';
import type { Customer } from '../useCases/customers.ts';

export function presentCustomer(customer: Customer) {
  return {
    id: customer.id,
    object: 'customer',
    type: customer.type,
    name: customer.name,
    email: customer.email,
    phone: customer.phone,
    address: customer.address,
    kyc_status: customer.kycStatus,
    tier: tierOf(customer.kycStatus, customer.type),
    risk_level: effectiveRiskLevel(customer, customer.riskOverride),
    risk_level_overridden: customer.riskOverride !== null,
    metadata: customer.metadata,
    created_at: customer.createdAt.toISOString(),
    updated_at: customer.updatedAt.toISOString(),
  };
}
