/**
 * A custody partner's report of a deposit (PartnerRail.parseDeposit), applied inside the callback's
 * transaction: recorded through the same path chain deposits take (stablecoins' recordCustodyDeposit), so
 * the deposit worker credits it, or holds it for a Travel Rule review, as it does every deposit. The same
 * deposit reported again changes nothing; one to an address that is not the organization's is ignored.
 *
 * A deposit the partner reports no longer completed (a status after COMPLETED: docs/rails/fireblocks.md)
 * is neither ignored nor taken back: it opens a `late_callback` reconciliation exception naming the deposit
 * and the transfer that credited it, which an operator resolves.
 */
import type { Deps } from '../../../app/deps.ts';
import { AppError } from '../../../domain/errors.ts';
import type { CustodyDepositReport } from '../../../rails/partner.ts';
import type { Queryable } from '../../../store/store.ts';
import { findCustodyDeposit, recordCustodyDeposit } from '../../stablecoins/index.ts';
import { openException } from '../../treasury/index.ts';
import type { CallbackEffect } from './callbackEffects.ts';

/** Where the report came from: a callback (its id and partner), or the partner's history read by a poll. */
export interface DepositReportSource {
  partner: string;
  callbackId: string | null;
}

export async function applyCustodyDeposit(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  report: CustodyDepositReport,
  source: DepositReportSource,
): Promise<CallbackEffect> {
  try {
    if (report.notCompleted) {
      return await applyDepositNotCompleted(tx, deps, organizationId, report, report.notCompleted, source);
    }
    const { depositId, created } = await recordCustodyDeposit(tx, deps, organizationId, report);
    return created
      ? { status: 'applied', transferId: null, detail: `deposit ${depositId}` }
      : { status: 'unchanged', transferId: null, detail: `deposit ${depositId} already recorded` };
  } catch (error) {
    // Not one of our addresses, or the same chain transfer with another amount: nothing to credit.
    if (error instanceof AppError) return { status: 'ignored', transferId: null, detail: error.message };
    throw error;
  }
}

/**
 * A deposit reported failed (or cancelled, blocked, rejected): one never recorded is ignored (nothing was
 * credited); one recorded, credited or not, opens an exception for an operator, and nothing moves.
 */
async function applyDepositNotCompleted(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  report: CustodyDepositReport,
  notCompleted: { status: string; subStatus: string },
  source: DepositReportSource,
): Promise<CallbackEffect> {
  const reported = `${notCompleted.status}${notCompleted.subStatus ? ` (${notCompleted.subStatus})` : ''}`;
  const deposit = await findCustodyDeposit(tx, organizationId, report);
  if (!deposit) {
    return { status: 'ignored', transferId: null, detail: `a deposit never recorded is now ${reported}` };
  }
  await openException(tx, deps, {
    organizationId,
    transferId: deposit.transferId,
    kind: 'late_callback',
    details: {
      partner: source.partner,
      callback_id: source.callbackId,
      direction: 'deposit',
      deposit_id: deposit.id,
      deposit_status: deposit.status,
      network: deposit.network,
      tx_hash: deposit.txHash,
      reported: 'failed',
      reported_status: notCompleted.status,
      reported_sub_status: notCompleted.subStatus,
      amount_minor: deposit.amountMinor.toString(),
      currency: deposit.asset,
    },
  });
  return {
    status: 'exception',
    transferId: deposit.transferId,
    detail: `deposit ${deposit.id} (${deposit.status}) reported ${reported} after it completed`,
  };
}
