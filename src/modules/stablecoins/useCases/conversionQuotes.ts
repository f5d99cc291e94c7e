/**
 * Conversion quotes: a customer's fiat wallet and stablecoin wallet, an amount, and what it converts to at
 * the organization's rate in force, with the fee from its fee schedule (rule rail `conversion`), all fixed
 * for CONVERSION_QUOTE_TTL_MS. Executing a quote is conversions.ts.
 */

import type { Deps } from '../../../app/deps.ts';
import { requireProduct } from '../../../app/products.ts';
import { getById } from '../../../app/reads.ts';
import {
  CONVERSION_QUOTE_TTL_MS,
  type ConversionDirection,
  type ConversionQuote,
  type ConversionRate,
  conversionDirection,
  convertAmount,
  parseConversionRate,
} from '../../../domain/conversions.ts';
import { isDigitalAsset } from '../../../domain/digitalAssets.ts';
import { AppError, resourceMissing, validationError } from '../../../domain/errors.ts';
import { isId } from '../../../domain/ids.ts';
import { type Currency, checkSingleAmount, parseAmount } from '../../../domain/money.ts';
import { formatRate } from '../../../domain/rates.ts';
import type { Wallet } from '../../../domain/wallets.ts';
import type { Queryable } from '../../../store/store.ts';
import { decideFee, FEE_CONVERSION_RAIL, type FeeSchedule, loadFeeSchedule } from '../../fees/index.ts';
import { guardMovementSource } from '../../ledger/index.ts';
import { findWallets } from '../../wallets/index.ts';
import { findConversionQuote, insertConversionQuote } from '../repository/conversionQuotes.ts';
import { findConversionRate, type StoredConversionRate } from '../repository/conversionRates.ts';
import { getConversionRates } from './conversionRates.ts';

const isAsset = (c: Currency) => isDigitalAsset(c);

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
 * The quote's two wallets: ids well formed and different, both found and the same customer's, one fiat and
 * one stablecoin (which way round is the direction), and the source one that may send.
 */
async function quoteWallets(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: QuoteInput,
): Promise<{ from: Wallet; to: Wallet; direction: ConversionDirection }> {
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
  return { from, to, direction };
}

/** The organization's rate in force for the pair, or a 422 `rate_unavailable`. */
async function rateInForce(
  tx: Queryable,
  organizationId: string,
  from: Currency,
  to: Currency,
): Promise<StoredConversionRate> {
  const stored = await findConversionRate(tx, organizationId, from, to);
  if (!stored) {
    throw new AppError({
      status: 422,
      code: 'rate_unavailable',
      title: 'No rate',
      detail: `The organization has no rate from ${from} to ${to}; an operator sets rates with PUT /v1/conversion-rates.`,
      param: 'to_wallet',
    });
  }
  return stored;
}

/** What the amount converts to at the stored rate: rounded down, at least one minor unit, a single amount. */
function convertedAmount(
  fromAmountMinor: bigint,
  from: Currency,
  to: Currency,
  stored: StoredConversionRate,
): { rate: ConversionRate; toAmountMinor: bigint } {
  const rate = parseConversionRate(stored.rate, 'rate');
  const toAmountMinor = convertAmount(fromAmountMinor, from, to, rate);
  if (toAmountMinor <= 0n) {
    throw validationError(
      'amount',
      `amount is too small: at ${stored.rate} it converts to less than one minor unit of ${to}`,
      'too_small',
    );
  }
  checkSingleAmount(toAmountMinor, to, 'amount');
  return { rate, toAmountMinor };
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
  const { from, to, direction } = await quoteWallets(tx, deps, organizationId, input);
  const fromAmountMinor = checkSingleAmount(
    parseAmount(input.amount, from.currency, 'amount', amountText),
    from.currency,
  );
  const stored = await rateInForce(tx, organizationId, from.currency, to.currency);
  const { rate, toAmountMinor } = convertedAmount(fromAmountMinor, from.currency, to.currency, stored);
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

export const getQuote = getById<ConversionQuote>(findConversionQuote, 'conversion quote');
