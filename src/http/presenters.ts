/** Domain records to their wire form: snake_case fields, decimal-string amounts, ISO 8601 times. */

import type { Environment } from '../domain/access.ts';
import { validationError } from '../domain/errors.ts';
import { type EventRecord, eventEnvelope } from '../domain/events.ts';
import { type Currency, formatAmount } from '../domain/money.ts';
import type { Page, PageRequest } from '../domain/pagination.ts';
import { feeOf, type Transfer } from '../domain/transferRecord.ts';
import type { Balances } from '../domain/wallets.ts';
import { netBalances, walletBalances } from '../modules/ledger/domain/ledger.ts';
import type { JournalEntry, LedgerAccount } from '../modules/ledger/index.ts';

export function presentList<T extends { id: string }, W>(page: Page<T>, present: (item: T) => W) {
  const last = page.data.at(-1);
  return {
    object: 'list',
    data: page.data.map(present),
    has_more: page.hasMore,
    next_cursor: page.hasMore && last ? last.id : null,
  };
}

export interface ListQuery {
  limit: number;
  starting_after?: string;
  'created[gte]'?: string;
  'created[lte]'?: string;
}

/** The earliest and latest times a created-range filter may name: what PostgreSQL's timestamptz and JS agree on. */
const CREATED_FILTER_YEAR_MIN = 1;
const CREATED_FILTER_YEAR_MAX = 9999;

/**
 * A `created[…]` bound as a Date. RFC 3339 allows forms (a leap second, year 0) that JS or PostgreSQL
 * cannot represent; those are a 400 naming the parameter, not a database error.
 */
function createdBound(value: string | undefined, param: string): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  const year = date.getUTCFullYear();
  if (Number.isNaN(date.getTime()) || year < CREATED_FILTER_YEAR_MIN || year > CREATED_FILTER_YEAR_MAX) {
    throw validationError(
      param,
      `${param} must be a time from year ${CREATED_FILTER_YEAR_MIN} to ${CREATED_FILTER_YEAR_MAX}, without leap seconds`,
      'out_of_range',
    );
  }
  return date;
}

export function pageRequestOf(query: ListQuery): PageRequest {
  return {
    limit: query.limit,
    startingAfter: query.starting_after,
    createdGte: createdBound(query['created[gte]'], 'created[gte]'),
    createdLte: createdBound(query['created[lte]'], 'created[lte]'),
  };
}

/** A time on the wire: ISO 8601, or null where there is none. */
export function isoOrNull(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}

export function presentTransfer(t: Transfer) {
  return {
    id: t.id,
    object: 'transfer',
    direction: t.direction,
    source: t.sourceWalletId,
    destination: t.destination,
    amount: formatAmount(t.amountMinor, t.currency),
    fee: formatAmount(feeOf(t), t.currency),
    currency: t.currency,
    rail: t.rail,
    status: t.status,
    status_reason: t.statusReason,
    failure_code: t.failureCode,
    ledger_state: t.ledgerState,
    metadata: t.metadata,
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
    processing_at: isoOrNull(t.processingAt),
    settled_at: isoOrNull(t.settledAt),
    failed_at: isoOrNull(t.failedAt),
    canceled_at: isoOrNull(t.canceledAt),
    returned_at: isoOrNull(t.returnedAt),
    created_by: t.createdBy,
    authorization: t.authorization && {
      decision: t.authorization.decision,
      policy_version: t.authorization.policyVersion,
      rule: t.authorization.rule,
    },
    approval: t.approvalId,
    rail_reference: t.railReference,
    partner_receipt: t.partnerReceipt,
    travel_rule: t.travelRule
      ? { reference: t.travelRule.evidenceId, required: t.travelRule.required }
      : null,
    fee_schedule: t.fee ? { version: t.fee.scheduleVersion, rule: t.fee.rule } : null,
  };
}

/** The envelope is built in the domain, so webhook deliveries carry exactly what the API returns. */
export function presentEvent(event: EventRecord, environment: Environment) {
  return eventEnvelope(event, environment);
}

export function presentJournalEntry(entry: JournalEntry) {
  return {
    id: entry.id,
    object: 'journal_entry',
    transfer: entry.transferId,
    kind: entry.kind,
    hold_entry: entry.holdEntryId,
    created_at: entry.createdAt.toISOString(),
    postings: entry.postings.map((p) => ({
      account: p.accountId,
      side: p.side,
      phase: p.phase,
      releases_hold: p.releasesHold,
      amount: formatAmount(p.amountMinor, p.currency),
      currency: p.currency,
    })),
  };
}

export function presentLedgerAccount(account: LedgerAccount) {
  const amount = (minor: bigint) => formatAmount(minor, account.currency);
  const { netPostedMinor, netPendingMinor } = netBalances(account);
  return {
    id: account.id,
    object: 'ledger_account',
    kind: account.kind,
    wallet: account.walletId,
    rail: account.rail,
    currency: account.currency,
    debits_pending: amount(account.debitsPending),
    debits_posted: amount(account.debitsPosted),
    credits_pending: amount(account.creditsPending),
    credits_posted: amount(account.creditsPosted),
    net_pending: amount(netPendingMinor),
    net_posted: amount(netPostedMinor),
    // The same computation as a wallet's own balance, so the two can never disagree.
    balance:
      account.kind === 'wallet'
        ? presentBalances({ ...walletBalances(account), currency: account.currency })
        : null,
    created_at: account.createdAt.toISOString(),
    updated_at: account.updatedAt.toISOString(),
  };
}

export function presentBalances(wallet: Balances & { currency: Currency }) {
  return {
    available: formatAmount(wallet.availableMinor, wallet.currency),
    pending: formatAmount(wallet.pendingMinor, wallet.currency),
    current: formatAmount(wallet.currentMinor, wallet.currency),
  };
}
