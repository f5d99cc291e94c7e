/**
 * Digital accounts: the sponsor bank an organization issues account numbers under (an admin's setting), the
 * account details a wallet is given (on creation once the setting exists, or on request for a wallet made
 * before), the virtual account reference payers quote in a bank transfer, statements of a period and balances as of an instant, read from the ledger's entries.
 */

import type { Deps, WalletCreatedHook } from '../../app/deps.ts';
import { appendEvidence } from '../../app/evidence.ts';
import { AppError, resourceMissing } from '../../domain/errors.ts';
import type { EvidenceActor } from '../../domain/evidence.ts';
import type { Transfer } from '../../domain/transferRecord.ts';
import { maskedDestination, maskedPhone } from '../../domain/transferRecord.ts';
import { type Wallet, type WalletAccountDetails, walletNotActive } from '../../domain/wallets.ts';
import type { Queryable } from '../../store/store.ts';
import { requireWallet } from '../wallets/index.ts';
import {
  ACCOUNT_NUMBER_RANDOM_BYTES,
  accountNumberFromRandom,
  buildStatement,
  type DigitalAccountSettings,
  describeMovement,
  parseDigitalAccountSettings,
  STATEMENT_ENTRIES_MAX,
  type Statement,
  type StatementMovement,
  statementPeriod,
  statementTooLarge,
  VIRTUAL_ACCOUNT_DIGITS,
  virtualAccountReference,
} from './domain.ts';
import {
  findDigitalAccountSettings,
  findVirtualAccountOfWallet,
  findWalletAccountDetails,
  insertVirtualAccount,
  insertWalletAccountDetails,
  listStatementMovements,
  type MovementRow,
  readOneSnapshot,
  readStatementFrame,
  saveDigitalAccountSettings,
  type VirtualAccount,
} from './repository.ts';

/** Tries at drawing an account number nobody holds (about 8 × 10^10 numbers: a clash is rare). */
const ACCOUNT_NUMBER_DRAWS_MAX = 5;

export async function getDigitalAccountSettings(
  deps: Deps,
  organizationId: string,
): Promise<DigitalAccountSettings | undefined> {
  return findDigitalAccountSettings(deps.store, organizationId);
}

/**
 * Sets the bank account numbers are issued under from now on; details already issued keep theirs. Recorded
 * as evidence (`digital_accounts.settings.update`, before and after).
 */
export async function putDigitalAccountSettings(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: { bank_code: string; bank_name: string },
  actor: EvidenceActor,
): Promise<DigitalAccountSettings> {
  const parsed = parseDigitalAccountSettings(input);
  const before = await findDigitalAccountSettings(tx, organizationId, { forUpdate: true });
  const settings: DigitalAccountSettings = { organizationId, ...parsed, updatedAt: deps.now() };
  await saveDigitalAccountSettings(tx, settings);
  const wire = (s: { bankCode: string; bankName: string }) => ({
    bank_code: s.bankCode,
    bank_name: s.bankName,
  });
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'digital_accounts.settings.update',
      actor,
      data: { before: before ? wire(before) : null, after: wire(settings) },
    },
  ]);
  return settings;
}

function notConfigured(): AppError {
  return new AppError({
    status: 422,
    code: 'digital_accounts_not_configured',
    title: 'Digital accounts not configured',
    detail:
      'The organization has no bank to issue account numbers under: an admin sets it with PUT /v1/digital-accounts/settings.',
  });
}

/**
 * Issues the wallet its account details under the given settings, in the caller's transaction: a fresh
 * account number (drawn until free in the organization and under the bank code) and the virtual reference
 * (made unless the wallet has one). Answers the details the wallet already has, if any (`created` false).
 */
async function issueAccountDetails(
  tx: Queryable,
  deps: Deps,
  wallet: Pick<Wallet, 'id' | 'organizationId'>,
  settings: DigitalAccountSettings,
): Promise<{ details: WalletAccountDetails; created: boolean }> {
  const existing = await findWalletAccountDetails(tx, wallet.organizationId, wallet.id);
  if (existing) return { details: existing, created: false };
  const { account } = await ensureVirtualAccount(tx, deps, wallet.organizationId, wallet.id);
  for (let draw = 0; draw < ACCOUNT_NUMBER_DRAWS_MAX; draw++) {
    const details: WalletAccountDetails = {
      walletId: wallet.id,
      organizationId: wallet.organizationId,
      accountNumber: accountNumberFromRandom(deps.randomBytes(ACCOUNT_NUMBER_RANDOM_BYTES)),
      bankCode: settings.bankCode,
      bankName: settings.bankName,
      virtualReference: account.reference,
      createdAt: deps.now(),
    };
    if (await insertWalletAccountDetails(tx, details)) return { details, created: true };
    // Another request gave this wallet its details meanwhile: those are the wallet's.
    const raced = await findWalletAccountDetails(tx, wallet.organizationId, wallet.id);
    if (raced) return { details: raced, created: false };
  }
  throw new Error('could not draw a free account number');
}

/** A new wallet's details, when the organization issues them (its settings exist); null otherwise. */
export async function accountDetailsForNewWallet(
  tx: Queryable,
  deps: Deps,
  wallet: Pick<Wallet, 'id' | 'organizationId'>,
): Promise<WalletAccountDetails | null> {
  const settings = await findDigitalAccountSettings(tx, wallet.organizationId);
  if (!settings) return null;
  return (await issueAccountDetails(tx, deps, wallet, settings)).details;
}

/** A wallet-created hook: once the organization issues account numbers, a new wallet has its details. */
export const digitalAccountsOnWalletCreated: WalletCreatedHook = async (tx, deps, wallet) => ({
  ...wallet,
  accountDetails: await accountDetailsForNewWallet(tx, deps, wallet),
});

/**
 * The wallet's account details, issued now if it has none (a wallet made before the settings existed). A
 * closed wallet is given none (409 `wallet_not_active`): money sent to it could only bounce.
 */
export async function ensureAccountDetails(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  walletId: string,
): Promise<{ details: WalletAccountDetails; created: boolean }> {
  const wallet = await requireWallet(tx, organizationId, walletId);
  if (wallet.accountDetails) return { details: wallet.accountDetails, created: false };
  if (wallet.status === 'closed')
    throw walletNotActive(`Wallet ${walletId} is closed; a closed wallet is given no account details.`);
  const settings = await findDigitalAccountSettings(tx, organizationId);
  if (!settings) throw notConfigured();
  return issueAccountDetails(tx, deps, wallet, settings);
}

function movementOf(row: MovementRow): StatementMovement {
  const t = row.transfer;
  const payer = row.payerName ?? (row.payerPhone === null ? null : maskedPhone(row.payerPhone));
  const { description, counterparty } = describeMovement({
    entryKind: row.kind,
    netMinor: row.netMinor,
    transfer: t && {
      id: t.id,
      direction: t.direction,
      sourceWalletId: t.sourceWalletId,
      destinationWalletId: t.destinationWalletId,
      rail: t.rail,
      statusReason: t.statusReason,
      maskedDestination: maskedDestination(t.destination as unknown as Transfer['destination']),
    },
    payer,
    otherAccountKinds: row.otherAccountKinds,
  });
  return {
    entryId: row.entryId,
    kind: row.kind,
    createdAt: row.createdAt,
    netMinor: row.netMinor,
    feeMinor: row.feeMinor,
    transferId: t?.id ?? null,
    rail: t?.rail ?? null,
    railReference: t?.railReference ?? null,
    counterparty,
    description,
  };
}

/**
 * The wallet's statement of a period: opening and closing posted balance and every entry that moved it, in
 * order, with the running balance. Read in one snapshot, so a transfer committing meanwhile is in all of it
 * or none of it.
 */
export async function getWalletStatement(
  deps: Deps,
  organizationId: string,
  walletId: string,
  fromText: string,
  toText: string,
): Promise<Statement> {
  const generatedAt = deps.now();
  const period = statementPeriod(fromText, toText, generatedAt);
  return deps.store.transaction(async (tx) => {
    await readOneSnapshot(tx);
    const wallet = await requireWallet(tx, organizationId, walletId);
    const frame = await readStatementFrame(tx, walletId, period.from, period.to);
    if (!frame) throw new Error(`wallet ${walletId} has no ledger account`);
    // One row more than a statement lists tells that the period holds too many.
    const rows = await listStatementMovements(
      tx,
      walletId,
      period.from,
      period.to,
      STATEMENT_ENTRIES_MAX + 1,
    );
    if (rows.length > STATEMENT_ENTRIES_MAX) throw statementTooLarge(period);
    return buildStatement(
      {
        walletId,
        currency: wallet.currency,
        period,
        openingMinor: frame.openingMinor,
        closingMinor: frame.closingMinor,
        accountDetails: wallet.accountDetails,
        generatedAt,
      },
      rows.map(movementOf),
    );
  });
}

/** Tries at drawing a reference no other wallet holds (10 random digits: a clash is rare). */
export const VIRTUAL_ACCOUNT_DRAWS_MAX = 5;

export function randomDigits(deps: Deps, count: number): string {
  return Array.from(deps.randomBytes(count), (byte) => String(byte % 10)).join('');
}

/** The wallet's virtual account reference, made the first time it is asked for. */
export async function ensureVirtualAccount(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  walletId: string,
): Promise<{ account: VirtualAccount; created: boolean }> {
  await requireWallet(tx, organizationId, walletId); // 404 unless the wallet is the organization's
  const existing = await findVirtualAccountOfWallet(tx, organizationId, walletId);
  if (existing) return { account: existing, created: false };
  for (let draw = 0; draw < VIRTUAL_ACCOUNT_DRAWS_MAX; draw++) {
    const account: VirtualAccount = {
      walletId,
      organizationId,
      reference: virtualAccountReference(randomDigits(deps, VIRTUAL_ACCOUNT_DIGITS)),
      createdAt: deps.now(),
    };
    if (await insertVirtualAccount(tx, account)) return { account, created: true };
    // Another request made this wallet its reference meanwhile (the insert waited for it): that one is the
    // wallet's, whatever digits were drawn here.
    const raced = await findVirtualAccountOfWallet(tx, organizationId, walletId);
    if (raced) return { account: raced, created: false };
  }
  throw new Error('could not draw a free virtual account reference');
}

export async function getVirtualAccount(
  deps: Deps,
  organizationId: string,
  walletId: string,
): Promise<VirtualAccount> {
  const account = await findVirtualAccountOfWallet(deps.store, organizationId, walletId);
  if (!account) throw resourceMissing('virtual account of wallet', walletId);
  return account;
}
