/**
 * Money in by bank transfer: each wallet may have a virtual account reference that payers quote (and, as a
 * digital account, an account number), and the bank's report of deposits (imported by an operator, in one
 * transaction) credits the wallet each names.
 * One deposit is credited once: the bank's own reference is unique per organization. A deposit that names
 * no wallet we can credit goes to the reconciliation exception queue, never silently anywhere.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvent } from '../../../app/events.ts';
import { AppError, type FieldError } from '../../../domain/errors.ts';
import { type Currency, checkSingleAmount, isCurrency, parseAmount } from '../../../domain/money.ts';
import type { Wallet } from '../../../domain/wallets.ts';
import type { Queryable } from '../../../store/store.ts';
import {
  BANK_DEPOSITS_PER_REPORT_MAX,
  type Collection,
  collectionEventData,
  findCollectionByBankReference,
  insertCollection,
  lockBankDepositReports,
  succeededCollection,
} from '../../collections/index.ts';
import {
  findVirtualAccountByReference,
  findWalletIdByAccountNumber,
  isValidAccountNumber,
  isValidVirtualAccountReference,
} from '../../digitalAccounts/index.ts';
import { creditFromRail } from '../../transfers/index.ts';
import { findWallet } from '../../wallets/index.ts';
import { openException } from './reconciliationExceptions.ts';

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { VirtualAccount } from '../../digitalAccounts/index.ts';

/** Characters of the bank's reference for a deposit, and of a payer's name, at most. */
export const BANK_REFERENCE_LENGTH_MAX = 100;
export const PAYER_NAME_LENGTH_MAX = 140;

/** Whether a payer's reference is a virtual reference or an account number, check digits agreeing. */
function isWellFormedReference(reference: string): boolean {
  return isValidVirtualAccountReference(reference) || isValidAccountNumber(reference);
}

/** A reference as payers type it, spaces and dashes dropped, upper-cased; a mistyped one is not guessed at. */
export function normalizePayerReference(reference: string): string {
  return reference.trim().toUpperCase().replace(/[\s-]/g, '');
}

/**
 * The wallet a deposit is for: the reference a payer quoted is the wallet's virtual reference (`MK…`) or its
 * account number (docs/PRODUCTS.md), told apart by their shapes; undefined when it names none. M-Pesa C2B
 * payments name their wallet the same way (the rail partners' credit callbacks).
 */
export async function walletIdOfReference(
  tx: Queryable,
  organizationId: string,
  reference: string,
): Promise<string | undefined> {
  if (isValidVirtualAccountReference(reference)) {
    return (await findVirtualAccountByReference(tx, organizationId, reference))?.walletId;
  }
  if (isValidAccountNumber(reference)) return findWalletIdByAccountNumber(tx, organizationId, reference);
  return undefined;
}

export interface BankDepositInput {
  bank_reference: string;
  reference: string;
  amount: string | number;
  currency: string;
  payer_name?: string;
}

export type BankDepositOutcome =
  | { row: number; bankReference: string; outcome: 'credited'; collection: Collection }
  | { row: number; bankReference: string; outcome: 'duplicate'; collection: Collection }
  | { row: number; bankReference: string; outcome: 'exception'; exceptionId: string; reason: string };

interface ParsedDeposit {
  row: number;
  bankReference: string;
  reference: string;
  amountMinor: bigint;
  currency: Currency;
  payerName: string | null;
}

/** A report holds 1 to BANK_DEPOSITS_PER_REPORT_MAX deposits. */
function refuseReportSize(raw: readonly BankDepositInput[]): void {
  if (raw.length === 0 || raw.length > BANK_DEPOSITS_PER_REPORT_MAX) {
    throw new AppError({
      status: 422,
      code: 'validation_error',
      title: 'Invalid report',
      detail: `A report holds 1 to ${BANK_DEPOSITS_PER_REPORT_MAX} deposits.`,
      param: 'deposits',
    });
  }
}

/** One deposit of the report (its 0-based index `i`) checked field by field; undefined after its first fault. */
function parseDeposit(d: BankDepositInput, i: number, faults: FieldError[]): ParsedDeposit | undefined {
  const row = i + 1;
  const fault = (field: string, code: string, message: string) =>
    faults.push({ row, param: `deposits.${i}.${field}`, code, message: `row ${row}: ${message}` });
  const bankReference = d.bank_reference.trim();
  if (bankReference === '' || bankReference.length > BANK_REFERENCE_LENGTH_MAX) {
    fault(
      'bank_reference',
      'invalid_value',
      `bank_reference must be 1 to ${BANK_REFERENCE_LENGTH_MAX} characters`,
    );
    return undefined;
  }
  // A mistyped reference is recorded as an exception for a person, like an unknown one.
  const reference = normalizePayerReference(d.reference);
  const currency = d.currency.trim().toUpperCase();
  if (!isCurrency(currency)) {
    fault('currency', 'invalid_value', 'currency must be a supported ISO 4217 code');
    return undefined;
  }
  let amountMinor: bigint;
  try {
    amountMinor = checkSingleAmount(
      parseAmount(d.amount, currency, `deposits.${i}.amount`),
      currency,
      `deposits.${i}.amount`,
    );
  } catch (error) {
    const first = (error as { errors?: FieldError[] }).errors?.[0];
    faults.push({
      row,
      param: first?.param ?? `deposits.${i}.amount`,
      code: first?.code ?? 'invalid_value',
      message: `row ${row}: ${first?.message ?? 'amount is invalid'}`,
    });
    return undefined;
  }
  const payerName = d.payer_name?.trim().slice(0, PAYER_NAME_LENGTH_MAX) || null;
  return { row, bankReference, reference, amountMinor, currency, payerName };
}

/** A fault for every deposit whose bank reference an earlier row of the report has already. */
function flagRepeatedBankReferences(parsed: readonly ParsedDeposit[], faults: FieldError[]): void {
  const seen = new Map<string, number>();
  for (const d of parsed) {
    const first = seen.get(d.bankReference);
    if (first !== undefined) {
      faults.push({
        row: d.row,
        param: `deposits.${d.row - 1}.bank_reference`,
        code: 'duplicate',
        message: `row ${d.row}: bank_reference repeats row ${first}`,
      });
    }
    seen.set(d.bankReference, d.row);
  }
}

/** The report's deposits, or a 422 listing every fault: one invalid deposit records nothing. */
function parseDeposits(raw: readonly BankDepositInput[]): ParsedDeposit[] {
  refuseReportSize(raw);
  const faults: FieldError[] = [];
  const parsed: ParsedDeposit[] = [];
  raw.forEach((d, i) => {
    const deposit = parseDeposit(d, i, faults);
    if (deposit) parsed.push(deposit);
  });
  flagRepeatedBankReferences(parsed, faults);
  if (faults.length > 0) {
    throw new AppError({
      status: 422,
      code: 'validation_error',
      title: 'Invalid report',
      detail: `${faults.length} deposit(s) are invalid; nothing was recorded. Each is listed in errors with its row and field.`,
      errors: faults,
    });
  }
  return parsed;
}

/** Why a deposit cannot be credited to the wallet its reference names, or undefined when it can. */
function uncreditableReason(d: ParsedDeposit, wallet: Wallet | '' | undefined): string | undefined {
  return !isWellFormedReference(d.reference)
    ? 'the reference is malformed or its check digits disagree'
    : !wallet
      ? 'no wallet has this reference'
      : wallet.currency !== d.currency
        ? `the wallet holds ${wallet.currency}, the deposit is ${d.currency}`
        : wallet.status === 'closed'
          ? 'the wallet is closed'
          : undefined;
}

/** A deposit no wallet can take, to the exception queue as an `unmatched_deposit`. */
async function openUnmatchedDeposit(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  d: ParsedDeposit,
  reason: string,
): Promise<BankDepositOutcome> {
  const exception = await openException(tx, deps, {
    organizationId,
    transferId: null,
    kind: 'unmatched_deposit',
    details: {
      bank_reference: d.bankReference,
      reference: d.reference,
      amount_minor: d.amountMinor.toString(),
      currency: d.currency,
      rail: 'bank',
      payer_name: d.payerName,
      reason,
    },
  });
  return {
    row: d.row,
    bankReference: d.bankReference,
    outcome: 'exception',
    exceptionId: exception.id,
    reason,
  };
}

/** Credits a deposit to its wallet: the inbound transfer, its succeeded `bank_deposit` collection, the event. */
async function creditDeposit(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  wallet: Wallet,
  d: ParsedDeposit,
  createdBy: string | null,
): Promise<BankDepositOutcome> {
  const now = deps.now();
  const id = deps.newId('collection');
  const credit = await creditFromRail(tx, deps, wallet, {
    amountMinor: d.amountMinor,
    rail: 'bank',
    network: null,
    railReference: d.bankReference,
    statusReason: 'bank_deposit',
    metadata: { collection: id },
    // Virtual accounts are references on the trust account: the trust bank received the money.
    receivedInto: 'trust',
  });
  const collection = succeededCollection(
    {
      id,
      organizationId,
      walletId: wallet.id,
      amountMinor: d.amountMinor,
      currency: wallet.currency,
      method: 'bank_deposit',
      rail: 'bank',
      bankReference: d.bankReference,
      payerName: d.payerName,
      reference: d.reference,
      description: 'Bank deposit',
      transferId: credit.id,
      metadata: {},
      createdBy,
    },
    now,
  );
  await insertCollection(tx, collection);
  await recordEvent(tx, deps, now, {
    organizationId,
    type: 'collection.succeeded',
    resourceId: id,
    data: collectionEventData(collection),
  });
  return { row: d.row, bankReference: d.bankReference, outcome: 'credited', collection };
}

/**
 * Records the bank's report of deposits, all in the caller's transaction: each credits the wallet its
 * reference names (a collection `bank_deposit`, succeeded, with its inbound transfer), or was recorded
 * before (`duplicate`), or opens an `unmatched_deposit` exception.
 */
export async function recordBankDeposits(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  raw: readonly BankDepositInput[],
  createdBy: string | null,
): Promise<BankDepositOutcome[]> {
  const deposits = parseDeposits(raw);
  await lockBankDepositReports(tx, organizationId);
  const outcomes: BankDepositOutcome[] = [];
  for (const d of deposits) {
    const before = await findCollectionByBankReference(tx, organizationId, d.bankReference);
    if (before) {
      outcomes.push({ row: d.row, bankReference: d.bankReference, outcome: 'duplicate', collection: before });
      continue;
    }
    const walletId = await walletIdOfReference(tx, organizationId, d.reference);
    const wallet = walletId && (await findWallet(tx, organizationId, walletId));
    const reason = uncreditableReason(d, wallet);
    if (reason !== undefined || !wallet) {
      outcomes.push(await openUnmatchedDeposit(tx, deps, organizationId, d, reason ?? 'no wallet'));
      continue;
    }
    outcomes.push(await creditDeposit(tx, deps, organizationId, wallet, d, createdBy));
  }
  return outcomes;
}
