/**
 * A custody partner's report that a sweep's transaction failed (or was cancelled, blocked, rejected),
 * applied inside the callback's transaction. A sweep still on its way is left to the sweep pass, whose poll
 * decides it. A sweep already completed was booked (the trust ledger's sweep, and its network fee), so it is
 * neither ignored nor taken back: it opens a `late_callback` reconciliation exception naming the sweep, as a
 * deposit or a payout reported so does, which an operator resolves.
 */
import type { Deps } from '../../../app/deps.ts';
import type { CustodySweepReport } from '../../../rails/partner.ts';
import type { Queryable } from '../../../store/store.ts';
import { openException } from '../../treasury/index.ts';
import type { RailPartnerConfig } from '../domain.ts';
import { lockSweep } from '../repository/custodySweeps.ts';
import type { CallbackEffect } from './callbackEffects.ts';

export async function applyCustodySweepReport(
  tx: Queryable,
  deps: Deps,
  config: RailPartnerConfig,
  report: CustodySweepReport,
  callbackId: string,
): Promise<CallbackEffect> {
  const { status, subStatus } = report.notCompleted;
  const reported = `${status}${subStatus ? ` (${subStatus})` : ''}`;
  const sweep = await lockSweep(tx, report.sweepId);
  if (!sweep || sweep.organizationId !== config.organizationId || sweep.configId !== config.id) {
    return { status: 'ignored', transferId: null, detail: `names no sweep of this partner: ${reported}` };
  }
  if (sweep.status !== 'completed') {
    return {
      status: 'ignored',
      transferId: null,
      detail: `sweep ${sweep.id} (${sweep.status}) reported ${reported}: the sweep pass follows it`,
    };
  }
  await openException(tx, deps, {
    organizationId: sweep.organizationId,
    transferId: null,
    kind: 'late_callback',
    details: {
      partner: config.partner,
      callback_id: callbackId,
      direction: 'sweep',
      custody_sweep_id: sweep.id,
      safeguarding_sweep_id: sweep.safeguardingSweepId,
      partner_transaction_id: sweep.partnerTransactionId ?? report.reference,
      vault_account_id: sweep.vaultAccountId,
      reported: 'failed',
      reported_status: status,
      reported_sub_status: subStatus,
      amount_minor: sweep.amountMinor.toString(),
      currency: sweep.currency,
    },
  });
  return {
    status: 'exception',
    transferId: null,
    detail: `sweep ${sweep.id} (completed) reported ${reported} after it completed`,
  };
}
