/**
 * A custody partner's report of a deposit (PartnerRail.parseDeposit), applied inside the callback's
 * transaction: recorded through the same path chain deposits take (stablecoins' recordCustodyDeposit), so
 * the deposit worker credits it, or holds it for a Travel Rule review, as it does every deposit. The same
 * deposit reported again changes nothing; one to an address that is not the organization's is ignored.
 */
import type { Deps } from '../../../app/deps.ts';
import { AppError } from '../../../domain/errors.ts';
import type { CustodyDepositReport } from '../../../rails/partner.ts';
import type { Queryable } from '../../../store/store.ts';
import { recordCustodyDeposit } from '../../stablecoins/index.ts';
import type { CallbackEffect } from './callbackEffects.ts';

export async function applyCustodyDeposit(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  report: CustodyDepositReport,
): Promise<CallbackEffect> {
  try {
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
