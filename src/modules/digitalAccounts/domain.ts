/**
 * Digital accounts, pure: the account details a wallet carries so that outsiders can pay into it (an account
 * number with a check digit, the bank code of the organization's sponsor bank, the virtual reference bank
 * collections use), the period of a statement and its boundary rule, and a statement's lines with their
 * running balance. No I/O, no clock: `now` and random bytes are arguments.
 */
import { Mod11_2 } from '@konfirm/iso7064';
import { DAY_MS, dayOf, parseInstant } from '../../domain/days.ts';
import { AppError, validationError } from '../../domain/errors.ts';
import type { Currency } from '../../domain/money.ts';
import type { WalletAccountDetails } from '../../domain/wallets.ts';

/** Digits of an account number: ACCOUNT_NUMBER_BODY_DIGITS drawn at random, then one check digit. */
export const ACCOUNT_NUMBER_DIGITS = 12;
export const ACCOUNT_NUMBER_BODY_DIGITS = ACCOUNT_NUMBER_DIGITS - 1;
/**
 * No leading zero: spreadsheets and some banking forms drop it, which would turn a valid number into another
 * (invalid, so caught, but refused) one.
 */
export const ACCOUNT_NUMBER_PATTERN = /^[1-9][0-9]{11}$/;
/** Random bytes one drawn account number body needs: one per digit. */
export const ACCOUNT_NUMBER_RANDOM_BYTES = ACCOUNT_NUMBER_BODY_DIGITS;

/**
 * The check character of an account number's body: ISO/IEC 7064 MOD 11-2 (the pure system over 11, as ISNI
 * and ORCID use), which catches every single wrong digit and every swap of two adjacent digits (a hybrid
 * system such as MOD 11,10, like Luhn, misses about 2 % of swaps). Its check character is a digit or `X`
 * (ten); numbers whose check would be `X` are never issued, so an account number is digits only. Computed by
 * @konfirm/iso7064.
 */
export function accountNumberCheckCharacter(body: string): string {
  return Mod11_2.checksum(body);
}

/**
 * An account number from random bytes: the first digit 1-9, the others 0-9, then the check digit. Of the ten
 * values of the last body digit exactly one or none gives the check `X`; that one is moved to the next.
 */
export function accountNumberFromRandom(random: Uint8Array): string {
  if (random.length < ACCOUNT_NUMBER_RANDOM_BYTES) throw new Error('not enough random bytes');
  // A byte mod 10 (or 9) leans a little towards the low digits; numbers need to be unguessable by typo, not
  // uniform, and the space (about 8 × 10^10) stays far larger than any organization's wallets.
  const digits = Array.from(random.subarray(0, ACCOUNT_NUMBER_RANDOM_BYTES), (byte, i) =>
    i === 0 ? 1 + (byte % 9) : byte % 10,
  );
  let body = digits.join('');
  if (accountNumberCheckCharacter(body) === 'X') {
    const last = digits.length - 1;
    digits[last] = ((digits[last] as number) + 1) % 10;
    body = digits.join('');
  }
  return `${body}${accountNumberCheckCharacter(body)}`;
}

/** An account number as a payer may write it (spaces, dashes), in its canonical form: digits only. */
export function normaliseAccountNumber(raw: string): string {
  return raw.trim().replace(/[\s-]/g, '');
}

/** Whether a (normalised) account number is well formed and its check digit agrees. */
export function isValidAccountNumber(value: string): boolean {
  return ACCOUNT_NUMBER_PATTERN.test(value) && Mod11_2.validate(value);
}

/** A bank code as banks publish them: a national bank (and branch) code or a BIC, 2-11 letters or digits. */
export const BANK_CODE_PATTERN = /^[A-Z0-9]{2,11}$/;
export const BANK_NAME_LENGTH_MAX = 140;

/** The organization's digital-account settings: the sponsor bank its account numbers are issued under. */
export interface DigitalAccountSettings {
  organizationId: string;
  /** As a payer's bank needs it beside the account number (the same field as a `bank_account` destination). */
  bankCode: string;
  bankName: string;
  updatedAt: Date;
}

/** Checks and normalises settings as given on the wire (the bank code upper-cased). */
export function parseDigitalAccountSettings(input: { bank_code: string; bank_name: string }): {
  bankCode: string;
  bankName: string;
} {
  const bankCode = input.bank_code.trim().toUpperCase();
  if (!BANK_CODE_PATTERN.test(bankCode)) {
    throw validationError('bank_code', 'bank_code must be 2-11 letters or digits', 'invalid_format');
  }
  const bankName = input.bank_name.trim();
  if (bankName.length === 0 || bankName.length > BANK_NAME_LENGTH_MAX) {
    throw validationError(
      'bank_name',
      `bank_name must be 1 to ${BANK_NAME_LENGTH_MAX} characters`,
      'invalid_value',
    );
  }
  return { bankCode, bankName };
}

// ---------------------------------------------------------------------------------------------------------
// Statements and balances as of an instant

/** The longest period one statement covers, in days; a longer one is a 400 naming `to`. */
export const STATEMENT_PERIOD_DAYS_MAX = 366;
/** Entries one statement lists at most; a period holding more is a 422 `statement_too_large`. */
export const STATEMENT_ENTRIES_MAX = 10_000;

/**
 * A statement's period: entries created at or after `from` and strictly before `to` (half-open, so
 * consecutive periods neither share nor miss an entry). `from` as a date is that day's start, `to` as a date
 * that day's end, so `from=2026-11-01&to=2026-11-30` is the whole of November (UTC). A period that has not
 * ended yet ends at `now`: the statement so far.
 */
export interface StatementPeriod {
  from: Date;
  /** The end read: the requested end, or `now` when that is earlier. */
  to: Date;
  /** Whether the requested end was later than `now` (the period is still running). */
  running: boolean;
}

export function statementPeriod(fromText: string, toText: string, now: Date): StatementPeriod {
  const from = parseInstant(fromText, 'from', 'start');
  const to = parseInstant(toText, 'to', 'end');
  if (to.getTime() <= from.getTime()) {
    throw validationError('to', 'to must be later than from', 'out_of_range');
  }
  if (to.getTime() - from.getTime() > STATEMENT_PERIOD_DAYS_MAX * DAY_MS) {
    throw validationError(
      'to',
      `a statement covers at most ${STATEMENT_PERIOD_DAYS_MAX} days; ask for shorter periods`,
      'out_of_range',
    );
  }
  if (from.getTime() > now.getTime()) {
    throw validationError('from', `from must not be later than now (${now.toISOString()})`, 'out_of_range');
  }
  const running = to.getTime() > now.getTime();
  return { from, to: running ? now : to, running };
}

export function statementTooLarge(period: StatementPeriod): AppError {
  return new AppError({
    status: 422,
    code: 'statement_too_large',
    title: 'Statement too large',
    detail: `The wallet has more than ${STATEMENT_ENTRIES_MAX} entries between ${period.from.toISOString()} and ${period.to.toISOString()}; ask for shorter periods (the days ${dayOf(period.from)} to ${dayOf(period.to)} split in parts).`,
    param: 'to',
  });
}

/** An entry that moved the wallet's posted balance: the wallet's net in it, and what it concerned. */
export interface StatementMovement {
  entryId: string;
  kind: string;
  createdAt: Date;
  /** Credits minus debits to the wallet's account in this entry (posted lines only). */
  netMinor: bigint;
  /**
   * The part of the amount that is the transfer's fee, for the wallet that paid it: the fee rides in the
   * transfer's own entries, charged with the amount and given back with it on a return; 0 otherwise.
   */
  feeMinor: bigint;
  transferId: string | null;
  rail: string | null;
  railReference: string | null;
  counterparty: string | null;
  description: string;
}

export interface StatementLine extends StatementMovement {
  /** The posted balance after this entry. */
  balanceMinor: bigint;
}

export interface Statement {
  walletId: string;
  currency: Currency;
  period: StatementPeriod;
  openingMinor: bigint;
  closingMinor: bigint;
  creditsMinor: bigint;
  debitsMinor: bigint;
  lines: StatementLine[];
  accountDetails: WalletAccountDetails | null;
  generatedAt: Date;
}

/**
 * The statement from its opening balance and its movements in order: each line's running balance, the
 * totals, and the closing balance, which must equal what the ledger says it is (read independently in the
 * same snapshot). A disagreement is a bug, never shown as a statement: it throws.
 */
export function buildStatement(
  input: Omit<Statement, 'lines' | 'creditsMinor' | 'debitsMinor'>,
  movements: readonly StatementMovement[],
): Statement {
  let balance = input.openingMinor;
  let creditsMinor = 0n;
  let debitsMinor = 0n;
  const lines = movements.map((m) => {
    balance += m.netMinor;
    if (m.netMinor >= 0n) creditsMinor += m.netMinor;
    else debitsMinor -= m.netMinor;
    return { ...m, balanceMinor: balance };
  });
  if (balance !== input.closingMinor) {
    throw new Error(
      `statement of ${input.walletId}: opening ${input.openingMinor} + entries = ${balance}, closing ${input.closingMinor}`,
    );
  }
  return { ...input, lines, creditsMinor, debitsMinor };
}

/** What a statement line's description and counterparty are made from. */
export interface MovementFacts {
  entryKind: string;
  /** The wallet's net in the entry: a credit when positive. */
  netMinor: bigint;
  transfer: {
    id: string;
    direction: 'outbound' | 'inbound';
    sourceWalletId: string | null;
    destinationWalletId: string | null;
    rail: string;
    statusReason: string | null;
    /** The payee as a receipt shows it (masked), for a transfer out of the organization. */
    maskedDestination: string;
  } | null;
  /** Who paid, as the collection that brought the money recorded it (the payer's name or masked phone). */
  payer: string | null;
  /** Kinds of the other accounts the entry moved (a conversion, an adjustment). */
  otherAccountKinds: readonly string[];
}

const INBOUND_DESCRIPTIONS: Record<string, string> = {
  bank_deposit: 'Bank deposit',
  collection: 'Mobile money collection',
  sandbox_collection: 'Sandbox funding',
  deposit: 'Digital-asset deposit',
};

/** A line's description and counterparty, as a statement shows them. */
export function describeMovement(facts: MovementFacts): { description: string; counterparty: string | null } {
  const t = facts.transfer;
  const credit = facts.netMinor >= 0n;
  if (!t) {
    if (facts.otherAccountKinds.includes('conversion'))
      return { description: 'Conversion', counterparty: null };
    if (facts.otherAccountKinds.includes('reconciliation_adjustment')) {
      return { description: 'Adjustment', counterparty: null };
    }
    return { description: credit ? 'Credit' : 'Debit', counterparty: null };
  }
  if (facts.entryKind === 'reversal') {
    return {
      description: `Return of ${t.id}`,
      // The money goes back the way it came: to the payer from whoever had received it.
      counterparty: credit ? (t.destinationWalletId ?? t.maskedDestination) : t.sourceWalletId,
    };
  }
  if (t.direction === 'inbound') {
    return {
      description: INBOUND_DESCRIPTIONS[t.statusReason ?? ''] ?? `Received by ${t.rail}`,
      counterparty: facts.payer,
    };
  }
  const between = t.destinationWalletId !== null;
  if (credit) {
    return { description: 'Transfer received', counterparty: t.sourceWalletId };
  }
  return between
    ? { description: 'Transfer sent', counterparty: t.destinationWalletId }
    : { description: `Payout by ${t.rail}`, counterparty: t.maskedDestination };
}

/** Characters of a virtual account reference: 'MK', 10 digits, 2 check digits (ISO 7064 mod 97-10). */
export const VIRTUAL_ACCOUNT_REFERENCE_PATTERN = /^MK[0-9]{12}$/;

/** Random digits in a virtual account reference. */
export const VIRTUAL_ACCOUNT_DIGITS = 10;

/** ISO 7064 mod 97-10 check digits for a string of digits (as IBAN uses): two digits, 02 to 98. */
export function mod97CheckDigits(digits: string): string {
  let remainder = 0;
  for (const digit of `${digits}00`) remainder = (remainder * 10 + Number(digit)) % 97;
  return String(98 - remainder).padStart(2, '0');
}

/** A virtual account reference from its random digits: 'MK', the digits, their check digits. */
export function virtualAccountReference(digits: string): string {
  return `MK${digits}${mod97CheckDigits(digits)}`;
}

/** Whether a reference is well formed and its check digits agree (a mistyped one is caught, not misrouted). */
export function isValidVirtualAccountReference(reference: string): boolean {
  if (!VIRTUAL_ACCOUNT_REFERENCE_PATTERN.test(reference)) return false;
  const digits = reference.slice(2, 2 + VIRTUAL_ACCOUNT_DIGITS);
  return mod97CheckDigits(digits) === reference.slice(2 + VIRTUAL_ACCOUNT_DIGITS);
}
