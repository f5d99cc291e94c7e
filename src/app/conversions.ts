/**
 * Mint and redeem: converting between a customer's fiat wallet and their stablecoin wallet at a quoted
 * rate. Rates are data per organization (an operator's table; the sandbox starts with defaults). A quote
 * fixes the rate, both amounts and the fee (from the organization's fee schedule, rule rail `conversion`)
 * for CONVERSION_QUOTE_TTL_MS; executing it posts, in one transaction through the posting module, two
 * journal entries, one per currency and each balanced: the source wallet pays the organization's
 * conversion account in its currency (and the fee to fee income, in the same entry), and the conversion
 * account in the other currency pays the destination wallet. The quote is locked while it is executed, so
 * it converts once.
 *
 * A conversion is money the customer sends out of a wallet, so the tier limits and the AML rules decide it
 * as they decide a transfer: with the same pure decisions, over the customer's day and month sums and the
 * wallet's activity read after its account is locked, the sums locked after the accounts as the ledger
 * writer locks them. So transfers and conversions racing on one wallet or one customer's limit are decided
 * one after the other.
 *
 * Past 400 lines: rates (versions, band, approval split), quotes and execution share the rate rules and
 * the posting steps; rates are the next piece to move out.
 */

import { countedTally, NO_MOVEMENTS, tallyKey, windowRange } from '../domain/activityTally.ts';
import {
  amountWithinBand,
  CONVERSION_QUOTE_TTL_MS,
  CONVERSION_RATE_BAND_BPS_DEFAULT,
  CONVERSION_RATES_MAX,
  type Conversion,
  type ConversionQuote,
  type ConversionRateEntry,
  conversionDirection,
  convertAmount,
  decideRateChange,
  parseConversionRate,
  type RateChangeDecision,
  rateChangesRequiringApproval,
  roundTripGain,
  SANDBOX_DEFAULT_CONVERSION_RATES,
} from '../domain/conversions.ts';
import {
  AML_HISTORY_TRANSFERS_MAX,
  type AmlRule,
  amlHistoryWindowSeconds,
  amlTallySpecs,
  applicableRules,
  evaluateAmlRules,
} from '../domain/decisions/aml.ts';
import type { ApprovalRequirement } from '../domain/decisions/policies.ts';
import { decideTransferCompliance } from '../domain/decisions/transferCompliance.ts';
import { formatRate } from '../domain/decisions/travelRule.ts';
import { isDigitalAsset } from '../domain/digitalAssets.ts';
import { AppError, resourceMissing, validationError } from '../domain/errors.ts';
import type { EvidenceActor, EvidenceDraft } from '../domain/evidence.ts';
import { decideFee, FEE_CONVERSION_RAIL, type FeeSchedule } from '../domain/fees.ts';
import { isId } from '../domain/ids.ts';
import { type Currency, checkSingleAmount, formatAmount, isCurrency, parseAmount } from '../domain/money.ts';
import { type Page, type PageRequest, toPage } from '../domain/pagination.ts';
import {
  directPostings,
  ensureSystemAccount,
  guardMovementSource,
  PostingSession,
  refusalError,
  transferPostings,
} from '../modules/ledger/index.ts';
import {
  findConversionQuote,
  insertConversionQuote,
  markQuoteExecuted,
} from '../store/repositories/conversionQuotes.ts';
import {
  type ConversionRateVersion,
  findConversionRate,
  insertConversionRatesIfNone,
  insertConversionRateVersions,
  listConversionRates,
  pairsWithRateHistory,
  replaceConversionRates,
  type StoredConversionRate,
} from '../store/repositories/conversionRates.ts';
import { findConversion, insertConversion, listConversions } from '../store/repositories/conversions.ts';
import { readWalletActivity, tallyWalletActivity } from '../store/repositories/walletActivity.ts';
import { findWallets } from '../store/repositories/wallets.ts';
import type { Queryable } from '../store/store.ts';
import { openAmlAlerts } from './aml/alerts.ts';
import { loadAmlRules } from './aml/rules.ts';
import type { Deps } from './deps.ts';
import { newEvent, recordEvents } from './events.ts';
import { appendEvidence, SYSTEM_ACTOR } from './evidence.ts';
import { feeIncomeAccount, loadFeeSchedule } from './fees.ts';
import { LimitGuard } from './posting/limitGuard.ts';
import { requireProduct } from './products.ts';

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { StoredConversionRate } from '../store/repositories/conversionRates.ts';

const isAsset = (c: Currency) => isDigitalAsset(c);

/** The band rates and quotes are held to: MKOBA_CONVERSION_RATE_BAND_BPS, 5 % by default. */
export function rateBandBps(deps: Deps): number {
  return deps.conversionRateBandBps ?? CONVERSION_RATE_BAND_BPS_DEFAULT;
}

/** Writes the sandbox's default rates (each a version, basis `defaults`) in the caller's transaction if the organization has none yet. */
async function ensureDefaultRates(tx: Queryable, deps: Deps, organizationId: string): Promise<void> {
  if (deps.environment !== 'sandbox') return;
  const written = await insertConversionRatesIfNone(
    tx,
    organizationId,
    SANDBOX_DEFAULT_CONVERSION_RATES.map((r) => ({ ...r, id: deps.newId('conversionRateVersion') })),
    deps.now(),
  );
  if (!written) return;
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'conversion.rates.update',
      actor: SYSTEM_ACTOR,
      data: { change: 'defaults', after: SANDBOX_DEFAULT_CONVERSION_RATES.map((r) => ({ ...r })) },
    },
  ]);
}

export async function getConversionRates(
  deps: Deps,
  organizationId: string,
): Promise<StoredConversionRate[]> {
  const rates = await listConversionRates(deps.store, organizationId);
  if (rates.length > 0 || deps.environment !== 'sandbox') return rates;
  await deps.store.transaction((tx) => ensureDefaultRates(tx, deps, organizationId));
  return listConversionRates(deps.store, organizationId);
}

/**
 * A proposed replacement of the organization's rates, checked and decided against the rates in force (read
 * locked): each pair's decision (`decideRateChange`) and which of them need a second member's approval
 * (`requiringApproval`). Applying it (`applyRateChange`) writes it; nothing is written before.
 */
export interface RateChangePlan {
  organizationId: string;
  rates: ConversionRateEntry[];
  before: StoredConversionRate[];
  decisions: RateChangeDecision[];
  requiringApproval: RateChangeDecision[];
  bandBps: number;
}

/**
 * Checks a replacement of the rates (each a pair of a fiat currency and a stablecoin, either way round,
 * with a positive decimal rate of at most 12 decimals, no pair twice) and decides each pair's change
 * against the rate in force, the band, and whether the pair ever had a rate. Locks the rates in force.
 */
export async function planRateChange(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: { rates: { from: string; to: string; rate: string }[] },
): Promise<RateChangePlan> {
  if (input.rates.length > CONVERSION_RATES_MAX) {
    throw validationError('rates', `rates may have at most ${CONVERSION_RATES_MAX} entries`, 'too_many');
  }
  const seen = new Set<string>();
  const parsed = input.rates.map((entry, i) => {
    const at = (field: string) => `rates[${i}].${field}`;
    for (const field of ['from', 'to'] as const) {
      if (!isCurrency(entry[field]))
        throw validationError(at(field), `${at(field)} is not a supported currency`, 'invalid_value');
    }
    const from = entry.from as Currency;
    const to = entry.to as Currency;
    if (!conversionDirection(from, to, isAsset)) {
      throw validationError(
        at('to'),
        `${at('to')}: a rate converts between a fiat currency and a stablecoin (USDC, USDT), one each`,
        'unsupported_conversion',
      );
    }
    if (seen.has(`${from}/${to}`))
      throw validationError(at('from'), `${from} to ${to} is given twice`, 'duplicate_key');
    seen.add(`${from}/${to}`);
    return { from, to, rate: parseConversionRate(entry.rate, at('rate')) };
  });
  const gain = roundTripGain(parsed);
  if (gain) {
    const param = `rates[${gain.index}].rate`;
    throw validationError(
      param,
      `${param}: ${gain.from} to ${gain.to} and back would return more than was sent (the two rates multiply to more than 1)`,
      'round_trip_gain',
    );
  }
  await ensureDefaultRates(tx, deps, organizationId);
  const before = await listConversionRates(tx, organizationId, { forUpdate: true });
  const inForce = new Map(before.map((r) => [`${r.from}/${r.to}`, r]));
  const bandBps = rateBandBps(deps);
  const decisions = parsed.map((p) => {
    const current = inForce.get(`${p.from}/${p.to}`);
    return decideRateChange(p, current && parseConversionRate(current.rate, 'rate'), p.rate, bandBps);
  });
  const firsts = decisions.filter((d) => d.reason === 'no_previous_rate');
  const history = await pairsWithRateHistory(tx, organizationId, firsts);
  const requiringApproval = rateChangesRequiringApproval(decisions, {
    sandbox: deps.environment === 'sandbox',
    hadRate: (pair) => history.has(`${pair.from}/${pair.to}`),
  });
  return {
    organizationId,
    rates: parsed.map((p) => ({ from: p.from, to: p.to, rate: formatRate(p.rate) })),
    before,
    decisions,
    requiringApproval,
    bandBps,
  };
}

/** The 409 a change gets while it needs a second member's approval and no approval has passed. */
export function rateChangeRequiresApproval(plan: RateChangePlan): AppError {
  const what = plan.requiringApproval
    .map((d) =>
      d.previous === null
        ? `${d.from} to ${d.to} has no rate in force to bound ${d.next}`
        : `${d.from} to ${d.to} from ${d.previous} to ${d.next} moves more than ${plan.bandBps / 100} % (${plan.bandBps} basis points)`,
    )
    .join('; ');
  return new AppError({
    status: 409,
    code: 'rate_change_requires_approval',
    title: 'Rate change needs approval',
    detail: `This rate change needs a second member's approval: ${what}. Nothing was changed.`,
    param: 'rate',
  });
}

/** Who set a rate, as its version names them: the member, else the API key or console session, else `system`. */
function setByOf(actor: EvidenceActor): string {
  if (actor.type === 'system') return 'system';
  return actor.member ?? actor.id;
}

/**
 * Writes a planned change: a new version for every pair whose rate changed (its previous rate, who set it
 * and why it applied: `within_band`, `sandbox_first_rate`, or `approved` when a second member approved
 * it), the table replaced with each pair naming its version, and the evidence. Called at once for a change
 * that needs no approval, and once an approval passes for one that did.
 */
export async function applyRateChange(
  tx: Queryable,
  deps: Deps,
  plan: RateChangePlan,
  actor: EvidenceActor,
  options: { approved?: boolean } = {},
): Promise<StoredConversionRate[]> {
  const { organizationId } = plan;
  const now = deps.now();
  const inForce = new Map(plan.before.map((r) => [`${r.from}/${r.to}`, r]));
  const versions: ConversionRateVersion[] = [];
  const rates = plan.rates.map((r, i) => {
    const decision = plan.decisions[i] as RateChangeDecision;
    const current = inForce.get(`${r.from}/${r.to}`);
    if (decision.reason === 'unchanged') return { ...r, versionId: current?.versionId ?? null };
    const version: ConversionRateVersion = {
      id: deps.newId('conversionRateVersion'),
      organizationId,
      from: r.from,
      to: r.to,
      rate: r.rate,
      previousRate: decision.previous,
      basis: options.approved
        ? 'approved'
        : decision.reason === 'no_previous_rate'
          ? 'sandbox_first_rate'
          : 'within_band',
      setBy: setByOf(actor),
      createdAt: now,
    };
    versions.push(version);
    return { ...r, versionId: version.id };
  });
  await insertConversionRateVersions(tx, versions);
  await replaceConversionRates(tx, organizationId, rates, now);
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'conversion.rates.update',
      actor,
      data: {
        change: 'replace',
        band_bps: plan.bandBps,
        before: plan.before.map((r) => ({ from: r.from, to: r.to, rate: r.rate, version: r.versionId })),
        after: rates.map((r) => ({ from: r.from, to: r.to, rate: r.rate, version: r.versionId })),
        versions: versions.map((v) => ({
          id: v.id,
          from: v.from,
          to: v.to,
          rate: v.rate,
          previous_rate: v.previousRate,
          basis: v.basis,
          set_by: v.setBy,
        })),
      },
    },
  ]);
  return listConversionRates(tx, organizationId);
}

/**
 * Replaces the organization's rates whole (`PUT /v1/conversion-rates`): planned, then applied at once when
 * no pair needs approval; otherwise a 409 `rate_change_requires_approval` and nothing written. Removing a
 * pair needs no approval (it stops quotes, it cannot create money).
 */
/**
 * The rule an approval of a rate change names when it was the band (not the organization's policy) that
 * asked for it: a second member with the `admin` or `compliance` role, within a day.
 */
export const RATE_BAND_RULE_ID = 'conversion_rate_band';
export const RATE_BAND_APPROVAL: ApprovalRequirement = {
  quorum: 1,
  roles: ['admin', 'compliance'],
  distinctRoles: false,
  expiresInSeconds: 86_400,
};

export async function putConversionRates(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: { rates: { from: string; to: string; rate: string }[] },
  actor: EvidenceActor,
): Promise<StoredConversionRate[]> {
  const plan = await planRateChange(tx, deps, organizationId, input);
  if (plan.requiringApproval.length > 0) throw rateChangeRequiresApproval(plan);
  return applyRateChange(tx, deps, plan, actor);
}

export interface QuoteInput {
  from_wallet: string;
  to_wallet: string;
  amount: string | number;
}

/**
 * The reads of a quote outside the transaction: the organization's rates (the sandbox defaults written on
 * first use), and its fee schedule through the per-process cache new transfers read.
 */
export async function prepareQuote(deps: Deps, organizationId: string): Promise<FeeSchedule> {
  await getConversionRates(deps, organizationId);
  return loadFeeSchedule(deps, organizationId);
}

/**
 * A quote: both wallets the same customer's, one fiat and one stablecoin; the amount to convert (in the
 * source wallet's currency); the organization's rate for the pair; the amount credited, rounded down to
 * the minor unit; the fee the schedule's `conversion` rule for the source currency charges on top, if
 * any. Valid for CONVERSION_QUOTE_TTL_MS.
 */
export async function createQuote(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: QuoteInput,
  fees: Pick<FeeSchedule, 'version' | 'rules'>,
  amountText?: string,
): Promise<ConversionQuote> {
  await requireProduct(deps, organizationId, 'stablecoins', undefined, tx);
  for (const field of ['from_wallet', 'to_wallet'] as const) {
    if (!isId('wallet', input[field]))
      throw validationError(field, `${field} must be a wallet id (wallet_…)`, 'invalid_format');
  }
  if (input.from_wallet === input.to_wallet) {
    throw validationError('to_wallet', 'to_wallet must be another wallet than from_wallet', 'same_as_source');
  }
  const wallets = await findWallets(tx, organizationId, [input.from_wallet, input.to_wallet]);
  const from = wallets.get(input.from_wallet);
  if (!from) throw resourceMissing('wallet', input.from_wallet, 'from_wallet');
  await guardMovementSource(deps, tx, from.id, 'from_wallet');
  const to = wallets.get(input.to_wallet);
  if (!to) throw resourceMissing('wallet', input.to_wallet, 'to_wallet');
  if (from.ownerId !== to.ownerId) {
    throw validationError('to_wallet', 'both wallets must belong to the same customer', 'customer_mismatch');
  }
  const direction = conversionDirection(from.currency, to.currency, isAsset);
  if (!direction) {
    throw validationError(
      'to_wallet',
      `${from.currency} to ${to.currency} is not a conversion: one wallet must hold a fiat currency and the other USDC or USDT`,
      'unsupported_conversion',
    );
  }
  const fromAmountMinor = checkSingleAmount(
    parseAmount(input.amount, from.currency, 'amount', amountText),
    from.currency,
  );
  const stored = await findConversionRate(tx, organizationId, from.currency, to.currency);
  if (!stored) {
    throw new AppError({
      status: 422,
      code: 'rate_unavailable',
      title: 'No rate',
      detail: `The organization has no rate from ${from.currency} to ${to.currency}; an operator sets rates with PUT /v1/conversion-rates.`,
      param: 'to_wallet',
    });
  }
  const rate = parseConversionRate(stored.rate, 'rate');
  const toAmountMinor = convertAmount(fromAmountMinor, from.currency, to.currency, rate);
  if (toAmountMinor <= 0n) {
    throw validationError(
      'amount',
      `amount is too small: at ${stored.rate} it converts to less than one minor unit of ${to.currency}`,
      'too_small',
    );
  }
  checkSingleAmount(toAmountMinor, to.currency, 'amount');
  const fee = decideFee(fees, {
    rail: FEE_CONVERSION_RAIL,
    currency: from.currency,
    amountMinor: fromAmountMinor,
  });
  const now = deps.now();
  const quote: ConversionQuote = {
    id: deps.newId('conversionQuote'),
    organizationId,
    customerId: from.ownerId,
    fromWalletId: from.id,
    toWalletId: to.id,
    direction,
    fromCurrency: from.currency,
    toCurrency: to.currency,
    fromAmountMinor,
    toAmountMinor,
    rate: formatRate(rate),
    rateVersionId: stored.versionId,
    feeMinor: fee.feeMinor,
    feeScheduleVersion: fee.scheduleVersion,
    feeRule: fee.rule,
    status: 'open',
    conversionId: null,
    createdAt: now,
    expiresAt: new Date(now.getTime() + CONVERSION_QUOTE_TTL_MS),
  };
  await insertConversionQuote(tx, quote);
  return quote;
}

export function conversionEventData(c: Conversion): Record<string, unknown> {
  return {
    conversion_id: c.id,
    quote: c.quoteId,
    direction: c.direction,
    from_wallet: c.fromWalletId,
    to_wallet: c.toWalletId,
    from_amount: formatAmount(c.fromAmountMinor, c.fromCurrency),
    from_currency: c.fromCurrency,
    to_amount: formatAmount(c.toAmountMinor, c.toCurrency),
    to_currency: c.toCurrency,
    rate: c.rate,
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

function conversionBlocked(ruleName: string | undefined, review: boolean): AppError {
  return new AppError({
    status: 422,
    code: 'compliance_blocked',
    title: 'Blocked by compliance',
    detail: review
      ? `This conversion was refused: the organization's AML rule${ruleName ? ` '${ruleName}'` : ''} asks for a review, and a conversion executes its quote at once (its rate holds for ${CONVERSION_QUOTE_TTL_MS / 1000} s), so it cannot wait for one; an alert was opened. Nothing was converted. Contact your compliance team.`
      : `This conversion was blocked by the organization's AML rule${ruleName ? ` '${ruleName}'` : ''}; nothing was converted. Contact your compliance team.`,
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
  const quote = await findConversionQuote(tx, organizationId, quoteId, { forUpdate: true });
  if (!quote) throw resourceMissing('conversion quote', quoteId, 'quote');
  if (quote.status === 'executed') {
    throw new AppError({
      status: 409,
      code: 'invalid_state_transition',
      title: 'Quote already executed',
      detail: `Quote ${quote.id} was executed as conversion ${quote.conversionId}; ask for a new quote.`,
      param: 'quote',
    });
  }
  const now = deps.now();
  if (now.getTime() >= quote.expiresAt.getTime()) {
    throw new AppError({
      status: 422,
      code: 'quote_expired',
      title: 'Quote expired',
      detail: `Quote ${quote.id} expired at ${quote.expiresAt.toISOString()}; ask for a new quote. Nothing was written.`,
      param: 'quote',
    });
  }
  refuseOutOfBand(
    quote,
    await findConversionRate(tx, organizationId, quote.fromCurrency, quote.toCurrency),
    rateBandBps(deps),
  );
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

  // Tier limits: the amount converted out of the wallet counts as a transfer of it would.
  const limited = {
    transfer: { currency: quote.fromCurrency, amountMinor: quote.fromAmountMinor },
    sourceCustomerId: quote.customerId,
  };
  const limits = await LimitGuard.lock(tx, [limited], now);
  const overLimit = limits.check(limited, 'conversion', 'quote');
  if (overLimit) throw overLimit;

  // AML: the source wallet's activity read with its account locked. The destination is the customer's own
  // wallet, never a new counterparty.
  const rules = applicableRules(amlRules, quote.fromCurrency);
  let rulesEvaluated: { id: string; version: number }[] = [];
  let hits: ReturnType<typeof evaluateAmlRules> = [];
  if (rules.length > 0) {
    const [activity] = await readWalletActivity(
      tx,
      organizationId,
      [{ walletId: quote.fromWalletId, destination: { type: 'wallet', wallet: quote.toWalletId } }],
      new Date(now.getTime() - amlHistoryWindowSeconds(rules) * 1_000),
      AML_HISTORY_TRANSFERS_MAX,
    );
    // A wallet busier than the lists hold has its windows counted instead.
    const specs = amlTallySpecs(rules);
    const counted =
      activity && !activity.complete
        ? await tallyWalletActivity(
            tx,
            organizationId,
            specs.map((spec) => ({ walletId: quote.fromWalletId, spec, ...windowRange(spec, now) })),
          )
        : undefined;
    const unlisted = counted && new Map(specs.map((spec, i) => [tallyKey(spec), counted[i] ?? NO_MOVEMENTS]));
    rulesEvaluated = rules.map((r) => ({ id: r.id, version: r.version }));
    hits = evaluateAmlRules(rules, {
      amountMinor: quote.fromAmountMinor,
      currency: quote.fromCurrency,
      at: now,
      recentOutgoing: unlisted ? [] : (activity?.outgoing ?? []),
      recentIncoming: unlisted ? [] : (activity?.incoming ?? []),
      unlisted: unlisted && ((spec) => countedTally(unlisted, spec)),
      counterpartyKnown: true,
    });
  }
  const compliance = decideTransferCompliance({ rulesEvaluated, hits });
  const conversionId = deps.newId('conversion');
  const accepted = compliance.outcome === 'allow';
  const evidence: EvidenceDraft = {
    organizationId,
    kind: 'conversion.decision',
    actor: SYSTEM_ACTOR,
    walletId: quote.fromWalletId,
    customerId: quote.customerId,
    data: {
      ...compliance.evidence,
      conversion_id: accepted ? conversionId : null,
      quote_id: quote.id,
      direction: quote.direction,
      from_wallet: quote.fromWalletId,
      to_wallet: quote.toWalletId,
      amount: formatAmount(quote.fromAmountMinor, quote.fromCurrency),
      currency: quote.fromCurrency,
      fee: formatAmount(quote.feeMinor, quote.fromCurrency),
      fee_schedule_version: quote.feeScheduleVersion,
      fee_rule: quote.feeRule,
      created_by: createdBy,
    },
  };
  const alerts = compliance.alerts.map((hit) => ({
    organizationId,
    conversionQuoteId: quote.id,
    walletId: quote.fromWalletId,
    customerId: quote.customerId,
    hit,
  }));
  if (!accepted) {
    // Refused: nothing moves, but the decision and the alerts of a review hit are kept.
    await openAmlAlerts(tx, deps, alerts, now);
    await appendEvidence(tx, deps, [evidence]);
    const rule = compliance.blockedBy ?? hits.find((h) => h.action === 'review');
    return { refused: conversionBlocked(rule?.ruleName, compliance.outcome === 'review') };
  }

  const entry = (postings: ReturnType<typeof directPostings>) => ({
    id: deps.newId('journalEntry'),
    organizationId,
    transferId: null,
    kind: 'direct' as const,
    holdEntryId: null,
    createdAt: now,
    postings,
  });
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
  limits.accepted(limited);
  await session.flush(now);
  await limits.save(tx);
  const conversion: Conversion = {
    id: conversionId,
    organizationId,
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
    debitEntryId: debit.id,
    creditEntryId: credit.id,
    createdBy,
    createdAt: now,
  };
  await insertConversion(tx, conversion);
  await markQuoteExecuted(tx, quote.id, conversion.id);
  await openAmlAlerts(tx, deps, alerts, now);
  await appendEvidence(tx, deps, [evidence]);
  await recordEvents(tx, deps, [
    newEvent(
      deps,
      {
        organizationId,
        type: 'conversion.completed',
        resourceId: conversion.id,
        data: conversionEventData(conversion),
      },
      now,
    ),
  ]);
  return { conversion };
}

export async function getConversion(deps: Deps, organizationId: string, id: string): Promise<Conversion> {
  const conversion = await findConversion(deps.store, organizationId, id);
  if (!conversion) throw resourceMissing('conversion', id);
  return conversion;
}

export async function getQuote(deps: Deps, organizationId: string, id: string): Promise<ConversionQuote> {
  const quote = await findConversionQuote(deps.store, organizationId, id);
  if (!quote) throw resourceMissing('conversion quote', id);
  return quote;
}

export async function listOrganizationConversions(
  deps: Deps,
  organizationId: string,
  request: PageRequest,
): Promise<Page<Conversion>> {
  return toPage(await listConversions(deps.store, organizationId, request, request.limit + 1), request.limit);
}
