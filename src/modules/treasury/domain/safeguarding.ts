/**
 * Safeguarding, pure: customer money is held in trust accounts at partner banks (USDC and USDT at a
 * custodian), and every day the sum of the organization's customer wallet balances (the ledger's liability)
 * is compared with what the banks say their trust accounts held at the end of that day. Days are UTC
 * calendar days, `YYYY-MM-DD`. The ledger's own trust account and its sweeps are in trustLedger.ts.
 */
import { addDays, dayOf } from '../../../domain/days.ts';
import { isDigitalAsset } from '../../../domain/digitalAssets.ts';
import { validationError } from '../../../domain/errors.ts';
import type { Currency } from '../../../domain/money.ts';

/** How far the trust balance may lie from customer money and still be `ok`, in minor units (0: exact). */
export const SAFEGUARDING_TOLERANCE_MINOR = 0n;
/**
 * How long after a day ends it is checked. A ledger entry's `created_at` is read when its transaction
 * begins, so one begun just before midnight may commit just after; the margin lets every entry of the day
 * commit first (transactions last seconds: PG_STATEMENT_TIMEOUT_MS is 15 s) and covers clocks that differ
 * between processes. A report is therefore written at the earliest an hour into the next day.
 */
export const SAFEGUARDING_DAY_CLOSE_GRACE_MS = 3_600_000;
/**
 * Closed days the daily check looks back over: a worker that was stopped catches up on this many days;
 * older days without a report are never checked automatically.
 */
export const SAFEGUARDING_LOOKBACK_DAYS = 7;
/** Characters of a trust account's bank name or account reference at most. */
export const TRUST_ACCOUNT_FIELD_LENGTH_MAX = 100;
/** Characters of a note on a corrected balance at most. */
export const SAFEGUARDING_NOTE_LENGTH_MAX = 1_000;

export const TRUST_ACCOUNT_STATUSES = ['active', 'closed'] as const;
export type TrustAccountStatus = (typeof TRUST_ACCOUNT_STATUSES)[number];

/** `ok`: the trust accounts hold customer money exactly; `shortfall`: less; `excess`: more. */
export const SAFEGUARDING_REPORT_STATUSES = ['ok', 'shortfall', 'excess', 'missing_balance'] as const;
export type SafeguardingReportStatus = (typeof SAFEGUARDING_REPORT_STATUSES)[number];

export const SAFEGUARDING_BALANCE_STATUSES = ['current', 'superseded'] as const;
export type SafeguardingBalanceStatus = (typeof SAFEGUARDING_BALANCE_STATUSES)[number];

/**
 * Where a trust account is held: `bank_account`, a safeguarding account at a partner bank (fiat);
 * `custody_wallet`, a segregated wallet at a custodian (USDC and USDT, which live on chain).
 */
export const TRUST_ACCOUNT_TYPES = ['bank_account', 'custody_wallet'] as const;
export type TrustAccountType = (typeof TRUST_ACCOUNT_TYPES)[number];

/** The one type that can hold a currency: a custodian's wallet for a stablecoin, a bank account otherwise. */
export function trustAccountTypeFor(currency: Currency): TrustAccountType {
  return isDigitalAsset(currency) ? 'custody_wallet' : 'bank_account';
}

/** The type asked for, checked against the currency; the currency's type when none is asked for. */
export function checkTrustAccountType(
  type: TrustAccountType | undefined,
  currency: Currency,
): TrustAccountType {
  const fitting = trustAccountTypeFor(currency);
  if (type !== undefined && type !== fitting) {
    throw validationError(
      'type',
      fitting === 'custody_wallet'
        ? `${currency} is held on chain: its trust account is a custody_wallet at a custodian`
        : `${currency} is held at a bank: its trust account is a bank_account (custody_wallet is for USDC and USDT)`,
      'invalid_value',
    );
  }
  return fitting;
}

/** An account holding an organization's customer money in one currency: at a bank, or at a custodian. */
export interface TrustAccount {
  id: string;
  organizationId: string;
  currency: Currency;
  type: TrustAccountType;
  /** The bank holding it (for a custody wallet, the custodian). */
  bank: string;
  accountReference: string;
  status: TrustAccountStatus;
  /** The first day its closing balance counts. */
  activeFrom: string;
  /** The day it was closed: from then on its balance no longer counts. */
  closedOn: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The closing balance a bank statement reports for a trust account and day. */
export interface SafeguardingBalance {
  id: string;
  organizationId: string;
  trustAccountId: string;
  currency: Currency;
  date: string;
  closingBalanceMinor: bigint;
  /** `superseded` once a correction replaced it; a day has one `current` figure per account. */
  status: SafeguardingBalanceStatus;
  /** The figure this one corrects. */
  replacesId: string | null;
  note: string | null;
  createdBy: string;
  createdAt: Date;
  /** Read from the custodian rather than entered from a statement: which partner, which query, when. */
  source: CustodianReading | null;
}

/** A closing balance the custodian reported: its partner configuration, the balance query, when it was read. */
export interface CustodianReading {
  configId: string;
  queryId: string;
  readAt: Date;
}

/** One trust account's part in a report: the figure counted, or none reported. */
export interface ReportedTrustBalance {
  trustAccountId: string;
  balanceId: string | null;
  closingBalanceMinor: bigint | null;
}

export interface SafeguardingDecision {
  status: SafeguardingReportStatus;
  /** The trust accounts' closing balances summed; null while one is missing. */
  trustBalanceMinor: bigint | null;
  /** Trust balance minus customer money (negative: a shortfall); null while a balance is missing. */
  differenceMinor: bigint | null;
}

/** The latest day whose ledger is final at `now`: a day ends, then SAFEGUARDING_DAY_CLOSE_GRACE_MS passes. */
export function lastClosedDay(now: Date): string {
  return addDays(dayOf(new Date(now.getTime() - SAFEGUARDING_DAY_CLOSE_GRACE_MS)), -1);
}

/** The days the check looks at `now`: the last SAFEGUARDING_LOOKBACK_DAYS closed days, oldest first. */
export function daysToCheck(now: Date): string[] {
  const last = lastClosedDay(now);
  return Array.from({ length: SAFEGUARDING_LOOKBACK_DAYS }, (_, i) =>
    addDays(last, i - SAFEGUARDING_LOOKBACK_DAYS + 1),
  );
}

/** Whether a trust account's closing balance counts on a day: from `activeFrom` until the day it closed. */
export function countsOn(account: Pick<TrustAccount, 'activeFrom' | 'closedOn'>, day: string): boolean {
  return account.activeFrom <= day && (account.closedOn === null || day < account.closedOn);
}

/**
 * The day's verdict. Every trust account that counts that day must have reported; with none counting, the
 * trust accounts hold nothing, so customer money in a currency without a trust account is a shortfall.
 */
export function decideSafeguarding(
  customerMoneyMinor: bigint,
  balances: readonly ReportedTrustBalance[],
): SafeguardingDecision {
  if (balances.some((b) => b.closingBalanceMinor === null)) {
    return { status: 'missing_balance', trustBalanceMinor: null, differenceMinor: null };
  }
  const trustBalanceMinor = balances.reduce((sum, b) => sum + (b.closingBalanceMinor ?? 0n), 0n);
  const differenceMinor = trustBalanceMinor - customerMoneyMinor;
  const status =
    differenceMinor < -SAFEGUARDING_TOLERANCE_MINOR
      ? 'shortfall'
      : differenceMinor > SAFEGUARDING_TOLERANCE_MINOR
        ? 'excess'
        : 'ok';
  return { status, trustBalanceMinor, differenceMinor };
}
