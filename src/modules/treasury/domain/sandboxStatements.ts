/**
 * The sandbox rails' settlement statements, generated on demand from the payouts they carried (whatever the
 * ledger has matched since; nothing refused before it reached the partner), with deliberate mismatches when
 * asked, so every reconciliation path can be exercised. A transfer the rail left processing (the time-out
 * number) is reported settled, as a real rail's statement would settle it, and so is one returned later (the
 * rail paid it; the return came back separately).
 */

import { type Currency, formatAmount } from '../../../domain/money.ts';
import type { MatchCandidate, StatementDirection } from './reconciliation.ts';

export const SANDBOX_STATEMENT_MISMATCHES = [
  'amount',
  'fee',
  'status',
  'omit',
  'unknown',
  'no_reference',
] as const;
export type SandboxStatementMismatch = (typeof SANDBOX_STATEMENT_MISMATCHES)[number];

export interface SandboxStatementLine {
  rail_reference: string | null;
  /** `outbound` for a payout, `inbound` for a collection's money in. */
  direction: StatementDirection;
  /** Our id as a partner would echo it (the collection's for money in); not part of our own lines. */
  external_reference?: string | null;
  amount: string;
  currency: string;
  value_date: string;
  status: 'settled' | 'failed';
  fees: string;
}

/**
 * A line per transfer (a payout, or a collection's money in), in id order; each mismatch asked for applies to the next transfer in turn: `amount`
 * reports one minor unit more, `fee` a fee of 1.00 (one minor unit in a zero-exponent currency), `status` a
 * settled transfer as failed, `omit` leaves it out, `no_reference` drops its reference (matched by amount and
 * date instead), and `unknown` adds a line for a payout the ledger never made.
 */
export function sandboxStatementLines(
  transfers: readonly MatchCandidate[],
  mismatches: readonly SandboxStatementMismatch[],
  valueDate: string,
  unknownCurrency: Currency = 'KES',
): SandboxStatementLine[] {
  const lines: SandboxStatementLine[] = [];
  const pending = [...mismatches];
  const take = (kind: SandboxStatementMismatch) => {
    const i = pending.indexOf(kind);
    if (i < 0) return false;
    pending.splice(i, 1);
    return true;
  };
  for (const t of transfers) {
    const status: 'settled' | 'failed' = t.status === 'failed' ? 'failed' : 'settled';
    const feeUnit = formatAmount(1n, t.currency).includes('.') ? 100n : 1n;
    const line: SandboxStatementLine = {
      // The partner's receipt where it gave one, as its statement lists it; else the rail's reference.
      rail_reference: t.partnerReceipt ?? t.railReference,
      direction: t.direction,
      external_reference: t.collectionId ?? t.id,
      amount: formatAmount(t.amountMinor, t.currency),
      currency: t.currency,
      value_date: t.day,
      status,
      fees: formatAmount(0n, t.currency),
    };
    // Each transfer takes at most one deliberate mismatch, in the order the list names them.
    const kind = pending[0];
    if (kind === 'omit' && take('omit')) continue;
    if (kind === 'amount' && take('amount')) line.amount = formatAmount(t.amountMinor + 1n, t.currency);
    else if (kind === 'fee' && take('fee')) line.fees = formatAmount(feeUnit, t.currency);
    else if (kind === 'status' && status === 'settled' && take('status')) line.status = 'failed';
    else if (kind === 'no_reference' && take('no_reference')) {
      line.rail_reference = null;
      line.external_reference = null;
    }
    lines.push(line);
  }
  if (pending.includes('unknown')) {
    const currency = transfers[0]?.currency ?? unknownCurrency;
    lines.push({
      rail_reference: 'sim_unknown_payout',
      direction: 'outbound',
      external_reference: null,
      amount: formatAmount(12_345n, currency),
      currency,
      value_date: valueDate,
      status: 'settled',
      fees: formatAmount(0n, currency),
    });
  }
  return lines;
}
