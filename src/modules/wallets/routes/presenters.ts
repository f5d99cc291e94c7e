/** A wallet, its balance and its account details in their wire form. */
import type { Wallet, WalletAccountDetails } from '../../../domain/wallets.ts';
import { isoOrNull, presentBalances } from '../../../http/presenters.ts';

/** A wallet's account details as the wallet embeds them (without `object` and `wallet`). */
export function presentAccountDetailsFields(details: WalletAccountDetails) {
  return {
    account_number: details.accountNumber,
    bank_code: details.bankCode,
    bank_name: details.bankName,
    virtual_reference: details.virtualReference,
    created_at: details.createdAt.toISOString(),
  };
}

export function presentAccountDetails(details: WalletAccountDetails) {
  return { object: 'account_details', wallet: details.walletId, ...presentAccountDetailsFields(details) };
}

export function presentWallet(wallet: Wallet) {
  return {
    id: wallet.id,
    object: 'wallet',
    owner: wallet.ownerId,
    currency: wallet.currency,
    status: wallet.status,
    status_reason: wallet.statusReason,
    status_changed_at: isoOrNull(wallet.statusChangedAt),
    balance: presentBalances(wallet),
    account_details: wallet.accountDetails && presentAccountDetailsFields(wallet.accountDetails),
    metadata: wallet.metadata,
    created_at: wallet.createdAt.toISOString(),
    updated_at: wallet.updatedAt.toISOString(),
  };
}

export function presentBalance(wallet: Wallet) {
  return { object: 'balance', wallet: wallet.id, currency: wallet.currency, ...presentBalances(wallet) };
}
