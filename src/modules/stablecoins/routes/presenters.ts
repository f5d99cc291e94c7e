/** Stablecoins' records in their wire form (the schemas in schemas.ts). */

import type { Conversion, ConversionQuote } from '../../../domain/conversions.ts';
import { formatAmount } from '../../../domain/money.ts';
import type { Deposit, DepositAddress } from '../../../domain/stablecoins.ts';
import { isoOrNull } from '../../../http/presenters.ts';
import type { StoredConversionRate } from '../useCases/conversionRates.ts';
import { conversionTermsWire } from '../useCases/conversions.ts';
import { depositOnChainWire } from '../useCases/deposits.ts';

export function presentDepositAddress(a: DepositAddress) {
  return {
    object: 'deposit_address',
    id: a.id,
    wallet: a.walletId,
    asset: a.asset,
    network: a.network,
    address: a.address,
    created_at: a.createdAt.toISOString(),
  };
}

export function presentDeposit(d: Deposit) {
  return {
    object: 'deposit',
    id: d.id,
    wallet: d.walletId,
    deposit_address: d.depositAddressId,
    ...depositOnChainWire(d),
    chain_state: d.chainState,
    status: d.status,
    transfer: d.transferId,
    travel_rule:
      d.travelRuleEvidenceId === null
        ? null
        : {
            reference: d.travelRuleEvidenceId,
            required: d.travelRuleRequired === true,
            received: d.travelRuleReceived === true,
          },
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
    credited_at: isoOrNull(d.creditedAt),
    reorged_at: isoOrNull(d.reorgedAt),
    held_at: isoOrNull(d.heldAt),
    rejected_at: isoOrNull(d.rejectedAt),
  };
}

function conversionCommon(c: ConversionQuote | Conversion) {
  return {
    ...conversionTermsWire(c),
    rate_version: c.rateVersionId,
    fee: formatAmount(c.feeMinor, c.fromCurrency),
    total: formatAmount(c.fromAmountMinor + c.feeMinor, c.fromCurrency),
    fee_schedule: c.feeScheduleVersion === null ? null : { version: c.feeScheduleVersion, rule: c.feeRule },
    created_at: c.createdAt.toISOString(),
  };
}

export function presentQuote(q: ConversionQuote) {
  return {
    object: 'conversion_quote',
    id: q.id,
    status: q.status,
    conversion: q.conversionId,
    ...conversionCommon(q),
    expires_at: q.expiresAt.toISOString(),
  };
}

export function presentConversion(c: Conversion) {
  return {
    object: 'conversion',
    id: c.id,
    quote: c.quoteId,
    journal_entries: [c.debitEntryId, c.creditEntryId],
    ...conversionCommon(c),
  };
}

export function presentRates(rates: StoredConversionRate[]) {
  return {
    object: 'conversion_rates',
    data: rates.map((r) => ({
      from: r.from,
      to: r.to,
      rate: r.rate,
      version: r.versionId,
      updated_at: r.updatedAt.toISOString(),
    })),
  };
}
