/** Reconciliation statements and exceptions in their wire form: the API's and the exports'. */

import { isoOrNull } from '../../../http/presenters.ts';
import type { ReconciliationException } from '../useCases/reconciliationExceptions.ts';
import type { StatementRow } from '../useCases/reconciliationStatements.ts';

export function presentStatement(s: StatementRow) {
  return {
    object: 'statement',
    id: s.id,
    rail: s.rail,
    from: s.periodFrom,
    to: s.periodTo,
    lines: s.lineCount,
    matched: s.matchedCount,
    exceptions: s.exceptionCount,
    created_by: s.createdBy,
    created_at: s.createdAt.toISOString(),
  };
}

export function presentException(e: ReconciliationException) {
  return {
    object: 'reconciliation_exception',
    id: e.id,
    kind: e.kind,
    status: e.status,
    transfer: e.transferId,
    statement: e.statementId,
    line: e.line,
    details: e.details,
    resolution: e.resolution,
    note: e.note,
    resolved_by: e.resolvedBy,
    journal_entry: e.journalEntryId,
    created_at: e.createdAt.toISOString(),
    resolved_at: isoOrNull(e.resolvedAt),
  };
}
