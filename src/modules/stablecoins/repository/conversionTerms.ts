/**
 * The terms a quote fixes and its conversion carries: the columns conversion_quotes and conversions share,
 * read into both records and written as both inserts' parameters, in their column order.
 */
import type { Conversion, ConversionQuote } from '../../../domain/conversions.ts';
import type { Currency } from '../../../domain/money.ts';
import { column, type RowFields, stored, text } from '../../../store/repositories/rowMappers.ts';
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

/** How the quoted terms are read, from a quote's row or a conversion's. */
export const QUOTED_TERMS_FIELDS: RowFields<QuotedTerms> = {
  id: String,
  organizationId: String,
  customerId: String,
  fromWalletId: String,
  toWalletId: String,
  direction: stored,
  fromCurrency: column('from_currency', text<Currency>),
  toCurrency: column('to_currency', text<Currency>),
  fromAmountMinor: toBigInt,
  toAmountMinor: toBigInt,
  rate: String,
  feeMinor: toBigInt,
  feeScheduleVersion: nullableNumber,
  feeRule: nullableText,
  rateVersionId: nullableText,
  createdAt: toDate,
};

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
