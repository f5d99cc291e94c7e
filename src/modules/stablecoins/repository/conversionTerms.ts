/**
 * The terms a quote fixes and its conversion carries: the columns conversion_quotes and conversions share,
 * read into both records and written as both inserts' parameters, in their column order.
 */
import type { Conversion, ConversionDirection, ConversionQuote } from '../../../domain/conversions.ts';
import type { Currency } from '../../../domain/money.ts';
import { nullableNumber, nullableText, toBigInt, toDate } from '../../../store/repositories/rows.ts';

export type QuotedTerms = Pick<
  ConversionQuote & Conversion,
  | 'id'
  | 'organizationId'
  | 'customerId'
  | 'fromWalletId'
  | 'toWalletId'
  | 'direction'
  | 'fromCurrency'
  | 'toCurrency'
  | 'fromAmountMinor'
  | 'toAmountMinor'
  | 'rate'
  | 'feeMinor'
  | 'feeScheduleVersion'
  | 'feeRule'
  | 'rateVersionId'
  | 'createdAt'
>;

export function quotedTermsFromRow(row: Record<string, unknown>): QuotedTerms {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    customerId: String(row.customer_id),
    fromWalletId: String(row.from_wallet_id),
    toWalletId: String(row.to_wallet_id),
    direction: row.direction as ConversionDirection,
    fromCurrency: String(row.from_currency) as Currency,
    toCurrency: String(row.to_currency) as Currency,
    fromAmountMinor: toBigInt(row.from_amount_minor),
    toAmountMinor: toBigInt(row.to_amount_minor),
    rate: String(row.rate),
    feeMinor: toBigInt(row.fee_minor),
    feeScheduleVersion: nullableNumber(row.fee_schedule_version),
    feeRule: nullableText(row.fee_rule),
    rateVersionId: nullableText(row.rate_version_id),
    createdAt: toDate(row.created_at),
  };
}

/** customer_id … fee_minor: the run of columns both inserts give in this order. */
export function quotedAmountParams(t: QuotedTerms): unknown[] {
  return [
    t.customerId,
    t.fromWalletId,
    t.toWalletId,
    t.direction,
    t.fromCurrency,
    t.toCurrency,
    t.fromAmountMinor.toString(),
    t.toAmountMinor.toString(),
    t.rate,
    t.feeMinor.toString(),
  ];
}

/** fee_schedule_version, fee_rule, rate_version_id: what decided the fee and the rate, both inserts' last columns. */
export function pricingSourceParams(t: QuotedTerms): unknown[] {
  return [t.feeScheduleVersion, t.feeRule, t.rateVersionId];
}
