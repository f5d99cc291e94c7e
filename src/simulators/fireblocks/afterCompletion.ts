/**
 * A completed transaction whose status Fireblocks changes afterwards. Fireblocks' pages publish no such
 * change (its "Transaction substatuses" lists only how a transaction completed: CONFIRMED,
 * 3RD_PARTY_COMPLETED, COMPLETED_BUT_3RD_PARTY_FAILED, COMPLETED_BUT_3RD_PARTY_REJECTED; its community
 * answers "you should only be receiving one COMPLETED status"), so this is the simulator's control for
 * what a chain reorganisation or a provider's correction would look like: the transaction takes the new
 * status and sub-status, GET answers it from then on, and TRANSACTION_STATUS_UPDATED announces it (unless
 * the transaction's outcome sends no webhooks). A change away from COMPLETED moves its balances back.
 */
import { notifyWaiting } from '../shared.ts';
import { announce } from './lifecycle.ts';
import type { FireblocksState, FireblocksTransaction, FireblocksTransactionStatus } from './state.ts';
import { findVault } from './vaults.ts';

export function changeCompletedStatus(
  state: FireblocksState,
  id: string,
  status: FireblocksTransactionStatus,
  subStatus: string,
): FireblocksTransaction {
  const stored = state.transactions.get(id);
  if (stored?.transaction.status !== 'COMPLETED') {
    throw new Error(`changeCompletedStatus: ${id} is not a completed transaction`);
  }
  const { transaction } = stored;
  if (status !== 'COMPLETED') {
    const wallet = findVault(state, stored.vaultAccountId)?.assets.get(transaction.assetId);
    if (wallet) wallet.totalUnits += stored.direction === 'incoming' ? -stored.units : stored.units;
    const destination =
      stored.destinationVaultId === undefined
        ? undefined
        : findVault(state, stored.destinationVaultId)?.assets.get(transaction.assetId);
    if (destination) destination.totalUnits -= stored.units;
  }
  transaction.status = status;
  transaction.subStatus = subStatus;
  transaction.lastUpdated = Date.now();
  state.busy += 1;
  notifyWaiting(state);
  announce(state, stored, 'TRANSACTION_STATUS_UPDATED').finally(() => {
    state.busy -= 1;
    notifyWaiting(state);
  });
  return structuredClone(transaction);
}
