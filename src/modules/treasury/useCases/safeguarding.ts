/**
 * Safeguarding: the daily check that compares customer money, read from the ledger as of the end of the day,
 * with the closing balances the organization's trust accounts (trustAccounts.ts) report for that day
 * (safeguardingBalances.ts), and the reports it writes. A shortfall opens a reconciliation exception and
 * emits `safeguarding.shortfall`; each verdict is evidence. The same check compares the banks' figure with
 * the ledger's trust account as of the end of the day (trustLedger.ts): a difference opens a
 * `trust_balance_mismatch` exception.
 *
 * Lock order, on every path: the currency's trust accounts (id order), then the day's report, then the
 * evidence chain. So a balance reported while the check runs is either seen by it or re-evaluates its report.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvent } from '../../../app/events.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import { getById } from '../../../app/reads.ts';
import { endOfDay, parseDay } from '../../../domain/days.ts';
import { type Currency, formatAmount, SUPPORTED_CURRENCIES } from '../../../domain/money.ts';
import { type Page, type PageRequest, toPage } from '../../../domain/pagination.ts';
import type { Queryable } from '../../../store/store.ts';
import {
  countsOn,
  daysToCheck,
  decideSafeguarding,
  type ReportedTrustBalance,
  type TrustAccount,
} from '../domain/safeguarding.ts';
import { decideTrustLedger } from '../domain/trustLedger.ts';
import { currentBalances } from '../repository/safeguardingBalances.ts';
import {
  customerMoneyAsOf,
  ledgerTrustBalanceAsOf,
  walletCurrenciesSince,
} from '../repository/safeguardingLedger.ts';
import {
  findReport,
  insertReport,
  listReports,
  lockReportOfDay,
  type ReportFilter,
  reportedDays,
  type SafeguardingReport,
  saveReport,
} from '../repository/safeguardingReports.ts';
import {
  lockTrustAccounts,
  organizationsWithTrustAccounts,
  trustAccountsOf,
} from '../repository/trustAccounts.ts';
import { openException } from './reconciliationExceptions.ts';

export type { SafeguardingReport };

/** Organizations the daily check reads per query while it walks them. */
export const SAFEGUARDING_ORGANIZATIONS_PER_PAGE = 100;

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

/** Opens an exception about a report: its id, currency and date, and the figures that tell what is wrong. */
function openReportException(
  tx: Queryable,
  deps: Deps,
  report: SafeguardingReport,
  kind: 'trust_balance_mismatch' | 'safeguarding_shortfall',
  figures: Record<string, string | null>,
) {
  return openException(tx, deps, {
    organizationId: report.organizationId,
    transferId: null,
    kind,
    details: { report_id: report.id, currency: report.currency, date: report.date, ...figures },
  });
}

/** A report whose bank figure has come to differ from the ledger's: a `trust_balance_mismatch` exception. */
async function openTrustBalanceMismatch(
  tx: Queryable,
  deps: Deps,
  report: SafeguardingReport,
): Promise<SafeguardingReport> {
  const exception = await openReportException(tx, deps, report, 'trust_balance_mismatch', {
    trust_balance_minor: minorText(report.trustBalanceMinor),
    ledger_trust_balance_minor: minorText(report.ledgerTrustBalanceMinor),
    difference_minor: minorText(report.ledgerDifferenceMinor),
  });
  const recorded = { ...report, mismatchExceptionId: exception.id };
  await saveReport(tx, recorded);
  return recorded;
}

/** A report that has become a shortfall: a `safeguarding_shortfall` exception and the `safeguarding.shortfall` event. */
async function openShortfall(
  tx: Queryable,
  deps: Deps,
  report: SafeguardingReport,
): Promise<SafeguardingReport> {
  const exception = await openReportException(tx, deps, report, 'safeguarding_shortfall', {
    customer_money_minor: minorText(report.customerMoneyMinor),
    trust_balance_minor: minorText(report.trustBalanceMinor),
    shortfall_minor: minorText(report.differenceMinor === null ? null : -report.differenceMinor),
  });
  const recorded = { ...report, exceptionId: exception.id };
  await saveReport(tx, recorded);
  await recordEvent(tx, deps, report.updatedAt, {
    organizationId: report.organizationId,
    type: 'safeguarding.shortfall',
    resourceId: report.id,
    data: shortfallEventData(recorded),
  });
  return recorded;
}

/** The verdict as evidence: every figure it was judged on, and the status it had before. */
async function recordCheckEvidence(
  tx: Queryable,
  deps: Deps,
  recorded: SafeguardingReport,
  previous: SafeguardingReport | undefined,
): Promise<void> {
  await appendEvidence(tx, deps, [
    {
      organizationId: recorded.organizationId,
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
}

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
    recorded = await openTrustBalanceMismatch(tx, deps, recorded);
  }
  if (report.status === 'shortfall' && previous?.status !== 'shortfall') {
    recorded = await openShortfall(tx, deps, recorded);
  }
  await recordCheckEvidence(tx, deps, recorded, previous);
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

/**
 * A day already checked, judged again on the balances now recorded (its customer money and ledger trust
 * balance, read as of the end of a day that is over, do not change).
 */
export async function rejudgeDay(
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

// ---------------------------------------------------------------------------------------------------------
// Reports

export const getSafeguardingReport = getById<SafeguardingReport>(findReport, 'safeguarding report');

export async function listSafeguardingReports(
  deps: Deps,
  organizationId: string,
  request: PageRequest & Omit<ReportFilter, keyof PageRequest>,
): Promise<Page<SafeguardingReport>> {
  if (request.dateGte !== undefined) parseDay(request.dateGte, 'date[gte]');
  if (request.dateLte !== undefined) parseDay(request.dateLte, 'date[lte]');
  return toPage(await listReports(deps.store, organizationId, request, request.limit + 1), request.limit);
}
