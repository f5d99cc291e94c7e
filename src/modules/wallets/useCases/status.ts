/**
 * Freezing, unfreezing and closing a wallet. Each locks the wallet's ledger account (the lock every
 * movement takes), so a change and a transfer on the same wallet are decided one after the other; writes
 * the status, the event and the evidence record in one transaction.
 */

import type { Deps } from '../../../app/deps.ts';
import { newEvent, recordEvents } from '../../../app/events.ts';
import { appendEvidence } from '../../../app/evidence.ts';
import { AppError, invalidStateTransition, resourceMissing } from '../../../domain/errors.ts';
import { type EventRecord, walletEventData } from '../../../domain/events.ts';
import { type EvidenceActor, type EvidenceKind, requireMemberActor } from '../../../domain/evidence.ts';
import { formatAmount } from '../../../domain/money.ts';
import {
  canChangeWalletStatus,
  type Wallet,
  type WalletStatus,
  type WalletStatusReason,
} from '../../../domain/wallets.ts';
import type { Queryable } from '../../../store/store.ts';
import { lockAccounts, walletBalances } from '../../ledger/index.ts';
import { findWallet, updateWalletStatus } from '../repository.ts';

export type WalletStatusAction = 'freeze' | 'unfreeze' | 'close';

const ACTION: Record<
  WalletStatusAction,
  { to: WalletStatus; event: 'wallet.frozen' | 'wallet.unfrozen' | 'wallet.closed'; evidence: EvidenceKind }
> = {
  freeze: { to: 'frozen', event: 'wallet.frozen', evidence: 'wallet.freeze' },
  unfreeze: { to: 'active', event: 'wallet.unfrozen', evidence: 'wallet.unfreeze' },
  close: { to: 'closed', event: 'wallet.closed', evidence: 'wallet.close' },
};

export interface WalletStatusChange {
  reason: WalletStatusReason;
  note?: string | undefined;
}

function refusedChange(wallet: Wallet, action: WalletStatusAction): AppError {
  const detail =
    action === 'close' && wallet.status === 'frozen'
      ? `Wallet ${wallet.id} is frozen: it can be closed only once the freeze is lifted.`
      : `A ${wallet.status} wallet cannot be ${action === 'freeze' ? 'frozen' : action === 'unfreeze' ? 'unfrozen' : 'closed'}.`;
  return invalidStateTransition('Invalid state transition', detail);
}

export async function changeWalletStatus(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  walletId: string,
  action: WalletStatusAction,
  change: WalletStatusChange,
  actor: EvidenceActor,
): Promise<Wallet> {
  const { to, event, evidence } = ACTION[action];
  // Another organization's wallet is indistinguishable from one that does not exist: look before locking.
  if (!(await findWallet(tx, organizationId, walletId))) throw resourceMissing('wallet', walletId);
  // A freeze or an unfreeze is a person's decision: never a server key's, whatever its scopes.
  if (action !== 'close') requireMemberActor(actor, `${action} a wallet`);
  const account = (await lockAccounts(tx, [walletId])).get(walletId);
  const wallet = await findWallet(tx, organizationId, walletId);
  if (!account || !wallet) throw resourceMissing('wallet', walletId);
  if (!canChangeWalletStatus(wallet.status, to)) throw refusedChange(wallet, action);
  if (action === 'close') {
    const balances = walletBalances(account);
    if (balances.currentMinor !== 0n || balances.pendingMinor !== 0n || account.creditsPending !== 0n) {
      throw new AppError({
        status: 409,
        code: 'wallet_not_empty',
        title: 'Wallet not empty',
        detail: `Wallet ${wallet.id} holds ${formatAmount(balances.currentMinor, wallet.currency)} ${wallet.currency} with ${formatAmount(balances.pendingMinor, wallet.currency)} pending: a wallet closes only at zero, with nothing pending.`,
      });
    }
  }
  const now = deps.now();
  const updated: Wallet = {
    ...wallet,
    status: to,
    statusReason: change.reason,
    statusChangedAt: now,
    updatedAt: now,
  };
  await updateWalletStatus(tx, updated);
  const record: EventRecord = newEvent(
    deps,
    {
      organizationId,
      type: event,
      resourceId: wallet.id,
      data: walletEventData(updated),
    },
    now,
  );
  await recordEvents(tx, deps, [record]);
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: evidence,
      actor,
      walletId: wallet.id,
      customerId: wallet.ownerId,
      data: {
        from_status: wallet.status,
        to_status: to,
        reason: change.reason,
        note: change.note ?? null,
        available: formatAmount(walletBalances(account).availableMinor, wallet.currency),
        currency: wallet.currency,
      },
    },
  ]);
  return updated;
}
