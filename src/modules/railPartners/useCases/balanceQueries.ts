/**
 * An operator's query of a rail partner's own account balances, through the rail interface
 * (PartnerRail.queryBalances): the call goes out before any transaction, through the partner's circuit
 * breaker; the answer is recorded, `reported` at once (MTN MoMo) or `requested` until the partner's result
 * callback reports the balances (M-Pesa's Account Balance), applied once. Each result is a
 * `rail_partner_balance.updated` event, so a platform can watch its float at the partner.
 */
import type { Deps } from '../../../app/deps.ts';
import { recordEvent } from '../../../app/events.ts';
import { AppError, resourceMissing } from '../../../domain/errors.ts';
import { formatAmount } from '../../../domain/money.ts';
import { type Page, type PageRequest, toPage } from '../../../domain/pagination.ts';
import type { BalanceQueryAnswer, BalancesReport, PartnerAccountBalance } from '../../../rails/balances.ts';
import type { Queryable } from '../../../store/store.ts';
import { findWalletIdentities } from '../../wallets/index.ts';
import type { RailPartnerConfig } from '../domain.ts';
import {
  type BalanceQuery,
  findBalanceQuery,
  insertBalanceQuery,
  listBalanceQueries,
  lockBalanceQueryByReference,
  saveBalanceQueryResult,
} from '../repository/balanceQueries.ts';
import type { CallbackEffect } from './callbackEffects.ts';
import type { RailPartnerDirectory } from './directory.ts';
import { getRailPartner } from './partners.ts';
import { partnerErrorMessage, partnerUnavailable } from './partnerUnavailable.ts';

// The record type the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { BalanceQuery } from '../repository/balanceQueries.ts';
export { BALANCE_QUERY_STATUSES } from '../repository/balanceQueries.ts';

export interface BalancesAsked {
  config: RailPartnerConfig;
  answer: BalanceQueryAnswer;
}

/** Asks the configuration's partner for its balances; refuses a disabled partner or one without a balance API. */
export async function askPartnerBalances(
  deps: Deps,
  directory: RailPartnerDirectory,
  organizationId: string,
  configId: string,
): Promise<BalancesAsked> {
  const config = await getRailPartner(deps, organizationId, configId);
  const rail = directory.guarded(config);
  const query = rail.adapter.queryBalances?.bind(rail.adapter);
  if (config.status !== 'active' || !query) {
    throw new AppError({
      status: 409,
      code: 'balances_not_available',
      title: 'No balances to ask for',
      detail:
        config.status !== 'active'
          ? 'The partner is disabled; only an active partner is asked.'
          : `${config.partner} has no balance query.`,
      param: 'id',
    });
  }
  let answer: BalanceQueryAnswer;
  try {
    answer = await rail.call(() => query(deps.now()));
  } catch (error) {
    // Paused, rate limited, unreachable or refusing: nothing was asked, and asking again is safe.
    throw partnerUnavailable(
      `${config.partner} did not answer the balance query: ${partnerErrorMessage(error)}`,
      error,
    );
  }
  if (answer.kind !== 'reported') return { config, answer };
  return {
    config,
    answer: { ...answer, accounts: await accountsOfOrganization(deps, organizationId, answer.accounts) },
  };
}

/**
 * The accounts an organization may see and count: a custody account holding a wallet's deposits only when the
 * wallet is the organization's (one Fireblocks workspace may serve several organizations), every other one.
 */
export async function accountsOfOrganization(
  deps: Deps,
  organizationId: string,
  accounts: readonly PartnerAccountBalance[],
): Promise<PartnerAccountBalance[]> {
  const walletIds = [...new Set(accounts.flatMap((a) => (a.walletId === undefined ? [] : [a.walletId])))];
  const own =
    walletIds.length === 0 ? new Map() : await findWalletIdentities(deps, organizationId, walletIds);
  return accounts.filter((a) => a.walletId === undefined || own.has(a.walletId));
}

/** A new balance query of the partner configuration, as it stands when asked (or answered at once). */
export function newBalanceQuery(
  deps: Deps,
  config: RailPartnerConfig,
  asked: Pick<
    BalanceQuery,
    'status' | 'partnerReference' | 'accounts' | 'requestedBy' | 'createdAt' | 'reportedAt'
  >,
): BalanceQuery {
  return {
    id: deps.newId('railBalanceQuery'),
    organizationId: config.organizationId,
    configId: config.id,
    partner: config.partner,
    status: asked.status,
    partnerReference: asked.partnerReference,
    accounts: asked.accounts,
    failureCode: null,
    requestedBy: asked.requestedBy,
    createdAt: asked.createdAt,
    reportedAt: asked.reportedAt,
  };
}

/** Records what the partner answered, in the write's transaction: reported now, or waiting for its callback. */
export async function recordBalanceQuery(
  tx: Queryable,
  deps: Deps,
  asked: BalancesAsked,
  requestedBy: string,
): Promise<BalanceQuery> {
  const now = deps.now();
  const { config, answer } = asked;
  const query = newBalanceQuery(deps, config, {
    status: answer.kind === 'reported' ? 'reported' : 'requested',
    partnerReference: answer.kind === 'requested' ? answer.reference : null,
    accounts: answer.kind === 'reported' ? answer.accounts : null,
    requestedBy,
    createdAt: now,
    reportedAt: answer.kind === 'reported' ? now : null,
  });
  await insertBalanceQuery(tx, query);
  if (query.status === 'reported') await recordBalanceEvent(tx, deps, query);
  return query;
}

/** A partner's balance result: the query it names reported (or failed) once; a repeat changes nothing. */
export async function applyBalancesReport(
  tx: Queryable,
  deps: Deps,
  config: RailPartnerConfig,
  report: BalancesReport,
): Promise<CallbackEffect> {
  const query = await lockBalanceQueryByReference(tx, config.id, report.reference);
  if (!query) return { status: 'ignored', transferId: null, detail: 'no balance query has this reference' };
  if (query.status !== 'requested') {
    return { status: 'unchanged', transferId: null, detail: `balance query ${query.id} is ${query.status}` };
  }
  const outcome = report.outcome;
  const reported: BalanceQuery = {
    ...query,
    status: outcome.kind,
    accounts: outcome.kind === 'reported' ? outcome.accounts : null,
    failureCode: outcome.kind === 'failed' ? outcome.failureCode : null,
    reportedAt: deps.now(),
  };
  await saveBalanceQueryResult(tx, reported);
  await recordBalanceEvent(tx, deps, reported);
  return { status: 'applied', transferId: null, detail: `balance query ${query.id} ${outcome.kind}` };
}

/** A balance query as the API and its event show it. */
export function presentBalanceQuery(q: BalanceQuery) {
  return {
    object: 'rail_partner_balance_query' as const,
    id: q.id,
    rail_partner: q.configId,
    partner: q.partner,
    status: q.status,
    accounts:
      q.accounts?.map((a) => ({
        account: a.account,
        currency: a.currency,
        available: formatAmount(a.availableMinor, a.currency),
        current: a.currentMinor === null ? null : formatAmount(a.currentMinor, a.currency),
      })) ?? null,
    failure_code: q.failureCode,
    requested_by: q.requestedBy,
    created_at: q.createdAt.toISOString(),
    reported_at: q.reportedAt ? q.reportedAt.toISOString() : null,
  };
}

export async function recordBalanceEvent(tx: Queryable, deps: Deps, query: BalanceQuery): Promise<void> {
  await recordEvent(tx, deps, deps.now(), {
    organizationId: query.organizationId,
    type: 'rail_partner_balance.updated',
    resourceId: query.configId,
    data: presentBalanceQuery(query),
  });
}

/** A partner configuration's balance queries, newest first, a page at a time. */
export async function listPartnerBalanceQueries(
  deps: Deps,
  organizationId: string,
  request: PageRequest & { configId: string },
): Promise<Page<BalanceQuery>> {
  await getRailPartner(deps, organizationId, request.configId);
  return toPage(
    await listBalanceQueries(deps.store, organizationId, request, request.limit + 1),
    request.limit,
  );
}

/** One balance query of the organization's; a 404 when it has none with the id. */
export async function getBalanceQuery(deps: Deps, organizationId: string, id: string): Promise<BalanceQuery> {
  const query = await findBalanceQuery(deps.store, organizationId, id);
  if (!query) throw resourceMissing('rail partner balance query', id, 'id');
  return query;
}
