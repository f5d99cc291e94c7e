/**
 * Safeguarding: an organization's trust accounts (admins configure them), the closing balances their bank
 * statements report (operators enter them), and the daily check that compares customer money, read from the
 * ledger as of the end of the day, with those balances. A shortfall opens a reconciliation exception and
 * emits `safeguarding.shortfall`; each verdict, balance and configuration change is evidence. The same check
 * compares the banks' figure with the ledger's trust account as of the end of the day (trustLedger.ts): a
 * difference opens a `trust_balance_mismatch` exception.
 *
 * Lock order, on every path: the currency's trust accounts (id order), then the day's report, then the
 * evidence chain. So a balance reported while the check runs is either seen by it or re-evaluates its report.
 */

import { dayOf, endOfDay, parseDay } from '../domain/days.ts';
import { AppError, resourceMissing, validationError } from '../domain/errors.ts';
import type { EventRecord } from '../domain/events.ts';
import type { EvidenceActor } from '../domain/evidence.ts';
import { type Currency, formatAmount, parseAmount, SUPPORTED_CURRENCIES } from '../domain/money.ts';
import { type Page, type PageRequest, toPage } from '../domain/pagination.ts';
import {
  checkTrustAccountType,
  countsOn,
  daysToCheck,
  decideSafeguarding,
  type ReportedTrustBalance,
  type SafeguardingBalance,
  type TrustAccount,
  type TrustAccountType,
} from '../domain/safeguarding.ts';
import { decideTrustLedger } from '../domain/trustLedger.ts';
import {
  type BalanceFilter,
  closeTrustAccount,
  currentBalances,
  customerMoneyAsOf,
  findReport,
  findTrustAccount,
  insertBalance,
  insertReport,
  insertTrustAccount,
  ledgerTrustBalanceAsOf,
  listBalances,
  listReports,
  listTrustAccounts,
  lockReportOfDay,
  lockTrustAccounts,
  organizationsWithTrustAccounts,
  type ReportFilter,
  reportedDays,
  type SafeguardingReport,
  saveReport,
  supersedeBalance,
  type TrustAccountFilter,
  trustAccountsOf,
  walletCurrenciesSince,
} from '../store/repositories/safeguarding.ts';
import type { Queryable } from '../store/store.ts';
import type { Deps } from './deps.ts';
import { newEvent, recordEvents } from './events.ts';
import { appendEvidence, SYSTEM_ACTOR } from './evidence.ts';
import { openException } from './reconciliationExceptions.ts';

export type { SafeguardingReport };

/** Organizations the daily check reads per query while it walks them. */
export const SAFEGUARDING_ORGANIZATIONS_PER_PAGE = 100;

// ---------------------------------------------------------------------------------------------------------
// Trust accounts

export interface CreateTrustAccountInput {
  currency: Currency;
  type?: TrustAccountType | undefined;
  bank: string;
  account_reference: string;
  active_from?: string | undefined;
}

async function recordAccountChange(
  tx: Queryable,
  deps: Deps,
  account: TrustAccount,
  action: 'create' | 'close',
  actor: EvidenceActor,
): Promise<void> {
  await appendEvidence(tx, deps, [
    {
      organizationId: account.organizationId,
      kind: 'trust_account.update',
      actor,
      data: {
        action,
        trust_account_id: account.id,
        currency: account.currency,
        type: account.type,
        bank: account.bank,
        account_reference: account.accountReference,
        status: account.status,
        active_from: account.activeFrom,
        closed_on: account.closedOn,
      },
    },
  ]);
}

export async function createTrustAccount(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: CreateTrustAccountInput,
  actor: EvidenceActor,
): Promise<TrustAccount> {
  const now = deps.now();
  const account: TrustAccount = {
    id: deps.newId('trustAccount'),
    organizationId,
    currency: input.currency,
    type: checkTrustAccountType(input.type, input.currency),
    bank: input.bank,
    accountReference: input.account_reference,
    status: 'active',
    activeFrom: input.active_from === undefined ? dayOf(now) : parseDay(input.active_from, 'active_from'),
    closedOn: null,
    createdAt: now,
    updatedAt: now,
  };
  if (!(await insertTrustAccount(tx, account))) {
    throw new AppError({
      status: 409,
      code: 'trust_account_exists',
      title: 'Trust account already configured',
      detail: `An active trust account at ${account.bank} with reference ${account.accountReference} is configured already.`,
      param: 'account_reference',
    });
  }
  await recordAccountChange(tx, deps, account, 'create', actor);
  return account;
}

/** Closes a trust account: from today (UTC) its balance no longer counts; days before still need it. */
export async function closeTrustAccountFor(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  actor: EvidenceActor,
): Promise<TrustAccount> {
  const found = await findTrustAccount(tx, organizationId, id);
  if (!found) throw resourceMissing('trust account', id);
  const current = (await lockTrustAccounts(tx, organizationId, found.currency)).find((a) => a.id === id);
  if (!current) throw resourceMissing('trust account', id);
  if (current.status === 'closed') {
    throw new AppError({
      status: 409,
      code: 'invalid_state_transition',
      title: 'Trust account closed',
      detail: `Trust account ${id} was closed on ${current.closedOn}; a closed account does not change.`,
      param: 'status',
    });
  }
  const now = deps.now();
  const closed: TrustAccount = { ...current, status: 'closed', closedOn: dayOf(now), updatedAt: now };
  await closeTrustAccount(tx, closed);
  await recordAccountChange(tx, deps, closed, 'close', actor);
  return closed;
}

export async function getTrustAccount(deps: Deps, organizationId: string, id: string): Promise<TrustAccount> {
  const account = await findTrustAccount(deps.store, organizationId, id);
  if (!account) throw resourceMissing('trust account', id);
  return account;
}

export async function listOrganizationTrustAccounts(
  deps: Deps,
  organizationId: string,
  request: PageRequest & Omit<TrustAccountFilter, keyof PageRequest>,
): Promise<Page<TrustAccount>> {
  return toPage(
    await listTrustAccounts(deps.store, organizationId, request, request.limit + 1),
    request.limit,
  );
}

// ---------------------------------------------------------------------------------------------------------
// The verdict of a day

/** The figures of the trust accounts that count on the day: each current balance, or null when unreported. */
async function trustBalancesOn(
  tx: Queryable,
  accounts: readonly TrustAccount[],
  day: string,
): Promise<ReportedTrustBalance[]> {
  const counting = accounts.filter((a) => countsOn(a, day));
  const figures = new Map(
    (
      await currentBalances(
        tx,
        counting.map((a) => a.id),
        day,
      )
    ).map((b) => [b.trustAccountId, b]),
  );
  return counting.map((a) => {
    const figure = figures.get(a.id);
    return {
      trustAccountId: a.id,
      balanceId: figure?.id ?? null,
      closingBalanceMinor: figure?.closingBalanceMinor ?? null,
    };
  });
}

const minorText = (v: bigint | null) => (v === null ? null : v.toString());

/** The `data` of a `safeguarding.shortfall` event: the report's figures, as decimal strings. */
export function shortfallEventData(report: SafeguardingReport): Record<string, unknown> {
  const amount = (v: bigint | null) => (v === null ? null : formatAmount(v, report.currency));
  return {
    report_id: report.id,
    currency: report.currency,
    date: report.date,
    status: report.status,
    customer_money: amount(report.customerMoneyMinor),
    trust_balance: amount(report.trustBalanceMinor),
    difference: amount(report.differenceMinor),
    shortfall: amount(report.differenceMinor === null ? null : -report.differenceMinor),
    exception_id: report.exceptionId,
    as_of: report.asOf.toISOString(),
  };
}

/** Whether a report's bank-reported trust balance disagrees with the ledger's trust account. */
const mismatchedWithLedger = (r: SafeguardingReport) =>
  decideTrustLedger(r.trustBalanceMinor, r.ledgerTrustBalanceMinor).mismatched;

/**
 * Records a verdict just written: a report that has become a shortfall opens an exception and emits
 * `safeguarding.shortfall` (once per shortfall: a corrected figure that leaves it short changes the report,
 * and the open exception stays for a person); a report whose bank figure has come to differ from the
 * ledger's trust balance opens a `trust_balance_mismatch` exception, once per difference likewise; every
 * verdict is evidence.
 */
async function recordVerdict(
  tx: Queryable,
  deps: Deps,
  report: SafeguardingReport,
  previous: SafeguardingReport | undefined,
): Promise<SafeguardingReport> {
  let recorded = report;
  if (mismatchedWithLedger(report) && !(previous && mismatchedWithLedger(previous))) {
    const exception = await openException(tx, deps, {
      organizationId: report.organizationId,
      transferId: null,
      kind: 'trust_balance_mismatch',
      details: {
        report_id: report.id,
        currency: report.currency,
        date: report.date,
        trust_balance_minor: minorText(report.trustBalanceMinor),
        ledger_trust_balance_minor: minorText(report.ledgerTrustBalanceMinor),
        difference_minor: minorText(report.ledgerDifferenceMinor),
      },
    });
    recorded = { ...recorded, mismatchExceptionId: exception.id };
    await saveReport(tx, recorded);
  }
  if (report.status === 'shortfall' && previous?.status !== 'shortfall') {
    const exception = await openException(tx, deps, {
      organizationId: report.organizationId,
      transferId: null,
      kind: 'safeguarding_shortfall',
      details: {
        report_id: report.id,
        currency: report.currency,
        date: report.date,
        customer_money_minor: minorText(report.customerMoneyMinor),
        trust_balance_minor: minorText(report.trustBalanceMinor),
        shortfall_minor: minorText(report.differenceMinor === null ? null : -report.differenceMinor),
      },
    });
    recorded = { ...recorded, exceptionId: exception.id };
    await saveReport(tx, recorded);
    const event: EventRecord = newEvent(
      deps,
      {
        organizationId: report.organizationId,
        type: 'safeguarding.shortfall',
        resourceId: report.id,
        data: shortfallEventData(recorded),
      },
      report.updatedAt,
    );
    await recordEvents(tx, deps, [event]);
  }
  await appendEvidence(tx, deps, [
    {
      organizationId: report.organizationId,
      kind: 'safeguarding.check',
      actor: SYSTEM_ACTOR,
      data: {
        report_id: recorded.id,
        currency: recorded.currency,
        date: recorded.date,
        as_of: recorded.asOf.toISOString(),
        status: recorded.status,
        previous_status: previous?.status ?? null,
        customer_money_minor: recorded.customerMoneyMinor.toString(),
        trust_balance_minor: minorText(recorded.trustBalanceMinor),
        difference_minor: minorText(recorded.differenceMinor),
        trust_balances: recorded.trustBalances.map((b) => ({
          trust_account: b.trustAccountId,
          balance: b.balanceId,
          closing_balance_minor: minorText(b.closingBalanceMinor),
        })),
        exception_id: recorded.exceptionId,
        ledger_trust_balance_minor: minorText(recorded.ledgerTrustBalanceMinor),
        ledger_difference_minor: minorText(recorded.ledgerDifferenceMinor),
        mismatch_exception_id: recorded.mismatchExceptionId,
      },
    },
  ]);
  return recorded;
}

/**
 * Checks one organization, currency and day, in one transaction: nothing when the day has a report already
 * (so running the check again changes nothing); else customer money as of the end of the day against the
 * trust accounts' closing balances, and those balances against the ledger's trust account as of the same
 * instant. True when it wrote the report.
 */
export async function checkSafeguardingDay(
  deps: Deps,
  organizationId: string,
  currency: Currency,
  day: string,
): Promise<boolean> {
  return deps.store.transaction(async (tx) => {
    const accounts = await lockTrustAccounts(tx, organizationId, currency);
    if (await lockReportOfDay(tx, organizationId, currency, day)) return false;
    const asOf = endOfDay(day);
    const customerMoneyMinor = await customerMoneyAsOf(tx, organizationId, currency, asOf);
    const ledgerTrustBalanceMinor = await ledgerTrustBalanceAsOf(tx, organizationId, currency, asOf);
    const trustBalances = await trustBalancesOn(tx, accounts, day);
    const decision = decideSafeguarding(customerMoneyMinor, trustBalances);
    const now = deps.now();
    const report: SafeguardingReport = {
      id: deps.newId('safeguardingReport'),
      organizationId,
      currency,
      date: day,
      ...decision,
      customerMoneyMinor,
      trustBalances,
      ledgerTrustBalanceMinor,
      ledgerDifferenceMinor: decideTrustLedger(decision.trustBalanceMinor, ledgerTrustBalanceMinor)
        .ledgerDifferenceMinor,
      asOf,
      exceptionId: null,
      mismatchExceptionId: null,
      createdAt: now,
      updatedAt: now,
    };
    // A currency without trust accounts takes no lock: another process may have written it meanwhile.
    if (!(await insertReport(tx, report))) return false;
    await recordVerdict(tx, deps, report, undefined);
    return true;
  });
}

/** The organization's days and currencies still without a report, oldest day first. */
async function uncheckedDays(
  deps: Deps,
  organizationId: string,
  days: readonly string[],
): Promise<[Currency, string][]> {
  const accounts = await trustAccountsOf(deps.store, organizationId);
  if (accounts.length === 0) return [];
  const first = days[0] as string;
  const last = days.at(-1) as string;
  // The organization is covered from the first day one of its trust accounts counts.
  const start = accounts.map((a) => a.activeFrom).sort()[0] as string;
  const walletsSince = await walletCurrenciesSince(deps.store, organizationId, SUPPORTED_CURRENCIES);
  const reported = await reportedDays(deps.store, organizationId, first, last);
  const unchecked: [Currency, string][] = [];
  for (const day of days) {
    if (day < start) continue;
    const asOf = endOfDay(day);
    // Every currency a trust account counts in that day, and every currency customers had wallets in by then.
    const currencies = new Set<Currency>(accounts.filter((a) => countsOn(a, day)).map((a) => a.currency));
    for (const [currency, since] of walletsSince) if (since < asOf) currencies.add(currency);
    for (const currency of [...currencies].sort()) {
      if (!reported.has(`${day}/${currency}`)) unchecked.push([currency, day]);
    }
  }
  return unchecked;
}

/**
 * One pass of the daily check: every organization with a trust account, each of the last closed days
 * (SAFEGUARDING_LOOKBACK_DAYS) that lacks a report, at most `checksMax` checks. Returns the checks made.
 */
export async function runSafeguardingChecks(deps: Deps, checksMax: number): Promise<number> {
  const days = daysToCheck(deps.now());
  let checks = 0;
  let after: string | undefined;
  for (;;) {
    const organizations = await organizationsWithTrustAccounts(
      deps.store,
      after,
      SAFEGUARDING_ORGANIZATIONS_PER_PAGE,
    );
    if (organizations.length === 0) return checks;
    for (const organizationId of organizations) {
      for (const [currency, day] of await uncheckedDays(deps, organizationId, days)) {
        if (checks >= checksMax) return checks;
        await checkSafeguardingDay(deps, organizationId, currency, day);
        checks++;
      }
    }
    after = organizations.at(-1);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Closing balances

export interface ReportBalanceInput {
  trust_account: string;
  date: string;
  closing_balance: string;
  replaces?: string | undefined;
  note?: string | undefined;
}

const SIGNED_DECIMAL_PATTERN = /^-?\d+(?:\.\d+)?$/;

/** A statement's closing balance as written on it: a decimal string, negative when the account is overdrawn. */
function parseClosingBalance(text: string, currency: Currency): bigint {
  if (!SIGNED_DECIMAL_PATTERN.test(text)) {
    throw validationError(
      'closing_balance',
      'closing_balance must be a decimal string such as "1500.00" (with a minus sign when overdrawn)',
      'invalid_format',
    );
  }
  const negative = text.startsWith('-');
  const minor = parseAmount(negative ? text.slice(1) : text, currency, 'closing_balance');
  return negative ? -minor : minor;
}

function balanceConflict(detail: string, param: string): AppError {
  return new AppError({
    status: 409,
    code: 'safeguarding_balance_conflict',
    title: 'Closing balance already reported',
    detail,
    param,
  });
}

/**
 * Records a trust account's closing balance for a day. The same figure again changes nothing (`created`
 * false); a different one is a 409 unless it names the figure it corrects (`replaces`, with a `note`), which
 * it then supersedes. A day already checked is judged again on the new figure.
 */
export async function reportSafeguardingBalance(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: ReportBalanceInput,
  actor: EvidenceActor,
  createdBy: string,
): Promise<{ balance: SafeguardingBalance; created: boolean }> {
  const day = parseDay(input.date, 'date');
  const found = await findTrustAccount(tx, organizationId, input.trust_account);
  if (!found) throw resourceMissing('trust account', input.trust_account, 'trust_account');
  const closingBalanceMinor = parseClosingBalance(input.closing_balance, found.currency);
  const now = deps.now();
  if (day > dayOf(now)) {
    throw validationError('date', `date must be today (${dayOf(now)}, UTC) or earlier`, 'out_of_range');
  }
  if (input.replaces !== undefined && input.note === undefined) {
    throw validationError(
      'note',
      'note is required with replaces: say why the figure is corrected',
      'missing',
    );
  }
  const accounts = await lockTrustAccounts(tx, organizationId, found.currency);
  const account = accounts.find((a) => a.id === found.id) as TrustAccount;
  if (!countsOn(account, day)) {
    throw validationError(
      'date',
      `trust account ${account.id} holds safeguarded money from ${account.activeFrom}${account.closedOn ? ` until before ${account.closedOn}` : ''}, so ${day} has no closing balance for it`,
      'out_of_range',
    );
  }
  const [current] = await currentBalances(tx, [account.id], day);
  if (input.replaces === undefined) {
    if (current && current.closingBalanceMinor === closingBalanceMinor)
      return { balance: current, created: false };
    if (current) {
      throw balanceConflict(
        `A closing balance of ${formatAmount(current.closingBalanceMinor, current.currency)} is recorded for ${account.id} on ${day} (${current.id}); to correct it, send replaces: "${current.id}" with a note.`,
        'closing_balance',
      );
    }
  } else {
    if (current?.id !== input.replaces) {
      throw balanceConflict(
        `replaces must name the current closing balance of ${account.id} on ${day}: ${current ? current.id : 'there is none'}.`,
        'replaces',
      );
    }
    if (current.closingBalanceMinor === closingBalanceMinor) return { balance: current, created: false };
    await supersedeBalance(tx, current.id);
  }
  const balance: SafeguardingBalance = {
    id: deps.newId('safeguardingBalance'),
    organizationId,
    trustAccountId: account.id,
    currency: account.currency,
    date: day,
    closingBalanceMinor,
    status: 'current',
    replacesId: current ? current.id : null,
    note: input.note ?? null,
    createdBy,
    createdAt: now,
  };
  await insertBalance(tx, balance);
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'safeguarding.balance',
      actor,
      data: {
        action: current ? 'correct' : 'report',
        balance_id: balance.id,
        trust_account_id: account.id,
        currency: account.currency,
        date: day,
        closing_balance_minor: closingBalanceMinor.toString(),
        replaces: balance.replacesId,
        previous_closing_balance_minor: current ? current.closingBalanceMinor.toString() : null,
        note: balance.note,
      },
    },
  ]);
  await rejudgeDay(tx, deps, organizationId, account.currency, day, accounts);
  return { balance, created: true };
}

/**
 * A day already checked, judged again on the balances now recorded (its customer money and ledger trust
 * balance, read as of the end of a day that is over, do not change).
 */
async function rejudgeDay(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  currency: Currency,
  day: string,
  accounts: readonly TrustAccount[],
): Promise<void> {
  const report = await lockReportOfDay(tx, organizationId, currency, day);
  if (!report) return;
  const trustBalances = await trustBalancesOn(tx, accounts, day);
  const decision = decideSafeguarding(report.customerMoneyMinor, trustBalances);
  const judged: SafeguardingReport = {
    ...report,
    ...decision,
    trustBalances,
    ledgerDifferenceMinor: decideTrustLedger(decision.trustBalanceMinor, report.ledgerTrustBalanceMinor)
      .ledgerDifferenceMinor,
    updatedAt: deps.now(),
  };
  await saveReport(tx, judged);
  await recordVerdict(tx, deps, judged, report);
}

export async function listSafeguardingBalances(
  deps: Deps,
  organizationId: string,
  request: PageRequest & Omit<BalanceFilter, keyof PageRequest>,
): Promise<Page<SafeguardingBalance>> {
  return toPage(await listBalances(deps.store, organizationId, request, request.limit + 1), request.limit);
}

// ---------------------------------------------------------------------------------------------------------
// Reports

export async function getSafeguardingReport(
  deps: Deps,
  organizationId: string,
  id: string,
): Promise<SafeguardingReport> {
  const report = await findReport(deps.store, organizationId, id);
  if (!report) throw resourceMissing('safeguarding report', id);
  return report;
}

export async function listSafeguardingReports(
  deps: Deps,
  organizationId: string,
  request: PageRequest & Omit<ReportFilter, keyof PageRequest>,
): Promise<Page<SafeguardingReport>> {
  if (request.dateGte !== undefined) parseDay(request.dateGte, 'date[gte]');
  if (request.dateLte !== undefined) parseDay(request.dateLte, 'date[lte]');
  return toPage(await listReports(deps.store, organizationId, request, request.limit + 1), request.limit);
}
