/**
 * Removing an organization's Smile ID configuration: the row, with its sealed API key, is deleted (and the
 * sealed copies kept in its decided governed changes erased), so no key remains to sign with or to check a
 * callback by; its callback address then answers 404. Jobs in flight are `withdrawn`: without the key
 * they can be neither sent nor polled, and a result that cannot be authenticated must not decide a
 * verification, so each stays `pending` for an operator (who can read Smile ID's answer in its portal),
 * never decided by another provider behind the operator's back. New verifications then go to the sandbox
 * provider in the sandbox, or wait for an operator elsewhere, as for an organization that never had one.
 */
import type { Deps } from '../../../../app/deps.ts';
import { appendEvidence } from '../../../../app/evidence.ts';
import { resourceMissing } from '../../../../domain/errors.ts';
import type { EvidenceActor } from '../../../../domain/evidence.ts';
import type { Queryable } from '../../../../store/store.ts';
import { eraseDecidedChangeCredentials } from '../../../authorization/index.ts';
import { deleteSmileIdConfig, withdrawSmileIdJobs } from '../../repository/smileId.ts';

export interface SmileIdRemoval {
  /** The verifications whose jobs were in flight, now waiting for an operator. */
  withdrawnVerificationIds: string[];
}

export async function removeSmileId(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  actor: EvidenceActor,
): Promise<SmileIdRemoval> {
  const removed = await deleteSmileIdConfig(tx, organizationId);
  if (removed === undefined) throw resourceMissing('verification_provider', organizationId);
  const withdrawnVerificationIds = await withdrawSmileIdJobs(tx, organizationId, deps.now());
  const erasedChanges = await eraseDecidedChangeCredentials(tx, organizationId, 'verification_provider');
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'verification_provider.remove',
      actor,
      data: {
        provider: 'smile_id',
        base_url: removed.settings.base_url,
        partner_id: removed.settings.partner_id,
        credentials_destroyed: ['api_key'],
        sealed_copies_erased: erasedChanges,
        withdrawn_verifications: withdrawnVerificationIds,
      },
    },
  ]);
  return { withdrawnVerificationIds };
}
