/**
 * Expires approvals whose time is up, releasing what they held: each pass decides at most
 * APPROVAL_EXPIRY_BATCH_MAX of them, so an approval expires within about one interval of its time. Any
 * number of processes may run it: each expiry locks the resource and the approval and re-checks them.
 */

import type { Deps } from '../../../app/deps.ts';
import {
  APPROVAL_EXPIRY_BATCH_MAX,
  APPROVAL_EXPIRY_INTERVAL_MS,
  expireDueApprovals,
} from '../useCases/approvals.ts';

export { APPROVAL_EXPIRY_INTERVAL_MS };

export function runApprovalExpiryOnce(deps: Deps): Promise<number> {
  return expireDueApprovals(deps, APPROVAL_EXPIRY_BATCH_MAX);
}
