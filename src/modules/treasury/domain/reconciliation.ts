/**
 * Reconciliation, pure: a rail statement's lines paired with transfers, and what each pairing says. First
 * by the rail's reference; then, for lines without one, by currency, exact amount and value date within
 * RECONCILIATION_DATE_TOLERANCE_DAYS; then a line that covers several transfers (the same day's payouts
 * settled as one) by a bounded search for transfers whose amounts sum to it. Every difference is a finding
 * that becomes an exception; nothing is corrected silently.
 */
import type { Currency } from '../../../domain/money.ts';

/** Days a statement's value date may lie from the transfer's settlement (or hand-off) date. */
export const RECONCILIATION_DATE_TOLERANCE_DAYS = 2;
/** Minor units an amount may differ by and still match by amount (0: exact). */
export const RECONCILIATION_AMOUNT_TOLERANCE_MINOR = 0n;
/** Transfers one line may cover at most, and the candidates its search looks at. */
export const RECONCILIATION_GROUP_TRANSFERS_MAX = 5;
export const RECONCILIATION_GROUP_CANDIDATES_MAX = 20;
/** A settled transfer is missing from a statement only once it settled at least this long before its end. */
export const RECONCILIATION_MISSING_CUTOFF_DAYS = 1;
/** Lines one statement holds at most. */
export const RECONCILIATION_STATEMENT_LINES_MAX = 10_000;

export const STATEMENT_LINE_STATUSES = ['settled', 'failed'] as const;
export type StatementLineStatus = (typeof STATEMENT_LINE_STATUSES)[number];
/** Money out of the organization's partner account (payouts) or into it (collections). */
export const STATEMENT_DIRECTIONS = ['outbound', 'inbound'] as const;
export type StatementDirection = (typeof STATEMENT_DIRECTIONS)[number];

export const EXCEPTION_KINDS = [
  'unmatched_line',
  'amount_mismatch',
  'fee_mismatch',
  'status_mismatch',
  'missing_from_statement',
  /** A partner callback about a payout or collection we cannot find. */
  'unmatched_callback',
  /** A partner callback that contradicts a transfer already final. */
  'late_callback',
  /** A bank deposit whose reference names no wallet we can credit. */
  'unmatched_deposit',
  /** The daily safeguarding check found less in the trust accounts than customers hold (no transfer). */
  'safeguarding_shortfall',
  /** The trust balance a bank reports differs from the ledger's trust account on the same day (no transfer). */
  'trust_balance_mismatch',
  /** A network fee a custody partner paid in an asset the ledger holds no account for (no transfer). */
  'unbooked_network_fee',
] as const;
export type ExceptionKind = (typeof EXCEPTION_KINDS)[number];

export const RESOLUTION_ACTIONS = ['manual_match', 'write_off', 'book_fee', 'refund'] as const;
export type ResolutionAction = (typeof RESOLUTION_ACTIONS)[number];

export interface StatementLine {
  line: number;
  /** The partner's id for the movement (a receipt, a financial transaction id). */
  railReference: string | null;
  /** Our id as the partner echoes it (MTN's externalId: the transfer or collection id), when it does. */
  externalReference: string | null;
  direction: StatementDirection;
  amountMinor: bigint;
  currency: Currency;
  /** YYYY-MM-DD. */
  valueDate: string;
  status: StatementLineStatus;
  feesMinor: bigint;
}

/** A transfer as the matcher sees it. */
export interface MatchCandidate {
  id: string;
  railReference: string | null;
  /** The partner's receipt for the money moved, when it reported one (M-Pesa's receipt number). */
  partnerReceipt: string | null;
  direction: StatementDirection;
  /** The collection that made an inbound transfer (money in), else null. */
  collectionId: string | null;
  amountMinor: bigint;
  currency: Currency;
  status: string;
  /** The day it settled (or, still processing, was handed to the rail), YYYY-MM-DD. */
  day: string;
}

export type Finding =
  | { kind: 'matched' }
  | { kind: ExceptionKind; details: Record<string, string | number | null> };

export interface LineResult {
  line: StatementLine;
  transferIds: string[];
  findings: Finding[];
}

function daysBetween(a: string, b: string): number {
  return Math.abs(Date.parse(`${a}T00:00:00Z`) - Date.parse(`${b}T00:00:00Z`)) / 86_400_000;
}

const abs = (n: bigint) => (n < 0n ? -n : n);

/** What a line paired with transfers says about them: matched, or each difference. */
function judge(line: StatementLine, transfers: readonly MatchCandidate[]): Finding[] {
  const findings: Finding[] = [];
  const sum = transfers.reduce((s, t) => s + t.amountMinor, 0n);
  if (abs(sum - line.amountMinor) > RECONCILIATION_AMOUNT_TOLERANCE_MINOR) {
    findings.push({
      kind: 'amount_mismatch',
      details: { statement_amount_minor: line.amountMinor.toString(), ledger_amount_minor: sum.toString() },
    });
  }
  if (line.feesMinor > 0n) {
    findings.push({ kind: 'fee_mismatch', details: { fees_minor: line.feesMinor.toString() } });
  }
  for (const t of transfers) {
    const ledgerFailed = t.status === 'failed' || t.status === 'canceled' || t.status === 'rejected';
    const disagree =
      (line.status === 'failed' && t.status !== 'processing' && !ledgerFailed) ||
      (line.status === 'settled' && ledgerFailed);
    if (disagree) {
      findings.push({
        kind: 'status_mismatch',
        details: { statement_status: line.status, transfer: t.id, transfer_status: t.status },
      });
    }
  }
  return findings.length > 0 ? findings : [{ kind: 'matched' }];
}

/** A few of `pool`'s transfers summing exactly to `target`, or undefined (bounded depth-first search). */
function groupSumming(pool: readonly MatchCandidate[], target: bigint): MatchCandidate[] | undefined {
  const chosen: MatchCandidate[] = [];
  const search = (start: number, remaining: bigint): boolean => {
    if (remaining === 0n) return chosen.length >= 2;
    if (chosen.length >= RECONCILIATION_GROUP_TRANSFERS_MAX) return false;
    for (let i = start; i < pool.length; i++) {
      const t = pool[i] as MatchCandidate;
      if (t.amountMinor > remaining) continue;
      chosen.push(t);
      if (search(i + 1, remaining - t.amountMinor)) return true;
      chosen.pop();
    }
    return false;
  };
  return search(0, target) ? [...chosen] : undefined;
}

/** The pairings found so far: results by line number, and the transfers already paired with a line. */
interface Pairing {
  results: Map<number, LineResult>;
  used: Set<string>;
}

/** Pairs a line with transfers, which no other line may take after it. */
function pair(pairing: Pairing, line: StatementLine, transfers: readonly MatchCandidate[]): void {
  for (const t of transfers) pairing.used.add(t.id);
  pairing.results.set(line.line, {
    line,
    transferIds: transfers.map((t) => t.id),
    findings: judge(line, transfers),
  });
}

/** 1. By the rail's reference or the partner's receipt. */
function pairByReference(
  pairing: Pairing,
  lines: readonly StatementLine[],
  candidates: readonly MatchCandidate[],
): void {
  const byReference = new Map<string, MatchCandidate>();
  const byOurId = new Map<string, MatchCandidate>();
  for (const c of candidates) {
    if (c.railReference) byReference.set(`${c.direction}:${c.railReference}`, c);
    if (c.partnerReceipt) byReference.set(`${c.direction}:${c.partnerReceipt}`, c);
    byOurId.set(`${c.direction}:${c.id}`, c);
    if (c.collectionId) byOurId.set(`${c.direction}:${c.collectionId}`, c);
  }
  for (const line of lines) {
    const t =
      (line.railReference ? byReference.get(`${line.direction}:${line.railReference}`) : undefined) ??
      (line.externalReference ? byOurId.get(`${line.direction}:${line.externalReference}`) : undefined);
    if (!t || pairing.used.has(t.id)) continue;
    pair(pairing, line, [t]);
  }
}

/** Pairs each line not paired yet with the candidates `choose` picks for it, when it picks any. */
function pairEachUnpaired(
  pairing: Pairing,
  lines: readonly StatementLine[],
  choose: (line: StatementLine) => MatchCandidate[] | undefined,
): void {
  for (const line of lines) {
    if (pairing.results.has(line.line)) continue;
    const chosen = choose(line);
    if (chosen) pair(pairing, line, chosen);
  }
}

/** The candidates not paired yet in the line's direction and currency whose day lies within the date tolerance of it. */
function unpairedNear(
  pairing: Pairing,
  line: StatementLine,
  candidates: readonly MatchCandidate[],
): MatchCandidate[] {
  return candidates.filter(
    (c) =>
      !pairing.used.has(c.id) &&
      c.direction === line.direction &&
      c.currency === line.currency &&
      daysBetween(c.day, line.valueDate) <= RECONCILIATION_DATE_TOLERANCE_DAYS,
  );
}

/** 2. By currency, amount and date, for lines without a known reference: the nearest day first. */
function nearestOfAmount(near: MatchCandidate[], line: StatementLine): MatchCandidate[] | undefined {
  const sameAmount = near
    .filter((c) => abs(c.amountMinor - line.amountMinor) <= RECONCILIATION_AMOUNT_TOLERANCE_MINOR)
    .sort(
      (a, b) =>
        daysBetween(a.day, line.valueDate) - daysBetween(b.day, line.valueDate) || (a.id < b.id ? -1 : 1),
    );
  return sameAmount[0] ? [sameAmount[0]] : undefined;
}

/** 3. One line covering several transfers: the largest candidates of its currency and dates searched. */
function groupOfAmount(near: MatchCandidate[], line: StatementLine): MatchCandidate[] | undefined {
  const pool = near
    .sort((a, b) =>
      a.amountMinor > b.amountMinor ? -1 : a.amountMinor < b.amountMinor ? 1 : a.id < b.id ? -1 : 1,
    )
    .slice(0, RECONCILIATION_GROUP_CANDIDATES_MAX);
  return groupSumming(pool, line.amountMinor);
}

/** A line no transfer was found for. */
function unmatchedLine(line: StatementLine): LineResult {
  return {
    line,
    transferIds: [],
    findings: [
      {
        kind: 'unmatched_line',
        details: {
          rail_reference: line.railReference,
          amount_minor: line.amountMinor.toString(),
          value_date: line.valueDate,
          // Money in says so; money out keeps the details it always had.
          ...(line.direction === 'inbound' ? { direction: line.direction } : {}),
        },
      },
    ],
  };
}

/** Pairs every line with the transfers it reports (or none), each transfer with one line at most. */
export function matchStatement(
  lines: readonly StatementLine[],
  candidates: readonly MatchCandidate[],
): LineResult[] {
  const pairing: Pairing = { results: new Map(), used: new Set() };
  pairByReference(pairing, lines, candidates);
  // Steps 2 and 3, each over every line still unpaired, choose among the unpaired candidates near it.
  for (const choose of [nearestOfAmount, groupOfAmount]) {
    pairEachUnpaired(pairing, lines, (line) => choose(unpairedNear(pairing, line, candidates), line));
  }
  return lines.map((line) => pairing.results.get(line.line) ?? unmatchedLine(line));
}

export interface StatementFault {
  row: number;
  param: string;
  code: string;
  message: string;
}

const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A statement's lines as sent (JSON objects, or CSV rows as text), checked field by field: the lines, or
 * every fault with its 1-based row. `parseAmount` is the money module's (passed in to keep this pure of it).
 */
export function parseStatementLines(
  raw: readonly unknown[],
  parseMinor: (value: unknown, currency: Currency, param: string) => bigint,
  isCurrency: (value: string) => value is Currency,
): { lines: StatementLine[]; faults: StatementFault[] } {
  const lines: StatementLine[] = [];
  const faults: StatementFault[] = [];
  raw.forEach((item, i) => {
    const row = i + 1;
    const fault = (param: string, code: string, message: string) =>
      faults.push({ row, param: `lines.${i}.${param}`, code, message: `row ${row}: ${message}` });
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      fault('', 'invalid_type', 'a line must be an object');
      return;
    }
    const r = item as Record<string, unknown>;
    const currency = typeof r.currency === 'string' ? r.currency.trim().toUpperCase() : '';
    if (!isCurrency(currency)) {
      fault('currency', 'invalid_value', 'currency must be a supported ISO 4217 code');
      return;
    }
    const valueDate = typeof r.value_date === 'string' ? r.value_date.trim() : '';
    if (!DATE_PATTERN.test(valueDate) || Number.isNaN(Date.parse(`${valueDate}T00:00:00Z`))) {
      fault('value_date', 'invalid_format', 'value_date must be a date, YYYY-MM-DD');
      return;
    }
    const status = typeof r.status === 'string' ? r.status.trim().toLowerCase() : '';
    if (!(STATEMENT_LINE_STATUSES as readonly string[]).includes(status)) {
      fault('status', 'invalid_value', `status must be one of: ${STATEMENT_LINE_STATUSES.join(', ')}`);
      return;
    }
    const reference =
      typeof r.rail_reference === 'string' && r.rail_reference.trim() !== '' ? r.rail_reference.trim() : null;
    const direction =
      r.direction === undefined || r.direction === null || r.direction === ''
        ? 'outbound'
        : String(r.direction).trim().toLowerCase();
    if (!(STATEMENT_DIRECTIONS as readonly string[]).includes(direction)) {
      fault('direction', 'invalid_value', `direction must be one of: ${STATEMENT_DIRECTIONS.join(', ')}`);
      return;
    }
    try {
      const amountMinor = parseMinor(r.amount, currency, `lines.${i}.amount`);
      const fees = r.fees === undefined || r.fees === null || r.fees === '' ? '0' : r.fees;
      const feesMinor = parseMinor(fees, currency, `lines.${i}.fees`);
      lines.push({
        line: row,
        railReference: reference,
        externalReference: null,
        direction: direction as StatementDirection,
        amountMinor,
        currency,
        valueDate,
        status: status as StatementLineStatus,
        feesMinor,
      });
    } catch (error) {
      const e = error as { errors?: { param: string; code: string; message: string }[] };
      const first = e.errors?.[0];
      faults.push({
        row,
        param: first?.param ?? `lines.${i}.amount`,
        code: first?.code ?? 'invalid',
        message: `row ${row}: ${first?.message ?? 'the amount is not valid'}`,
      });
    }
  });
  return { lines, faults };
}
