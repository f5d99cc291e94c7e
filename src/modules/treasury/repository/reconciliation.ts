/** Reconciliation: imported statements and their lines, the transfers they match, and the exception queue. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type { Currency } from '../../../domain/money.ts';
import {
  byFields,
  newestFirstLister,
  organizationRecordFinder,
  recordTable,
} from '../../../store/repositories/records.ts';
import { castToText, stored } from '../../../store/repositories/rowMappers.ts';
import {
  type KeysetFilter,
  nullableDate,
  nullableNumber,
  nullableText,
  toBigInt,
  toDate,
  toJsonObject,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type {
  ExceptionKind,
  LineResult,
  MatchCandidate,
  ResolutionAction,
} from '../domain/reconciliation.ts';

export interface StatementRow {
  id: string;
  organizationId: string;
  rail: string;
  periodFrom: string;
  periodTo: string;
  contentSha256: string;
  lineCount: number;
  matchedCount: number;
  exceptionCount: number;
  createdBy: string;
  createdAt: Date;
}

const STATEMENTS = recordTable<StatementRow>('reconciliation_statements', ID_PREFIXES.statement, {
  id: String,
  organizationId: String,
  rail: String,
  periodFrom: castToText('period_from', String),
  periodTo: castToText('period_to', String),
  contentSha256: String,
  lineCount: Number,
  matchedCount: Number,
  exceptionCount: Number,
  createdBy: String,
  createdAt: toDate,
});

/** Inserts a statement; false when the organization imported the same content before. */
export async function insertStatement(db: Queryable, s: StatementRow): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO reconciliation_statements (id, organization_id, rail, period_from, period_to, content_sha256, line_count,
        matched_count, exception_count, created_by, created_at)
     VALUES ($1, $2, $3, $4::date, $5::date, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (organization_id, content_sha256) DO NOTHING RETURNING id`,
    [
      s.id,
      s.organizationId,
      s.rail,
      s.periodFrom,
      s.periodTo,
      s.contentSha256,
      s.lineCount,
      s.matchedCount,
      s.exceptionCount,
      s.createdBy,
      s.createdAt,
    ],
  );
  return rows.length === 1;
}

export const findStatementByContent = organizationRecordFinder(STATEMENTS, 'content_sha256');

export const findStatement = organizationRecordFinder(STATEMENTS);

export async function saveStatementCounts(db: Queryable, s: StatementRow): Promise<void> {
  await db.query(
    'UPDATE reconciliation_statements SET matched_count = $2, exception_count = $3 WHERE id = $1',
    [s.id, s.matchedCount, s.exceptionCount],
  );
}

export async function insertLines(
  db: Queryable,
  statementId: string,
  results: readonly LineResult[],
): Promise<void> {
  if (results.length === 0) return;
  const column = <T>(pick: (r: LineResult) => T) => results.map(pick);
  await db.query(
    `INSERT INTO reconciliation_lines (statement_id, line, rail_reference, amount_minor, currency, value_date, status,
        fees_minor, outcome, transfer_ids)
     SELECT $1, v.line, v.rail_reference, v.amount_minor, v.currency, v.value_date::date, v.status, v.fees_minor,
            v.outcome, string_to_array(v.transfer_ids, ',')
       FROM unnest($2::int[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::text[],
                   $10::text[]) AS v(line, rail_reference, amount_minor, currency, value_date, status, fees_minor,
                                     outcome, transfer_ids)`,
    [
      statementId,
      column((r) => r.line.line),
      column((r) => r.line.railReference),
      column((r) => r.line.amountMinor.toString()),
      column((r) => r.line.currency),
      column((r) => r.line.valueDate),
      column((r) => r.line.status),
      column((r) => r.line.feesMinor.toString()),
      column((r) => (r.findings.every((f) => f.kind === 'matched') ? 'matched' : 'exception')),
      column((r) => r.transferIds.join(',')),
    ],
  );
}

/** A transfer as matching reads it (candidateOf): its day is when it settled, or else went to the rail. */
const CANDIDATE_COLUMNS = `t.id, t.rail_reference, t.partner_receipt, t.amount_minor, t.currency, t.status, t.direction, c.id AS collection_id,
  to_char(COALESCE(t.settled_at, t.processing_at, t.created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day`;

/**
 * The transfers a rail's statement reports: payouts, and money in the partner named (a credit with its
 * reference): a collection asked of a payer, or a payment the partner reported with no collection behind it.
 * Not the sandbox's funding (no rail, no reference) nor a bank deposit, which the bank's own report brings.
 * `$1` is the organization, `$2` the rails, `$3` the mobile network (null: any), `$4` the direction (null:
 * both).
 */
const STATEMENT_TRANSFERS = `transfers t
  LEFT JOIN collections c ON c.organization_id = t.organization_id AND c.transfer_id = t.id
  WHERE t.organization_id = $1 AND t.rail = ANY($2::text[])
    AND ($3::text IS NULL OR t.rail <> 'mobile_money' OR t.network = $3)
    AND ($4::text IS NULL OR t.direction = $4)
    AND (t.direction = 'outbound'
         OR (t.rail_reference IS NOT NULL AND (c.id IS NULL OR c.method = 'mobile_money')))`;

/** Which transfers a statement covers: its rail's, or a partner's rails and, on mobile money, its network's. */
export interface StatementScope extends StatementCoverage {
  organizationId: string;
}
export interface StatementCoverage {
  rails: readonly string[];
  /** The mobile network a partner's own report covers on `mobile_money`; null: every network. */
  network: string | null;
  /** The one direction a partner's report lists (Flutterwave's settlements: money in); null: both. */
  direction: 'inbound' | 'outbound' | null;
}

/**
 * The transfers a statement's lines may name: any the lines name by rail reference, matched by an earlier
 * statement or not (statements overlap: a line agreeing with a matched payout matches it again, one
 * disagreeing is an exception), and the unmatched ones of the window, for lines without a reference.
 * Served by the rail-reference, partner-receipt and (organization, rail, ledger_state, settled_at) indexes.
 */
export async function findCandidates(
  db: Queryable,
  scope: StatementScope,
  references: readonly string[],
  from: Date,
  to: Date,
): Promise<MatchCandidate[]> {
  const rows = await db.query(
    `SELECT ${CANDIDATE_COLUMNS}
       FROM ${STATEMENT_TRANSFERS}
        AND (t.rail_reference = ANY($5::text[]) OR t.partner_receipt = ANY($5::text[]) OR t.id = ANY($5::text[])
             OR c.id = ANY($5::text[])
             OR (t.ledger_state IN ('posted', 'pending', 'voided')
                 AND COALESCE(t.settled_at, t.processing_at, t.created_at) BETWEEN $6 AND $7))
      ORDER BY t.id`,
    [scope.organizationId, scope.rails, scope.network, scope.direction, references, from, to],
  );
  return rows.map(candidateOf);
}

function candidateOf(r: Record<string, unknown>): MatchCandidate {
  return {
    id: String(r.id),
    railReference: nullableText(r.rail_reference),
    partnerReceipt: nullableText(r.partner_receipt),
    direction: r.direction === 'inbound' ? 'inbound' : 'outbound',
    collectionId: nullableText(r.collection_id),
    amountMinor: toBigInt(r.amount_minor),
    currency: r.currency as Currency,
    status: String(r.status),
    day: String(r.day),
  };
}

/**
 * The payouts and collections the rail carried in [from, to], whatever the ledger made of them since
 * (matched, exception): a payout handed to the partner and accepted (it named a reference), then
 * processing, settled, failed or returned; a collection's credit (settled, or held for review). A transfer
 * refused before it reached the partner has no reference and is not the rail's.
 */
export async function findCarriedPayouts(
  db: Queryable,
  scope: StatementScope,
  from: Date,
  to: Date,
): Promise<MatchCandidate[]> {
  const rows = await db.query(
    `SELECT ${CANDIDATE_COLUMNS}
       FROM ${STATEMENT_TRANSFERS} AND t.rail_reference IS NOT NULL
        AND t.status IN ('processing', 'settled', 'failed', 'returned', 'in_review')
        AND COALESCE(t.settled_at, t.processing_at, t.created_at) BETWEEN $5 AND $6
      ORDER BY t.id`,
    [scope.organizationId, scope.rails, scope.network, scope.direction, from, to],
  );
  return rows.map(candidateOf);
}

/** Settled, unmatched payouts and credits (money in) of the rail that settled in [from, to]. */
export async function findUnreportedSettled(
  db: Queryable,
  scope: StatementScope,
  from: Date,
  to: Date,
): Promise<string[]> {
  const rows = await db.query(
    `SELECT t.id FROM ${STATEMENT_TRANSFERS} AND t.ledger_state = 'posted' AND t.status = 'settled'
        AND t.settled_at BETWEEN $5 AND $6
      ORDER BY t.id`,
    [scope.organizationId, scope.rails, scope.network, scope.direction, from, to],
  );
  return rows.map((r) => String(r.id));
}

export interface ReconciliationException {
  id: string;
  organizationId: string;
  statementId: string | null;
  line: number | null;
  transferId: string | null;
  kind: ExceptionKind;
  status: 'open' | 'resolved';
  details: Record<string, string | number | null>;
  resolution: ResolutionAction | null;
  note: string | null;
  resolvedBy: string | null;
  journalEntryId: string | null;
  createdAt: Date;
  resolvedAt: Date | null;
}

const EXCEPTIONS = recordTable<ReconciliationException>(
  'reconciliation_exceptions',
  ID_PREFIXES.reconciliationException,
  {
    id: String,
    organizationId: String,
    statementId: nullableText,
    line: nullableNumber,
    transferId: nullableText,
    kind: stored,
    status: stored,
    details: toJsonObject<Record<string, string | number | null>>,
    resolution: (value) => nullableText(value) as ResolutionAction | null,
    note: nullableText,
    resolvedBy: nullableText,
    journalEntryId: nullableText,
    createdAt: toDate,
    resolvedAt: nullableDate,
  },
);

/** An exception's columns and row mapper, for the exports that read the table. */
export const EXCEPTION_COLUMNS = EXCEPTIONS.columns;
export const exceptionFromRow = EXCEPTIONS.fromRow;

export async function insertExceptions(
  db: Queryable,
  exceptions: readonly ReconciliationException[],
): Promise<void> {
  for (const e of exceptions) {
    await db.query(
      `INSERT INTO reconciliation_exceptions (id, organization_id, statement_id, line, transfer_id, kind, status, details,
          created_at) VALUES ($1, $2, $3, $4, $5, $6, 'open', $7::jsonb, $8)`,
      [
        e.id,
        e.organizationId,
        e.statementId,
        e.line,
        e.transferId,
        e.kind,
        JSON.stringify(e.details),
        e.createdAt,
      ],
    );
  }
}

export const findException = organizationRecordFinder(EXCEPTIONS);

export async function saveResolution(db: Queryable, e: ReconciliationException): Promise<void> {
  await db.query(
    `UPDATE reconciliation_exceptions SET status = $2, resolution = $3, note = $4, resolved_by = $5, journal_entry_id = $6,
        resolved_at = $7, transfer_id = $8 WHERE id = $1`,
    [e.id, e.status, e.resolution, e.note, e.resolvedBy, e.journalEntryId, e.resolvedAt, e.transferId],
  );
}

export async function countOpenExceptionsOf(db: Queryable, transferId: string): Promise<number> {
  const [row] = await db.query(
    "SELECT count(*)::int AS n FROM reconciliation_exceptions WHERE transfer_id = $1 AND status = 'open'",
    [transferId],
  );
  return Number(row?.n ?? 0);
}

export interface ExceptionFilter extends KeysetFilter {
  status?: 'open' | 'resolved' | undefined;
  kind?: ExceptionKind | undefined;
  transferId?: string | undefined;
}

export const listExceptions = newestFirstLister(
  EXCEPTIONS,
  byFields<ExceptionFilter>('status', 'kind', 'transferId'),
);
