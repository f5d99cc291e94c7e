/** Safeguarding's records in their wire form: every amount a decimal string in its currency. */

import { formatAmount } from '../../../../domain/money.ts';
import type { SafeguardingBalance, TrustAccount } from '../../domain/safeguarding.ts';
import type { SafeguardingSweep } from '../../domain/trustLedger.ts';
import type { SafeguardingReport } from '../../useCases/safeguarding.ts';
import { sweepEventData } from '../../useCases/trustLedger.ts';

export function presentTrustAccount(a: TrustAccount) {
  return {
    object: 'trust_account',
    id: a.id,
    currency: a.currency,
    type: a.type,
    bank: a.bank,
    account_reference: a.accountReference,
    status: a.status,
    active_from: a.activeFrom,
    closed_on: a.closedOn,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}

export function presentSafeguardingBalance(b: SafeguardingBalance) {
  return {
    object: 'safeguarding_balance',
    id: b.id,
    trust_account: b.trustAccountId,
    currency: b.currency,
    date: b.date,
    closing_balance: formatAmount(b.closingBalanceMinor, b.currency),
    status: b.status,
    replaces: b.replacesId,
    note: b.note,
    created_by: b.createdBy,
    created_at: b.createdAt.toISOString(),
    source: b.source
      ? {
          type: 'custodian' as const,
          rail_partner: b.source.configId,
          balance_query: b.source.queryId,
          read_at: b.source.readAt.toISOString(),
        }
      : { type: 'statement' as const, rail_partner: null, balance_query: null, read_at: null },
  };
}

export function presentSafeguardingReport(r: SafeguardingReport) {
  const amount = (v: bigint | null) => (v === null ? null : formatAmount(v, r.currency));
  return {
    object: 'safeguarding_report',
    id: r.id,
    currency: r.currency,
    date: r.date,
    status: r.status,
    customer_money: formatAmount(r.customerMoneyMinor, r.currency),
    trust_balance: amount(r.trustBalanceMinor),
    difference: amount(r.differenceMinor),
    trust_balances: r.trustBalances.map((b) => ({
      trust_account: b.trustAccountId,
      balance: b.balanceId,
      closing_balance: amount(b.closingBalanceMinor),
    })),
    ledger_trust_balance: amount(r.ledgerTrustBalanceMinor),
    ledger_difference: amount(r.ledgerDifferenceMinor),
    exception: r.exceptionId,
    mismatch_exception: r.mismatchExceptionId,
    as_of: r.asOf.toISOString(),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

export function presentSafeguardingSweep(s: SafeguardingSweep) {
  const { sweep_id, ...fields } = sweepEventData(s);
  return {
    object: 'safeguarding_sweep',
    id: sweep_id,
    ...fields,
    created_by: s.createdBy,
    created_at: s.createdAt.toISOString(),
  };
}
