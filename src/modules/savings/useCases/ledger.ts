/**
 * The ledger side of savings: the organization's interest expense and interest payable accounts (the direct
 * entries savings posts, a day's booking, a month's capitalisation, a withdrawal, are the ledger's directEntry).
 */

import type { Deps } from '../../../app/deps.ts';
import type { Currency } from '../../../domain/money.ts';
import type { Queryable } from '../../../store/store.ts';
import { ensureSystemAccount } from '../../ledger/index.ts';

/** The `rail` the interest accounts are filed under: interest is the organization's own, whatever the rail. */
export const INTEREST_ACCOUNT_RAIL = 'internal';

/** The organization's interest expense and payable accounts in a currency, created on first use. */
export async function interestAccounts(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  currency: Currency,
): Promise<{ expense: string; payable: string }> {
  const ensure = (kind: 'interest_expense' | 'interest_payable') =>
    ensureSystemAccount(tx, {
      id: deps.newId('ledgerAccount'),
      organizationId,
      kind,
      rail: INTEREST_ACCOUNT_RAIL,
      currency,
      now: deps.now(),
    });
  return { expense: await ensure('interest_expense'), payable: await ensure('interest_payable') };
}
