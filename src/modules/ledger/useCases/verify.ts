/** `mkoba ledger verify`: every ledger invariant, each violation named. */

import type { Store } from '../../../store/store.ts';
import { beginWholeHistorySnapshot } from '../../../store/transactions.ts';
import {
  accountsDifferingFromReplay,
  holdsReleasedTwice,
  loanAccountsDifferingFromLoans,
  overdrawnWallets,
  terminalTransfersWithOpenHolds,
  transfersWithUnpostedFees,
  unbalancedEntries,
} from '../repository/checks.ts';

export interface LedgerViolation {
  invariant: string;
  detail: string;
}

/** Runs all checks in one snapshot-consistent transaction. */
export async function verifyLedger(store: Store): Promise<LedgerViolation[]> {
  return store.transaction(async (tx) => {
    await beginWholeHistorySnapshot(tx);
    const violations: LedgerViolation[] = [];
    for (const e of await unbalancedEntries(tx)) {
      violations.push({
        invariant: 'entry_balanced',
        detail: `entry ${e.entryId} nets ${e.net} in ${e.currency}`,
      });
    }
    for (const a of await accountsDifferingFromReplay(tx)) {
      violations.push({
        invariant: 'balance_equals_replay',
        detail: `account ${a.accountId} stores ${a.stored} but its postings replay to ${a.replayed} (debits pending/posted, credits pending/posted)`,
      });
    }
    for (const w of await overdrawnWallets(tx)) {
      violations.push({
        invariant: 'wallet_not_negative',
        detail: `wallet ${w.walletId} has available ${w.available} (minor units)`,
      });
    }
    for (const t of await terminalTransfersWithOpenHolds(tx)) {
      violations.push({
        invariant: 'terminal_transfer_no_open_hold',
        detail: `transfer ${t.transferId} is ${t.status} but its hold is still open`,
      });
    }
    for (const h of await holdsReleasedTwice(tx)) {
      violations.push({
        invariant: 'hold_released_once',
        detail: `hold ${h.holdEntryId} was posted or voided ${h.releases} times`,
      });
    }
    for (const t of await transfersWithUnpostedFees(tx)) {
      violations.push({
        invariant: 'transfer_fee_posted',
        detail: `transfer ${t.transferId} should debit amount + fee and credit the fee (${t.expected}, minor units) but its entry carries ${t.found}`,
      });
    }
    for (const l of await loanAccountsDifferingFromLoans(tx)) {
      violations.push({
        invariant: 'loan_accounts_match_loans',
        detail: `${l.kind} of organization ${l.organizationId} in ${l.currency} holds ${l.ledger} but its loans say ${l.loans} (minor units)`,
      });
    }
    return violations;
  });
}
