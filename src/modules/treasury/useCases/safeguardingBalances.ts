/**
 * Trust accounts' closing balances, as their bank statements report them (operators enter them): one figure
 * per account and day, corrected only by naming the figure it replaces. A day the safeguarding check has
 * judged already is judged again on the new figure (safeguarding.ts, whose lock order this follows).
 */

import type { Deps } from '../../../app/deps.ts';
import { appendEvidence } from '../../../app/evidence.ts';
import { listPage } from '../../../app/reads.ts';
import { dayOf, parseDay } from '../../../domain/days.ts';
import { AppError, validationError } from '../../../domain/errors.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import { type Currency, formatAmount, parseAmount } from '../../../domain/money.ts';
import type { Queryable } from '../../../store/store.ts';
import {
  type CustodianReading,
  countsOn,
  type SafeguardingBalance,
  type TrustAccount,
} from '../domain/safeguarding.ts';
import {
  type BalanceFilter,
  currentBalances,
  insertBalance,
  listBalances,
  supersedeBalance,
} from '../repository/safeguardingBalances.ts';
import { lockTrustAccounts, trustAccountsOf } from '../repository/trustAccounts.ts';
import { rejudgeDay } from './safeguarding.ts';
import { requireTrustAccount } from './trustAccounts.ts';

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

/** A figure for today or earlier; a correction says why. */
function refuseBalanceReport(input: ReportBalanceInput, day: string, now: Date): void {
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
}

/** The locked trust account the figure is for, when it holds safeguarded money on that day. */
function countingAccount(accounts: readonly TrustAccount[], id: string, day: string): TrustAccount {
  const account = accounts.find((a) => a.id === id) as TrustAccount;
  if (!countsOn(account, day)) {
    throw validationError(
      'date',
      `trust account ${account.id} holds safeguarded money from ${account.activeFrom}${account.closedOn ? ` until before ${account.closedOn}` : ''}, so ${day} has no closing balance for it`,
      'out_of_range',
    );
  }
  return account;
}

/**
 * The account's current figure for the day when the new one equals it (nothing to record). A different
 * figure is a 409 unless `replaces` names the current one, which is then superseded.
 */
async function unchangedOrSuperseded(
  tx: Queryable,
  input: ReportBalanceInput,
  current: SafeguardingBalance | undefined,
  closingBalanceMinor: bigint,
  account: TrustAccount,
  day: string,
): Promise<SafeguardingBalance | undefined> {
  if (input.replaces === undefined) {
    if (current && current.closingBalanceMinor === closingBalanceMinor) return current;
    if (current) {
      throw balanceConflict(
        `A closing balance of ${formatAmount(current.closingBalanceMinor, current.currency)} is recorded for ${account.id} on ${day} (${current.id}); to correct it, send replaces: "${current.id}" with a note.`,
        'closing_balance',
      );
    }
    return undefined;
  }
  if (current?.id !== input.replaces) {
    throw balanceConflict(
      `replaces must name the current closing balance of ${account.id} on ${day}: ${current ? current.id : 'there is none'}.`,
      'replaces',
    );
  }
  if (current.closingBalanceMinor === closingBalanceMinor) return current;
  await supersedeBalance(tx, current.id);
  return undefined;
}

/** The figure reported or corrected, as evidence, with the figure it replaces. */
async function recordBalanceEvidence(
  tx: Queryable,
  deps: Deps,
  balance: SafeguardingBalance,
  current: SafeguardingBalance | undefined,
  actor: EvidenceActor,
): Promise<void> {
  await appendEvidence(tx, deps, [
    {
      organizationId: balance.organizationId,
      kind: 'safeguarding.balance',
      actor,
      data: {
        action: current ? 'correct' : 'report',
        balance_id: balance.id,
        trust_account_id: balance.trustAccountId,
        currency: balance.currency,
        date: balance.date,
        closing_balance_minor: balance.closingBalanceMinor.toString(),
        replaces: balance.replacesId,
        previous_closing_balance_minor: current ? current.closingBalanceMinor.toString() : null,
        note: balance.note,
      },
    },
  ]);
}

/** A trust account's day under the currency's lock: the accounts locked, the account and its current figure. */
interface LockedAccountDay {
  organizationId: string;
  day: string;
  accounts: TrustAccount[];
  account: TrustAccount;
  current: SafeguardingBalance | undefined;
}

/**
 * Locks the trust accounts of the found account's currency (the safeguarding check's lock order), and reads
 * the account, which must count on the day, and its current figure for the day.
 */
async function lockAccountDay(
  tx: Queryable,
  organizationId: string,
  found: TrustAccount,
  day: string,
): Promise<LockedAccountDay> {
  const accounts = await lockTrustAccounts(tx, organizationId, found.currency);
  const account = countingAccount(accounts, found.id, day);
  const [current] = await currentBalances(tx, [account.id], day);
  return { organizationId, day, accounts, account, current };
}

/** What a new figure says beyond its account and day. */
type BalanceFigure = Pick<
  SafeguardingBalance,
  'closingBalanceMinor' | 'note' | 'createdBy' | 'createdAt' | 'source'
>;

/**
 * Records a new current figure for the account's day, replacing the current one (already superseded, if
 * any), files it as evidence with the figure it replaces, and judges the day again when already checked.
 */
async function recordNewBalance(
  tx: Queryable,
  deps: Deps,
  at: LockedAccountDay,
  figure: BalanceFigure,
  actor: EvidenceActor,
): Promise<{ balance: SafeguardingBalance; created: boolean }> {
  const balance: SafeguardingBalance = {
    id: deps.newId('safeguardingBalance'),
    organizationId: at.organizationId,
    trustAccountId: at.account.id,
    currency: at.account.currency,
    date: at.day,
    closingBalanceMinor: figure.closingBalanceMinor,
    status: 'current',
    replacesId: at.current ? at.current.id : null,
    note: figure.note,
    createdBy: figure.createdBy,
    createdAt: figure.createdAt,
    source: figure.source,
  };
  await insertBalance(tx, balance);
  await recordBalanceEvidence(tx, deps, balance, at.current, actor);
  await rejudgeDay(tx, deps, at.organizationId, at.account.currency, at.day, at.accounts);
  return { balance, created: true };
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
  const found = await requireTrustAccount(tx, organizationId, input.trust_account, 'trust_account');
  const closingBalanceMinor = parseClosingBalance(input.closing_balance, found.currency);
  const now = deps.now();
  refuseBalanceReport(input, day, now);
  const at = await lockAccountDay(tx, organizationId, found, day);
  const unchanged = await unchangedOrSuperseded(tx, input, at.current, closingBalanceMinor, at.account, day);
  if (unchanged) return { balance: unchanged, created: false };
  const figure = { closingBalanceMinor, note: input.note ?? null, createdBy, createdAt: now, source: null };
  return recordNewBalance(tx, deps, at, figure, actor);
}

/** What the custodian reported a trust account held, read after the day ended. */
export interface CustodianBalanceInput {
  trustAccountId: string;
  day: string;
  closingBalanceMinor: bigint;
  reading: CustodianReading;
}

/**
 * Records a closing balance read from the custodian, unless the account already has a figure for the day
 * (an operator's, or an earlier reading): that one stands and is returned with `created` false. Recorded
 * like an operator's figure (evidence by the system, and the day judged again when already checked).
 */
export async function recordCustodianBalance(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: CustodianBalanceInput,
): Promise<{ balance: SafeguardingBalance; created: boolean }> {
  const found = await requireTrustAccount(tx, organizationId, input.trustAccountId, 'trust_account');
  const at = await lockAccountDay(tx, organizationId, found, input.day);
  if (at.current) return { balance: at.current, created: false };
  const figure = {
    closingBalanceMinor: input.closingBalanceMinor,
    note: null,
    createdBy: `rail_partner:${input.reading.configId}`,
    createdAt: deps.now(),
    source: input.reading,
  };
  return recordNewBalance(tx, deps, at, figure, { type: 'system' });
}

/**
 * The organization's custody wallets at this custodian (its trust accounts of type `custody_wallet` whose
 * `bank` names it, in any case) that count on the day and have no closing balance for it yet.
 */
export async function custodianAccountsAwaitingBalance(
  db: Queryable,
  organizationId: string,
  custodian: string,
  day: string,
): Promise<TrustAccount[]> {
  const accounts = (await trustAccountsOf(db, organizationId)).filter(
    (a) =>
      a.type === 'custody_wallet' &&
      a.bank.trim().toLowerCase() === custodian.toLowerCase() &&
      countsOn(a, day),
  );
  const reported = new Set(
    (
      await currentBalances(
        db,
        accounts.map((a) => a.id),
        day,
      )
    ).map((b) => b.trustAccountId),
  );
  return accounts.filter((a) => !reported.has(a.id));
}

export const listSafeguardingBalances = listPage<BalanceFilter, SafeguardingBalance>(listBalances);
