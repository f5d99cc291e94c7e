/**
 * Mint and redeem: converting between a customer's fiat wallet and their stablecoin wallet at a quoted
 * rate. Rates are conversionRates.ts, quotes conversionQuotes.ts, the AML decision conversionCompliance.ts;
 * this file executes a quote: it posts, in one transaction through the posting module, two journal
 * entries, one per currency and each balanced: the source wallet pays the organization's conversion account
 * in its currency (and the fee to fee income, in the same entry), and the conversion account in the other
 * currency pays the destination wallet. The quote is locked while it is executed, so it converts once.
 *
 * A conversion is money the customer sends out of a wallet, so the tier limits and the AML rules decide it
 * as they decide a transfer: with the same pure decisions, over the customer's day and month sums and the
 * wallet's activity read after its account is locked, the sums locked after the accounts as the ledger
 * writer locks them. So transfers and conversions racing on one wallet or one customer's limit are decided
 * one after the other.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvent } from '../../../app/events.ts';
import { appendEvidence } from '../../../app/evidence.ts';
import { requireProduct } from '../../../app/products.ts';
import { getById, listPage } from '../../../app/reads.ts';
import {
  amountWithinBand,
  type Conversion,
  type ConversionQuote,
  convertAmount,
  parseConversionRate,
} from '../../../domain/conversions.ts';
import type { AmlRule } from '../../../domain/decisions/aml.ts';
import { decideTransferCompliance } from '../../../domain/decisions/transferCompliance.ts';
import { AppError, invalidStateTransition, resourceMissing } from '../../../domain/errors.ts';
import type { EvidenceDraft } from '../../../domain/evidence.ts';
import { type Currency, formatAmount } from '../../../domain/money.ts';
import type { Queryable } from '../../../store/store.ts';
import { type AmlAlertDraft, loadAmlRules, openAmlAlerts } from '../../compliance/index.ts';
import { feeIncomeAccount } from '../../fees/index.ts';
import {
  directEntry,
  directPostings,
  ensureSystemAccount,
  PostingSession,
  refusalError,
  transferPostings,
} from '../../ledger/index.ts';
import { LimitGuard } from '../../transfers/index.ts';
import { findConversionQuote, markQuoteExecuted } from '../repository/conversionQuotes.ts';
import { findConversionRate, type StoredConversionRate } from '../repository/conversionRates.ts';
import { findConversion, insertConversion, listConversions } from '../repository/conversions.ts';
import {
  conversionAlerts,
  conversionBlocked,
  conversionDecisionEvidence,
  screenConversion,
} from './conversionCompliance.ts';
import { rateBandBps } from './conversionRates.ts';

/** What a quote fixes and its conversion carries, in wire form: the part their events and API objects share. */
export function conversionTermsWire(c: ConversionQuote | Conversion) {
  return {
    direction: c.direction,
    from_wallet: c.fromWalletId,
    to_wallet: c.toWalletId,
    from_amount: formatAmount(c.fromAmountMinor, c.fromCurrency),
    from_currency: c.fromCurrency,
    to_amount: formatAmount(c.toAmountMinor, c.toCurrency),
    to_currency: c.toCurrency,
    rate: c.rate,
  };
}

export function conversionEventData(c: Conversion): Record<string, unknown> {
  return {
    conversion_id: c.id,
    quote: c.quoteId,
    ...conversionTermsWire(c),
    fee: formatAmount(c.feeMinor, c.fromCurrency),
  };
}

/** The organization's conversion account in a currency: the treasury's side of every mint and redeem. */
function conversionAccount(tx: Queryable, deps: Deps, organizationId: string, currency: Currency) {
  return ensureSystemAccount(tx, {
    id: deps.newId('ledgerAccount'),
    organizationId,
    kind: 'conversion',
    // Conversions never leave the platform.
    rail: 'internal',
    currency,
    now: deps.now(),
  });
}

/** The reads of a conversion outside the transaction: the organization's AML rules, through their cache. */
export async function prepareConversion(deps: Deps, organizationId: string): Promise<AmlRule[]> {
  return loadAmlRules(deps, organizationId);
}

/** A conversion executed, or refused by a decision that is recorded all the same (its evidence and alerts). */
export type ConversionOutcome = { conversion: Conversion } | { refused: AppError };

/** The quote to execute, locked for the rest of the transaction; a 409 once it was executed. */
async function lockOpenQuote(
  tx: Queryable,
  organizationId: string,
  quoteId: string,
): Promise<ConversionQuote> {
  const quote = await findConversionQuote(tx, organizationId, quoteId, { forUpdate: true });
  if (!quote) throw resourceMissing('conversion quote', quoteId, 'quote');
  if (quote.status === 'executed') {
    throw invalidStateTransition(
      'Quote already executed',
      `Quote ${quote.id} was executed as conversion ${quote.conversionId}; ask for a new quote.`,
      'quote',
    );
  }
  return quote;
}

/** A quote executes only before it expires: after, a 422 `quote_expired` and nothing written. */
function refuseExpired(quote: ConversionQuote, now: Date): void {
  if (now.getTime() < quote.expiresAt.getTime()) return;
  throw new AppError({
    status: 422,
    code: 'quote_expired',
    title: 'Quote expired',
    detail: `Quote ${quote.id} expired at ${quote.expiresAt.toISOString()}; ask for a new quote. Nothing was written.`,
    param: 'quote',
  });
}

/**
 * A quote is held to the rate in force when it is executed, not only when it was given: its credited amount
 * must be within the band of what the rate in force gives for its source amount (a quote taken before the
 * rate moved, or given at a rate since replaced, cannot pay out more than the band allows). A pair whose
 * rate was removed since is `rate_unavailable`; one too far from it `rate_out_of_band`. Nothing is written.
 */
function refuseOutOfBand(
  quote: ConversionQuote,
  inForce: StoredConversionRate | undefined,
  bandBps: number,
): void {
  if (!inForce) {
    throw new AppError({
      status: 422,
      code: 'rate_unavailable',
      title: 'No rate',
      detail: `The organization no longer has a rate from ${quote.fromCurrency} to ${quote.toCurrency}; quote ${quote.id} cannot be executed. Nothing was converted.`,
      param: 'quote',
    });
  }
  const reference = convertAmount(
    quote.fromAmountMinor,
    quote.fromCurrency,
    quote.toCurrency,
    parseConversionRate(inForce.rate, 'rate'),
  );
  if (amountWithinBand(quote.toAmountMinor, reference, bandBps)) return;
  throw new AppError({
    status: 422,
    code: 'rate_out_of_band',
    title: 'Quote out of band',
    detail: `Quote ${quote.id} credits ${formatAmount(quote.toAmountMinor, quote.toCurrency)} ${quote.toCurrency} at ${quote.rate}; the rate in force (${inForce.rate}) gives ${formatAmount(reference, quote.toCurrency)}, more than ${bandBps / 100} % away. Ask for a new quote; nothing was converted.`,
    param: 'quote',
  });
}

/** The system accounts a conversion moves: conversion accounts in both currencies, fee income when it has a fee. */
interface ConversionAccounts {
  fromAccount: string;
  toAccount: string;
  feeAccount: string | undefined;
}

/**
 * The conversion's accounts (created on first use) locked with both wallets in a posting session: in id
 * order, as the ledger writer locks them.
 */
async function lockConversionAccounts(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  quote: ConversionQuote,
): Promise<{ session: PostingSession; accounts: ConversionAccounts }> {
  const fromAccount = await conversionAccount(tx, deps, organizationId, quote.fromCurrency);
  const toAccount = await conversionAccount(tx, deps, organizationId, quote.toCurrency);
  const feeAccount =
    quote.feeMinor > 0n ? await feeIncomeAccount(deps, tx, organizationId, quote.fromCurrency) : undefined;
  const session = new PostingSession(tx);
  await session.lock([
    quote.fromWalletId,
    fromAccount,
    toAccount,
    quote.toWalletId,
    ...(feeAccount === undefined ? [] : [feeAccount]),
  ]);
  return { session, accounts: { fromAccount, toAccount, feeAccount } };
}

/**
 * Posts the conversion's two entries in the session (not yet written): the source currency's, where the
 * wallet pays the conversion account, and the destination currency's, where the conversion account pays
 * the wallet. A refusal of the posting rule is its 422, and nothing is written.
 */
function postConversionEntries(
  session: PostingSession,
  deps: Deps,
  organizationId: string,
  quote: ConversionQuote,
  { fromAccount, toAccount, feeAccount }: ConversionAccounts,
  now: Date,
): { debitEntryId: string; creditEntryId: string } {
  const entry = (postings: ReturnType<typeof directPostings>) =>
    directEntry(deps, organizationId, postings, now);
  // The fee rides in the source currency's entry: the wallet pays amount + fee, fee income receives the fee.
  const debit = entry(
    transferPostings(
      'posted',
      quote.fromWalletId,
      fromAccount,
      quote.fromAmountMinor,
      quote.fromCurrency,
      feeAccount === undefined ? undefined : { accountId: feeAccount, amountMinor: quote.feeMinor },
    ),
  );
  const credit = entry(directPostings(toAccount, quote.toWalletId, quote.toAmountMinor, quote.toCurrency));
  for (const e of [debit, credit]) {
    const refusal = session.tryPost(e);
    if (refusal) throw refusalError(refusal, 'conversion', 'quote');
  }
  return { debitEntryId: debit.id, creditEntryId: credit.id };
}

/** The conversion a quote became: the quote's amounts, rate and fee, and the two entries that moved them. */
function conversionOfQuote(
  quote: ConversionQuote,
  conversionId: string,
  entries: { debitEntryId: string; creditEntryId: string },
  createdBy: string | null,
  now: Date,
): Conversion {
  return {
    id: conversionId,
    organizationId: quote.organizationId,
    quoteId: quote.id,
    customerId: quote.customerId,
    fromWalletId: quote.fromWalletId,
    toWalletId: quote.toWalletId,
    direction: quote.direction,
    fromCurrency: quote.fromCurrency,
    toCurrency: quote.toCurrency,
    fromAmountMinor: quote.fromAmountMinor,
    toAmountMinor: quote.toAmountMinor,
    rate: quote.rate,
    rateVersionId: quote.rateVersionId,
    feeMinor: quote.feeMinor,
    feeScheduleVersion: quote.feeScheduleVersion,
    feeRule: quote.feeRule,
    debitEntryId: entries.debitEntryId,
    creditEntryId: entries.creditEntryId,
    createdBy,
    createdAt: now,
  };
}

/** Writes an accepted conversion: its row, its quote executed, its alerts, its evidence, `conversion.completed`. */
async function recordConversion(
  tx: Queryable,
  deps: Deps,
  conversion: Conversion,
  alerts: readonly AmlAlertDraft[],
  evidence: EvidenceDraft,
  now: Date,
): Promise<void> {
  await insertConversion(tx, conversion);
  await markQuoteExecuted(tx, conversion.quoteId, conversion.id);
  await openAmlAlerts(tx, deps, alerts, now);
  await appendEvidence(tx, deps, [evidence]);
  await recordEvent(tx, deps, now, {
    organizationId: conversion.organizationId,
    type: 'conversion.completed',
    resourceId: conversion.id,
    data: conversionEventData(conversion),
  });
}

/**
 * Executes a quote once, before it expires, in the caller's transaction: locks it, locks the wallets' and
 * system accounts (in id order, as the ledger writer does), then the customer's tier-limit sums, and decides
 * as for a transfer: the tier limits over the source amount (a 422 `limit_exceeded`, nothing written), the
 * AML rules over the source wallet's activity (a block, or a review a conversion cannot wait for, refuses
 * it with its evidence and alerts recorded), then the posting rule (the source wallet must be active with
 * amount + fee available; the destination must not be closed). An accepted conversion counts in the
 * customer's sums, writes both entries, the conversion, its decision's evidence, any alerts and
 * `conversion.completed`.
 */
export async function executeQuote(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  quoteId: string,
  createdBy: string | null,
  amlRules: readonly AmlRule[],
): Promise<ConversionOutcome> {
  await requireProduct(deps, organizationId, 'stablecoins', undefined, tx);
  const quote = await lockOpenQuote(tx, organizationId, quoteId);
  const now = deps.now();
  refuseExpired(quote, now);
  refuseOutOfBand(
    quote,
    await findConversionRate(tx, organizationId, quote.fromCurrency, quote.toCurrency),
    rateBandBps(deps),
  );
  const { session, accounts } = await lockConversionAccounts(tx, deps, organizationId, quote);

  // Tier limits: the amount converted out of the wallet counts as a transfer of it would.
  const limited = {
    transfer: { currency: quote.fromCurrency, amountMinor: quote.fromAmountMinor },
    sourceCustomerId: quote.customerId,
  };
  const limits = await LimitGuard.lock(tx, [limited], now);
  const overLimit = limits.check(limited, 'conversion', 'quote');
  if (overLimit) throw overLimit;

  const { rulesEvaluated, hits } = await screenConversion(tx, organizationId, quote, amlRules, now);
  const compliance = decideTransferCompliance({ rulesEvaluated, hits });
  const conversionId = deps.newId('conversion');
  const accepted = compliance.outcome === 'allow';
  const evidence = conversionDecisionEvidence(
    organizationId,
    quote,
    compliance,
    accepted ? conversionId : null,
    createdBy,
  );
  const alerts = conversionAlerts(organizationId, quote, compliance);
  if (!accepted) {
    // Refused: nothing moves, but the decision and the alerts of a review hit are kept.
    await openAmlAlerts(tx, deps, alerts, now);
    await appendEvidence(tx, deps, [evidence]);
    const rule = compliance.blockedBy ?? hits.find((h) => h.action === 'review');
    return { refused: conversionBlocked(rule?.ruleName, compliance.outcome === 'review') };
  }

  const entries = postConversionEntries(session, deps, organizationId, quote, accounts, now);
  limits.accepted(limited);
  await session.flush(now);
  await limits.save(tx);
  const conversion = conversionOfQuote(quote, conversionId, entries, createdBy, now);
  await recordConversion(tx, deps, conversion, alerts, evidence, now);
  return { conversion };
}

export const getConversion = getById<Conversion>(findConversion, 'conversion');

export const listOrganizationConversions = listPage(listConversions);
