/**
 * Custody reserves for the safeguarding check: the closing balance of each custody wallet trust account an
 * organization holds at its custody partner (a `custody_wallet` whose `bank` names the partner), read from
 * the partner's balances (Fireblocks: every wallet's vault account) right after the day ends, and recorded
 * as that day's figure with the partner configuration, the balance query and the instant it was read.
 *
 * Each read is a balance query, recorded `requested` before the call and `reported` or `failed` after it. A
 * read that fails records no figure (the day stays `missing_balance` until a later read in the window or an
 * operator's statement figure fills it): never a zero made up for an unanswered question.
 */
import type { Deps } from '../../../app/deps.ts';
import { addDays, dayOf } from '../../../domain/days.ts';
import type { BalanceQueryAnswer, PartnerAccountBalance } from '../../../rails/balances.ts';
import type { Queryable } from '../../../store/store.ts';
import { custodianAccountsAwaitingBalance, recordCustodianBalance } from '../../treasury/index.ts';
import type { RailPartnerConfig } from '../domain.ts';
import {
  type BalanceQuery,
  insertBalanceQuery,
  saveBalanceQueryResult,
} from '../repository/balanceQueries.ts';
import { accountsOfOrganization, newBalanceQuery, recordBalanceEvent } from './balanceQueries.ts';
import type { RailPartnerDirectory } from './directory.ts';

/**
 * How long after a day ends its closing balance may still be read from the partner. Balances are read as
 * they are now, so a read long after midnight would carry the next day's movements; within the hour the
 * safeguarding check waits (its day-close grace) the figure is close to the day's end, and later reads record
 * nothing: an operator enters the statement's figure instead.
 */
export const CUSTODY_RESERVE_READ_WINDOW_MS = 3_600_000;
/** Who a reserve read's balance query names as having asked. */
export const CUSTODY_RESERVE_REQUESTER = 'custody_reserves';
/** A balance query's failure code when the partner gave no usable answer. */
const READ_FAILED_CODE = 'partner_unavailable';

/** The day whose closing balance may be read at `now`, or undefined outside the window after midnight. */
export function reserveDayAt(now: Date): string | undefined {
  const today = dayOf(now);
  const sinceMidnight = now.getTime() - new Date(`${today}T00:00:00Z`).getTime();
  return sinceMidnight < CUSTODY_RESERVE_READ_WINDOW_MS ? addDays(today, -1) : undefined;
}

export interface CustodyReserveRead {
  /** The balance query made; undefined when no trust account was waiting for a figure. */
  query: BalanceQuery | undefined;
  /** The closing balances recorded (ids). */
  recorded: string[];
}

/** Sums the partner's accounts per currency: `current` (the whole balance) where given, else `available`. */
function totalsByCurrency(accounts: readonly PartnerAccountBalance[]): Map<string, bigint> {
  const totals = new Map<string, bigint>();
  for (const a of accounts)
    totals.set(a.currency, (totals.get(a.currency) ?? 0n) + (a.currentMinor ?? a.availableMinor));
  return totals;
}

async function saveQuery(tx: Queryable, deps: Deps, query: BalanceQuery): Promise<void> {
  await saveBalanceQueryResult(tx, query);
  await recordBalanceEvent(tx, deps, query);
}

/** The organization's own accounts among the partner's answer; undefined when it gave none (or failed). */
async function ownBalances(
  deps: Deps,
  organizationId: string,
  ask: () => Promise<BalanceQueryAnswer>,
): Promise<PartnerAccountBalance[] | undefined> {
  try {
    const answer = await ask();
    if (answer.kind !== 'reported') return undefined;
    return await accountsOfOrganization(deps, organizationId, answer.accounts);
  } catch {
    return undefined;
  }
}

/**
 * Reads the partner's reserves for `day` and records them for each of the organization's custody wallets
 * at the partner still waiting for that day's figure. Two custody wallets at one partner in one currency
 * cannot be told apart in its balances, so neither is given a figure (an operator enters them).
 */
export async function readCustodyReserves(
  deps: Deps,
  directory: RailPartnerDirectory,
  config: RailPartnerConfig,
  day: string,
): Promise<CustodyReserveRead> {
  const waiting = await custodianAccountsAwaitingBalance(
    deps.store,
    config.organizationId,
    config.partner,
    day,
  );
  const perCurrency = new Map<string, number>();
  for (const a of waiting) perCurrency.set(a.currency, (perCurrency.get(a.currency) ?? 0) + 1);
  const accounts = waiting.filter((a) => perCurrency.get(a.currency) === 1);
  const resolved = directory.guarded(config);
  const ask = resolved.adapter.queryBalances?.bind(resolved.adapter);
  if (accounts.length === 0 || !ask) return { query: undefined, recorded: [] };
  const query = newBalanceQuery(deps, config, {
    status: 'requested',
    partnerReference: null,
    accounts: null,
    requestedBy: CUSTODY_RESERVE_REQUESTER,
    createdAt: deps.now(),
    reportedAt: null,
  });
  await insertBalanceQuery(deps.store, query);
  const answered = await ownBalances(deps, config.organizationId, () => resolved.call(() => ask(deps.now())));
  const readAt = deps.now();
  if (answered === undefined) {
    const failed: BalanceQuery = {
      ...query,
      status: 'failed',
      failureCode: READ_FAILED_CODE,
      reportedAt: readAt,
    };
    await deps.store.transaction((tx) => saveQuery(tx, deps, failed));
    return { query: failed, recorded: [] };
  }
  const reported: BalanceQuery = { ...query, status: 'reported', accounts: answered, reportedAt: readAt };
  const totals = totalsByCurrency(answered);
  const recorded = await deps.store.transaction(async (tx) => {
    await saveQuery(tx, deps, reported);
    const ids: string[] = [];
    for (const account of accounts) {
      const { balance, created } = await recordCustodianBalance(tx, deps, config.organizationId, {
        trustAccountId: account.id,
        day,
        closingBalanceMinor: totals.get(account.currency) ?? 0n,
        reading: { configId: config.id, queryId: query.id, readAt },
      });
      if (created) ids.push(balance.id);
    }
    return ids;
  });
  return { query: reported, recorded };
}
