/**
 * Queues a verification as a Smile ID job, in the transaction that records the verification (or clears
 * its screening), when the organization has configured Smile ID; the worker (jobs.ts) sends it.
 */
import type { Deps } from '../../../../app/deps.ts';
import type { Queryable } from '../../../../store/store.ts';
import { findSmileIdConfig, insertSmileIdJob } from '../../repository/smileId.ts';
import type { Verification } from '../../repository/verifications.ts';
import { smileIdLookupOf } from './mapping.ts';

/**
 * Queues the verification as a Smile ID job when the organization has configured Smile ID; false when it
 * has not. A submission Smile ID cannot look up is queued as `refused` and waits for an operator.
 */
export async function queueSmileIdJob(
  tx: Queryable,
  deps: Deps,
  verification: Verification,
): Promise<boolean> {
  const config = await findSmileIdConfig(tx, verification.organizationId);
  if (config === undefined) return false;
  const lookup = smileIdLookupOf(verification.submission);
  const now = deps.now();
  await insertSmileIdJob(tx, {
    verificationId: verification.id,
    organizationId: verification.organizationId,
    jobId: verification.id,
    userId: verification.customerId,
    product: lookup?.product ?? (verification.submission.type === 'individual' ? 'kyc' : 'kyb'),
    state: lookup === undefined ? 'refused' : 'submitting',
    smileJobId: null,
    resultCode: null,
    nextAttemptAt: lookup === undefined ? null : now,
    attempts: 0,
    createdAt: now,
    updatedAt: now,
  });
  return true;
}

/** Whether the organization has configured Smile ID as its verification provider. */
export async function hasSmileId(db: Queryable, organizationId: string): Promise<boolean> {
  return (await findSmileIdConfig(db, organizationId)) !== undefined;
}
