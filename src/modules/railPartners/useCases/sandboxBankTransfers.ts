/**
 * The sandbox's bank transfer from outside: a payer's transfer into a wallet's virtual account number,
 * sent through the bank partner's simulator (Flutterwave), whose `charge.completed` webhook and
 * verification then credit the wallet as production's do. Checks here; the transfer itself is the
 * simulator's (`Deps.sandboxPartnerFeeds`).
 */
import type { Deps } from '../../../app/deps.ts';
import { resourceMissing, sandboxSimulatorsOff, validationError } from '../../../domain/errors.ts';
import { checkSingleAmount, formatAmount, isCurrency, parseAmount } from '../../../domain/money.ts';
import { requireWallet } from '../../wallets/index.ts';
import {
  findWalletPartnerAccount,
  findWalletPartnerAccountByNumber,
  type WalletPartnerAccount,
} from '../repository/walletAccountNumbers.ts';

/** The longest sender name the simulator is given (Flutterwave's narration). */
export const SANDBOX_SENDER_NAME_LENGTH_MAX = 100;

export interface SandboxBankTransferInput {
  wallet?: string;
  account_number?: string;
  amount: string | number;
  currency: string;
  sender_name?: string;
}

export interface SandboxBankTransfer {
  partner: string;
  partnerReference: string;
  walletId: string;
  accountNumber: string;
  amount: string;
  currency: string;
  senderName: string | null;
}

/** The account the transfer is into: named by the wallet that holds it or by its number (both must agree). */
async function targetAccount(
  deps: Deps,
  organizationId: string,
  input: SandboxBankTransferInput,
): Promise<WalletPartnerAccount> {
  if (input.wallet === undefined && input.account_number === undefined) {
    throw validationError('wallet', 'wallet or account_number is required', 'required');
  }
  if (input.account_number !== undefined) {
    const account = await findWalletPartnerAccountByNumber(deps.store, organizationId, input.account_number);
    if (!account) throw resourceMissing('wallet account number', input.account_number, 'account_number');
    if (input.wallet !== undefined && input.wallet !== account.walletId) {
      throw validationError(
        'account_number',
        `account number ${input.account_number} is wallet ${account.walletId}'s, not ${input.wallet}'s`,
        'mismatch',
      );
    }
    return account;
  }
  const walletId = input.wallet as string;
  await requireWallet(deps.store, organizationId, walletId, 'wallet');
  const account = await findWalletPartnerAccount(deps.store, organizationId, walletId, 'flutterwave');
  if (!account) {
    throw validationError(
      'wallet',
      `wallet ${walletId} has no bank account number yet: POST /v1/wallets/${walletId}/virtual-account with a bvn first`,
      'no_account_number',
    );
  }
  return account;
}

/** Sends the transfer through the bank partner's simulator; the credit follows its webhook. */
export async function sendSandboxBankTransfer(
  deps: Deps,
  organizationId: string,
  input: SandboxBankTransferInput,
  amountText?: string,
): Promise<SandboxBankTransfer> {
  const feeds = deps.sandboxPartnerFeeds;
  if (!feeds) throw sandboxSimulatorsOff();
  const account = await targetAccount(deps, organizationId, input);
  const wallet = await requireWallet(deps.store, organizationId, account.walletId, 'wallet');
  if (!isCurrency(input.currency) || input.currency !== wallet.currency) {
    throw validationError(
      'currency',
      `the account is wallet ${wallet.id}'s, which holds ${wallet.currency}`,
      'currency_mismatch',
    );
  }
  const minor = checkSingleAmount(
    parseAmount(input.amount, wallet.currency, 'amount', amountText),
    wallet.currency,
  );
  const amount = formatAmount(minor, wallet.currency);
  const senderName = input.sender_name ?? null;
  const { reference } = await feeds.bankTransfer({
    accountNumber: account.accountNumber,
    amount,
    senderName: senderName ?? undefined,
  });
  return {
    partner: account.partner,
    partnerReference: reference,
    walletId: wallet.id,
    accountNumber: account.accountNumber,
    amount,
    currency: wallet.currency,
    senderName,
  };
}
