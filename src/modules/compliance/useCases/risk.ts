/** An operator's override of a customer's risk level (or its removal), recorded as evidence. */

import type { Deps } from '../../../app/deps.ts';
import { appendEvidence } from '../../../app/evidence.ts';
import { lockById } from '../../../app/reads.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import { deriveRiskLevel, type RiskLevel } from '../../../domain/risk.ts';
import type { Queryable } from '../../../store/store.ts';
import { type Customer, findCustomer, saveCustomerCompliance } from '../../customers/index.ts';

/** The customer with this id, its row locked for the transaction; 404 when there is none. */
const lockCustomer = lockById(findCustomer, 'customer');

export async function setRiskOverride(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  customerId: string,
  override: { level: RiskLevel; reason: string } | undefined,
  actor: EvidenceActor,
): Promise<Customer> {
  const customer = await lockCustomer(tx, organizationId, customerId);
  const updated: Customer = {
    ...customer,
    riskOverride: override?.level ?? null,
    riskOverrideReason: override?.reason ?? null,
    updatedAt: deps.now(),
  };
  await saveCustomerCompliance(tx, updated);
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'risk.override',
      actor,
      customerId,
      data: {
        derived: deriveRiskLevel(customer),
        before: customer.riskOverride,
        after: updated.riskOverride,
        reason: override?.reason ?? null,
      },
    },
  ]);
  return updated;
}
