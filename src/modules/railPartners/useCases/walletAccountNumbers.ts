/**
 * A wallet's bank account number from the organization's active bank partner, where it issues them
 * (Flutterwave: a static virtual account, NGN only, BVN required), given with the wallet's virtual account
 * reference by `POST /v1/wallets/{id}/virtual-account`. The partner is called before the write's
 * transaction, through its guard, with the wallet's reference as `tx_ref`: a retry finds the stored account
 * and calls nothing, and two racing calls get the same account (the partner answers a repeated `tx_ref` with
 * the first). The BVN goes to the partner only: never stored, logged or echoed.
 */
import type { Deps } from '../../../app/deps.ts';
import { AppError } from '../../../domain/errors.ts';
import type { Currency } from '../../../domain/money.ts';
import type { WalletAccountNumber, WalletAccountNumberRequest } from '../../../rails/partner.ts';
import type { Queryable } from '../../../store/store.ts';
import { ensureVirtualAccount, getVirtualAccount, type VirtualAccount } from '../../digitalAccounts/index.ts';
import { getWallet } from '../../wallets/index.ts';
import type { RailPartnerConfig } from '../domain.ts';
import { findActiveRailPartner } from '../repository/partners.ts';
import {
  findWalletPartnerAccount,
  insertWalletPartnerAccount,
  type WalletPartnerAccount,
} from '../repository/walletAccountNumbers.ts';
import type { RailPartnerDirectory } from './directory.ts';
import { partnerErrorMessage, partnerUnavailable } from './partnerUnavailable.ts';

export type { WalletPartnerAccount } from '../repository/walletAccountNumbers.ts';

/** The currencies partners issue wallets account numbers in (Flutterwave's static accounts are NGN). */
export const PARTNER_ACCOUNT_CURRENCIES: readonly Currency[] = ['NGN'];
/** A BVN: 11 digits. */
const BVN_PATTERN = /^\d{11}$/;
/** Characters of an email address at most (RFC 5321's path limit). */
export const ACCOUNT_EMAIL_LENGTH_MAX = 254;

export interface WalletAccountNumberInput {
  bvn?: string;
  email?: string;
}

/** What the write does once the partner was asked (or not): `plain` is the reference alone, as before. */
export type PreparedWalletAccount =
  | { kind: 'plain' }
  | { kind: 'stored'; account: WalletPartnerAccount }
  | { kind: 'issued'; config: RailPartnerConfig; reference: string; issued: WalletAccountNumber };

const invalid = (param: string, detail: string) =>
  new AppError({ status: 422, code: 'validation_error', title: 'Invalid request', detail, param });

/** The holder's details the partner needs; a 422 naming the field when one is missing or malformed. */
function holderOf(input: WalletAccountNumberInput | undefined): { bvn: string; email: string } {
  const bvn = input?.bvn?.trim();
  if (bvn === undefined || bvn === '') {
    throw invalid('bvn', 'The bank partner requires the account holder’s BVN to issue an account number.');
  }
  if (!BVN_PATTERN.test(bvn)) throw invalid('bvn', 'A BVN is 11 digits.');
  const email = input?.email?.trim();
  if (email === undefined || !/^[^\s@]+@[^\s@]+$/.test(email)) {
    throw invalid('email', 'The bank partner requires the account holder’s email address.');
  }
  return { bvn, email };
}

/** The partner's answer, or the problem saying why there is none (the message never carries the BVN). */
async function issue(
  directory: RailPartnerDirectory,
  config: RailPartnerConfig,
  request: WalletAccountNumberRequest,
): Promise<WalletAccountNumber> {
  const rail = directory.guarded(config);
  const issueAccount = rail.adapter.issueWalletAccountNumber?.bind(rail.adapter);
  if (!issueAccount) throw new Error(`${config.partner} issues no account numbers`);
  try {
    return await rail.call(() => issueAccount(request));
  } catch (error) {
    const message = partnerErrorMessage(error).replace(/\d{11}/g, '•••');
    const status = (error as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500 && status !== 429) {
      throw invalid('bvn', `${config.partner} refused to issue an account number: ${message}`);
    }
    throw partnerUnavailable(
      `${config.partner} issued no account number (nothing was recorded; ask again): ${message}`,
      error,
    );
  }
}

/** Before the write's transaction: asks the partner for the wallet's account number, where one issues it. */
export async function prepareWalletAccountNumber(
  deps: Deps,
  directory: RailPartnerDirectory,
  organizationId: string,
  walletId: string,
  input: WalletAccountNumberInput | undefined,
): Promise<PreparedWalletAccount> {
  const wallet = await getWallet(deps, organizationId, walletId);
  const config = await findActiveRailPartner(deps.store, organizationId, 'bank', null);
  const issues = config !== undefined && directory.adapterFor(config).issueWalletAccountNumber !== undefined;
  if (!config || !issues || !PARTNER_ACCOUNT_CURRENCIES.includes(wallet.currency)) return { kind: 'plain' };
  const stored = await findWalletPartnerAccount(deps.store, organizationId, walletId, config.partner);
  if (stored) return { kind: 'stored', account: stored };
  const holder = holderOf(input);
  // The reference is the partner's tx_ref: made (or found) first, so every retry asks with the same one.
  const { account } = await deps.store.transaction((tx) =>
    ensureVirtualAccount(tx, deps, organizationId, walletId),
  );
  const issued = await issue(directory, config, {
    walletId,
    walletReference: account.reference,
    currency: wallet.currency,
    ...holder,
  });
  return { kind: 'issued', config, reference: account.reference, issued };
}

/** In the write's transaction: the wallet's reference and the partner's account number, stored once. */
export async function recordWalletAccountNumber(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  walletId: string,
  prepared: PreparedWalletAccount,
): Promise<WalletAccounts & { created: boolean }> {
  const { account, created } = await ensureVirtualAccount(tx, deps, organizationId, walletId);
  if (prepared.kind === 'plain') return { account, created };
  if (prepared.kind === 'stored') return { account, partnerAccount: prepared.account, created: false };
  const { config, issued } = prepared;
  const partnerAccount: WalletPartnerAccount = {
    walletId,
    organizationId,
    partner: config.partner,
    configId: config.id,
    txRef: prepared.reference,
    accountNumber: issued.accountNumber,
    bankName: issued.bankName,
    orderRef: issued.orderRef,
    flwRef: issued.flwRef ?? null,
    createdAt: deps.now(),
  };
  if (await insertWalletPartnerAccount(tx, partnerAccount)) return { account, partnerAccount, created: true };
  // A racing request stored the wallet's account first: the partner gave it the same one.
  const first = await findWalletPartnerAccount(tx, organizationId, walletId, config.partner);
  return { account, partnerAccount: first ?? partnerAccount, created: false };
}

export interface WalletAccounts {
  account: VirtualAccount;
  partnerAccount?: WalletPartnerAccount;
}

/** The wallet's reference and, where a partner issued one, its account number: a 404 before the first POST. */
export async function getWalletAccounts(
  deps: Deps,
  organizationId: string,
  walletId: string,
): Promise<WalletAccounts> {
  const account = await getVirtualAccount(deps, organizationId, walletId);
  const partnerAccount = await findWalletPartnerAccount(deps.store, organizationId, walletId);
  return partnerAccount ? { account, partnerAccount } : { account };
}
