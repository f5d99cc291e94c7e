/**
 * A rail's settlement statement imported in one transaction. Its lines are matched with transfers
 * (src/modules/treasury/domain/reconciliation.ts); a transfer the rail left `processing` (a time-out) is settled or failed as
 * the statement reports; a matched transfer's ledger_state becomes `matched` (`ledger.matched`); every
 * difference, and every settled transfer the statement leaves out, opens an exception
 * (`ledger_state: exception`, reconciliationExceptions.ts).
 */

import { createHash } from 'node:crypto';
import type { Deps } from '../../../app/deps.ts';
import { newEvent, recordEvents } from '../../../app/events.ts';
import { getById } from '../../../app/reads.ts';
import { DAY_MS } from '../../../domain/days.ts';
import { AppError, validationError } from '../../../domain/errors.ts';
import type { EventRecord } from '../../../domain/events.ts';
import { requireOneOf } from '../../../domain/json.ts';
import type { Transfer } from '../../../domain/transferRecord.ts';
import { RAILS, type Rail } from '../../../domain/transfers.ts';
import type { Queryable } from '../../../store/store.ts';
import { applyStatusChange, lockTransfer, saveTransfer } from '../../transfers/index.ts';
import {
  type LineResult,
  matchStatement,
  RECONCILIATION_DATE_TOLERANCE_DAYS,
  RECONCILIATION_MISSING_CUTOFF_DAYS,
  type StatementLine,
} from '../domain/reconciliation.ts';
import {
  findCandidates,
  findStatement,
  findStatementByContent,
  findUnreportedSettled,
  insertExceptions,
  insertLines,
  insertStatement,
  type ReconciliationException,
  type StatementCoverage,
  type StatementRow,
  type StatementScope,
} from '../repository/reconciliation.ts';
import { exceptionEvent, ledgerMatchedEvent, newException } from './reconciliationExceptions.ts';
import { type StatementContent, statementCoverage, statementLinesOf } from './statementFormats.ts';

// The record type the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { StatementRow } from '../repository/reconciliation.ts';
export interface ImportStatementInput extends StatementContent {
  rail: string;
  from: string;
  to: string;
}

const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** The first instant (UTC) of a `YYYY-MM-DD` day a request names as `param`. */
export function dayStart(text: string, param: string): Date {
  if (!DATE_PATTERN.test(text) || Number.isNaN(Date.parse(`${text}T00:00:00Z`))) {
    throw validationError(param, `${param} must be a date, YYYY-MM-DD`, 'invalid_format');
  }
  return new Date(`${text}T00:00:00Z`);
}

/** A statement's rail: one that carries money out of the organization, so not `internal`. */
export function checkStatementRail(rail: string): Rail {
  return requireOneOf(
    rail,
    RAILS.filter((r) => r !== 'internal'),
    'rail',
  );
}

/** The statement's identity for "imported before": its rail, period and lines, canonically. */
function contentHash(
  rail: string,
  from: string,
  to: string,
  results: readonly { line: LineResult['line'] }[],
): string {
  const lines = results.map(({ line: l }) => [
    l.railReference,
    l.amountMinor.toString(),
    l.currency,
    l.valueDate,
    l.status,
    l.feesMinor.toString(),
    // Only what earlier lines never had, so a statement imported before hashes as it did then.
    ...(l.direction === 'inbound' ? ['inbound'] : []),
    ...(l.externalReference ? [`external:${l.externalReference}`] : []),
  ]);
  return createHash('sha256')
    .update(JSON.stringify([rail, from, to, lines]))
    .digest('hex');
}

/** A statement's rail, period and lines, checked; one faulty line refuses the whole statement. */
function checkStatement(input: ImportStatementInput): {
  rail: Rail;
  from: Date;
  to: Date;
  lines: StatementLine[];
  coverage: StatementCoverage;
} {
  const rail = checkStatementRail(input.rail);
  const from = dayStart(input.from, 'from');
  const to = dayStart(input.to, 'to');
  if (to < from) throw validationError('to', 'to must not be before from', 'out_of_range');
  const { format, lines } = statementLinesOf(input);
  return { rail, from, to, lines, coverage: statementCoverage(format, rail) };
}

/** The lines matched with the rail's transfers of the period, widened by the date tolerance either side. */
async function matchWithTransfers(
  tx: Queryable,
  statementScope: StatementScope,
  lines: readonly StatementLine[],
  from: Date,
  toEnd: Date,
): Promise<LineResult[]> {
  const window = RECONCILIATION_DATE_TOLERANCE_DAYS * DAY_MS;
  const candidates = await findCandidates(
    tx,
    statementScope,
    lines.flatMap((l) => [l.railReference, l.externalReference].filter((r): r is string => r !== null)),
    new Date(from.getTime() - window),
    new Date(toEnd.getTime() + window),
  );
  return matchStatement(lines, candidates);
}

async function refuseImportedBefore(tx: Queryable, organizationId: string, hash: string): Promise<void> {
  const previous = await findStatementByContent(tx, organizationId, hash);
  if (previous) {
    throw new AppError({
      status: 409,
      code: 'statement_already_imported',
      title: 'Statement imported before',
      detail: `This statement was imported as ${previous.id}; importing it again would match nothing new.`,
    });
  }
}

/** The statement being imported, in the transaction that imports it. */
interface ImportScope {
  tx: Queryable;
  deps: Deps;
  organizationId: string;
  statementId: string;
  rail: Rail;
  coverage: StatementCoverage;
  now: Date;
}

/** What the statement's lines did: the exceptions they open, the events so far, the transfers matched. */
interface AppliedLines {
  exceptions: ReconciliationException[];
  events: EventRecord[];
  matchedIds: Set<string>;
}

/** What the rail says of a transfer it left processing (a time-out) is its outcome now. */
async function settleAsReported(
  scope: ImportScope,
  transfer: Transfer,
  line: StatementLine,
): Promise<Transfer> {
  if (transfer.status !== 'processing' && transfer.status !== 'pending') return transfer;
  const { tx, deps } = scope;
  return line.status === 'settled'
    ? await applyStatusChange(tx, deps, transfer, { to: 'settled', reason: 'settled_per_statement' })
    : await applyStatusChange(tx, deps, transfer, {
        to: 'failed',
        failureCode: 'rail_reported_failed',
        reason: 'failed_per_statement',
      });
}

/** A transfer a line reports, settled or failed as reported, its ledger_state moved to the line's verdict. */
async function applyLineToTransfer(
  scope: ImportScope,
  reported: Transfer,
  line: StatementLine,
  matched: boolean,
  events: EventRecord[],
): Promise<Transfer> {
  const { tx, deps, now } = scope;
  let transfer = await settleAsReported(scope, reported, line);
  const ledgerState = matched ? 'matched' : 'exception';
  // A transfer matched by an earlier statement stays matched (it is final); a later line disagreeing
  // with it is still an exception, opened below, for a person to look at.
  const keepsState = transfer.ledgerState === 'pending' || transfer.ledgerState === 'matched';
  if (transfer.ledgerState !== ledgerState && !keepsState) {
    transfer = { ...transfer, ledgerState, updatedAt: now };
    await saveTransfer(tx, transfer);
    if (matched) events.push(ledgerMatchedEvent(deps, transfer, now));
  }
  return transfer;
}

/**
 * The exceptions a line's differences open, each on the transfer it concerns and naming that transfer's
 * rail (a partner's statement covers several), else the statement's.
 */
function lineExceptions(
  scope: ImportScope,
  result: LineResult,
  locked: ReadonlyMap<string, Transfer>,
): ReconciliationException[] {
  const { deps, organizationId, statementId, now } = scope;
  return result.findings.flatMap((finding) => {
    if (finding.kind === 'matched') return [];
    const transferId =
      finding.kind === 'status_mismatch' ? String(finding.details.transfer) : (result.transferIds[0] ?? null);
    return [
      newException(
        deps,
        organizationId,
        statementId,
        result.line.line,
        transferId,
        finding.kind,
        {
          ...finding.details,
          rail: (transferId === null ? undefined : locked.get(transferId)?.rail) ?? scope.rail,
          currency: result.line.currency,
          ...(result.line.direction === 'inbound' ? { direction: 'inbound' } : {}),
        },
        now,
      ),
    ];
  });
}

/** Applies every line to the transfers it reports, and opens an exception for each difference. */
async function applyLines(scope: ImportScope, results: readonly LineResult[]): Promise<AppliedLines> {
  const applied: AppliedLines = { exceptions: [], events: [], matchedIds: new Set() };
  // Every transfer the statement names, locked in id order, as every writer locks them.
  const named = [...new Set(results.flatMap((r) => r.transferIds))].sort();
  const locked = new Map<string, Transfer>();
  for (const id of named) locked.set(id, await lockTransfer(scope.tx, scope.organizationId, id));
  for (const result of results) {
    const matched = result.findings.every((f) => f.kind === 'matched');
    for (const id of result.transferIds) {
      const reported = locked.get(id) as Transfer;
      const transfer = await applyLineToTransfer(scope, reported, result.line, matched, applied.events);
      if (matched) applied.matchedIds.add(id);
      locked.set(id, transfer);
    }
    if (!matched) applied.exceptions.push(...lineExceptions(scope, result, locked));
  }
  return applied;
}

/** Settled transfers of the period the statement leaves out, once they are old enough to be on it. */
async function missingFromStatement(
  scope: ImportScope,
  results: readonly LineResult[],
  from: Date,
  toEnd: Date,
): Promise<ReconciliationException[]> {
  const { tx, deps, organizationId, statementId, coverage, now } = scope;
  const exceptions: ReconciliationException[] = [];
  const cutoff = Math.min(toEnd.getTime(), now.getTime() - RECONCILIATION_MISSING_CUTOFF_DAYS * DAY_MS);
  if (cutoff < from.getTime()) return exceptions;
  const reported = new Set(results.flatMap((r) => r.transferIds));
  const unreported = await findUnreportedSettled(tx, { organizationId, ...coverage }, from, new Date(cutoff));
  for (const id of unreported) {
    if (reported.has(id)) continue;
    let transfer = await lockTransfer(tx, organizationId, id);
    if (transfer.ledgerState !== 'posted') continue;
    transfer = { ...transfer, ledgerState: 'exception', updatedAt: now };
    await saveTransfer(tx, transfer);
    exceptions.push(
      newException(
        deps,
        organizationId,
        statementId,
        null,
        id,
        'missing_from_statement',
        {
          rail: transfer.rail,
          currency: transfer.currency,
          amount_minor: transfer.amountMinor.toString(),
          ...(transfer.direction === 'inbound' ? { direction: 'inbound' } : {}),
        },
        now,
      ),
    );
  }
  return exceptions;
}

/** Writes the statement, its lines and its exceptions, and records their events after the lines' own. */
async function saveImport(
  scope: ImportScope,
  statement: StatementRow,
  results: readonly LineResult[],
  applied: AppliedLines,
): Promise<void> {
  const { tx, deps, organizationId, now } = scope;
  if (!(await insertStatement(tx, statement))) {
    throw new AppError({
      status: 409,
      code: 'statement_already_imported',
      title: 'Statement imported before',
      detail: 'This statement was imported by a request that finished first.',
    });
  }
  await insertLines(tx, statement.id, results);
  await insertExceptions(tx, applied.exceptions);
  const opened = applied.exceptions.map((e) =>
    exceptionEvent(deps, e, 'reconciliation.exception.opened', now),
  );
  const imported = newEvent(
    deps,
    {
      organizationId,
      type: 'reconciliation.statement.imported',
      resourceId: statement.id,
      data: {
        statement_id: statement.id,
        rail: statement.rail,
        from: statement.periodFrom,
        to: statement.periodTo,
        lines: statement.lineCount,
        matched: statement.matchedCount,
        exceptions: statement.exceptionCount,
      },
    },
    now,
  );
  await recordEvents(tx, deps, [...applied.events, ...opened, imported]);
}

/** Imports a statement and applies what it says, in one transaction. */
export async function importStatement(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: ImportStatementInput,
  createdBy: string,
): Promise<StatementRow> {
  const { rail, from, to, lines, coverage } = checkStatement(input);
  const now = deps.now();
  const toEnd = new Date(to.getTime() + DAY_MS - 1);
  const results = await matchWithTransfers(tx, { organizationId, ...coverage }, lines, from, toEnd);
  const hash = contentHash(rail, input.from, input.to, results);
  await refuseImportedBefore(tx, organizationId, hash);
  const statementId = deps.newId('statement');
  const scope: ImportScope = { tx, deps, organizationId, statementId, rail, coverage, now };
  const applied = await applyLines(scope, results);
  applied.exceptions.push(...(await missingFromStatement(scope, results, from, toEnd)));
  const statement: StatementRow = {
    id: scope.statementId,
    organizationId,
    rail,
    periodFrom: input.from,
    periodTo: input.to,
    contentSha256: hash,
    lineCount: lines.length,
    matchedCount: applied.matchedIds.size,
    exceptionCount: applied.exceptions.length,
    createdBy,
    createdAt: now,
  };
  await saveImport(scope, statement, results, applied);
  return statement;
}

export const getStatement = getById<StatementRow>(findStatement, 'statement');
