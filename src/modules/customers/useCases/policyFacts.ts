/** What an authorization policy may ask of the customer who pays: its KYC status and risk level. */

import type { Deps } from '../../../app/deps.ts';
import type { KycStatus } from '../../../domain/customers.ts';
import { effectiveRiskLevel, type RiskLevel } from '../../../domain/risk.ts';
import { findCustomer } from '../repository.ts';

export interface CustomerPolicyFacts {
  kycStatus: KycStatus;
  riskLevel: RiskLevel;
}

/** Read before the ledger writer, only when a rule of the policy names them. */
export async function readCustomerPolicyFacts(
  deps: Deps,
  organizationId: string,
  customerId: string,
): Promise<CustomerPolicyFacts | undefined> {
  const customer = await findCustomer(deps.store, organizationId, customerId);
  if (!customer) return undefined;
  return { kycStatus: customer.kycStatus, riskLevel: effectiveRiskLevel(customer, customer.riskOverride) };
}
