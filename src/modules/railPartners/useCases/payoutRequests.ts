/**
 * The payout request journal a partner adapter is given (src/rails/partner.ts PayoutRequestJournal), kept in
 * the database for one partner configuration: each call its own short transaction, committed before the
 * adapter goes on, so a request recorded as about to be sent stays recorded whatever happens next.
 */
import type { Deps } from '../../../app/deps.ts';
import type { PayoutRequestJournal } from '../../../rails/partner.ts';
import type { RailPartnerConfig } from '../domain.ts';
import {
  acknowledgePayoutRequest,
  deletePayoutRequest,
  findPayoutRequestPartnerId,
  insertPayoutRequest,
} from '../repository/payoutRequests.ts';

export function payoutRequestJournal(deps: Deps, config: RailPartnerConfig): PayoutRequestJournal {
  const { organizationId } = config;
  return {
    begin: (transferId) =>
      insertPayoutRequest(deps.store, {
        transferId,
        organizationId,
        configId: config.id,
        sentAt: deps.now(),
      }),
    acknowledge: (transferId, partnerRequestId) =>
      acknowledgePayoutRequest(deps.store, organizationId, transferId, partnerRequestId, deps.now()),
    release: (transferId) => deletePayoutRequest(deps.store, organizationId, transferId),
    partnerRequestId: (transferId) => findPayoutRequestPartnerId(deps.store, organizationId, transferId),
  };
}
