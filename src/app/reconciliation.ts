/**
 * Reconciliation: a rail's settlement statement imported in one transaction. Its lines are matched with
 * transfers (src/domain/reconciliation.ts); a transfer the rail left `processing` (a time-out) is settled or
 * failed as the statement reports; a matched transfer's ledger_state becomes `matched` (`ledger.matched`);
 * every difference, and every settled transfer the statement leaves out, opens an exception
 * (`ledger_state: exception`). Operators resolve exceptions: manual match, a write-off or a fee booked through
 * a balanced adjustment entry, or a refund; each with who and why, as evidence.
 *
 * Past 400 lines: importing and resolving share the transfer locks, the exception records and their events.
 */
import { createHash } from 'node:crypto';
import { AppError, resourceMissing, validationError } from '../domain/errors.ts';
import type { EventRecord } from '../domain/events.ts';
import type { EvidenceActor } from '../domain/evidence.ts';
import { type Currency, formatAmount, isCurrency, parseAmount } from '../domain/money.ts';
import { type Page, type PageRequest, toPage } from '../domain/pagination.ts';
import {
  type ExceptionKind,
  type LineResult,
  matchStatement,
  parseStatementLines,
  RECONCILIATION_DATE_TOLERANCE_DAYS,
  RECONCILIATION_MISSING_CUTOFF_DAYS,
  RECONCILIATION_STATEMENT_LINES_MAX,
  type ResolutionAction,
} from '../domain/reconciliation.ts';
import type { Transfer } from '../domain/transferRecord.ts';
import { RAILS, type Rail } from '../domain/transfers.ts';
import { directPostings } from '../modules/ledger/domain/ledger.ts';
import {
  SANDBOX_STATEMENT_MISMATCHES,
  type SandboxStatementMismatch,
  sandboxStatementLines,
} from '../rails/sandboxStatements.ts';

export { SANDBOX_STATEMENT_MISMATCHES };

import { DAY_MS } from '../domain/days.ts';
import { ensureSystemAccount, postEntry } from '../modules/ledger/index.ts';
import {
  countOpenExceptionsOf,
  type ExceptionFilter,
  findCandidates,
  findCarriedPayouts,
  findException,
  findStatement,
  findStatementByContent,
  findUnreportedSettled,
  insertExceptions,
  insertLines,
  insertStatement,
  listExceptions,
  type ReconciliationException,
  type StatementRow,
  saveResolution,
} from '../store/repositories/reconciliation.ts';
import { saveTransfer } from '../store/repositories/transfers.ts';
import type { Queryable } from '../store/store.ts';
import type { Deps } from './deps.ts';
import { newEvent, recordEvents } from './events.ts';
import { appendEvidence } from './evidence.ts';
import { applyStatusChange, lockTransfer } from './transferStatusChanges.ts';

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { ReconciliationException, StatementRow } from '../store/repositories/reconciliation.ts';

export interface ImportStatementInput {
  rail: string;
  from: string;
  to: string;
  lines: readonly unknown[];
}

export function ledgerMatchedEvent(deps: Deps, transfer: Transfer, now: Date): EventRecord {
  return newEvent(
    deps,
    {
      organizationId: transfer.organizationId,
      type: 'ledger.matched',
      resourceId: transfer.id,
      data: {
        transfer_id: transfer.id,
        ledger_state: 'matched',
        rail: transfer.rail,
        rail_reference: transfer.railReference,
        amount: formatAmount(transfer.amountMinor, transfer.currency),
        currency: transfer.currency,
        status: transfer.status,
      },
    },
    now,
  );
}

export function exceptionEventData(e: ReconciliationException): Record<string, unknown> {
  return {
    exception_id: e.id,
    kind: e.kind,
    status: e.status,
    transfer_id: e.transferId,
    statement_id: e.statementId,
    line: e.line,
    resolution: e.resolution,
  };
}

function exceptionEvent(deps: Deps, e: ReconciliationException, type: string, now: Date): EventRecord {
  return newEvent(
    deps,
    {
      organizationId: e.organizationId,
      type,
      resourceId: e.id,
      data: exceptionEventData(e),
    },
    now,
  );
}

const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

function dayStart(text: string, param: string): Date {
  if (!DATE_PATTERN.test(text) || Number.isNaN(Date.parse(`${text}T00:00:00Z`))) {
    throw validationError(param, `${param} must be a date, YYYY-MM-DD`, 'invalid_format');
  }
  return new Date(`${text}T00:00:00Z`);
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
  ]);
  return createHash('sha256')
    .update(JSON.stringify([rail, from, to, lines]))
    .digest('hex');
}

function newException(
  deps: Deps,
  organizationId: string,
  statementId: string | null,
  line: number | null,
  transferId: string | null,
  kind: ExceptionKind,
  details: Record<string, string | number | null>,
  now: Date,
): ReconciliationException {
  return {
    id: deps.newId('reconciliationException'),
    organizationId,
    statementId,
    line,
    transferId,
    kind,
    status: 'open',
    details,
    resolution: null,
    note: null,
    resolvedBy: null,
    journalEntryId: null,
    createdAt: now,
    resolvedAt: null,
  };
}

/** Kinds about the trust accounts as a whole: `manual_match` accepts them with a note and names no transfer. */
const TRUST_ACCOUNT_KINDS: readonly ExceptionKind[] = ['safeguarding_shortfall', 'trust_balance_mismatch'];

/** Kinds a write-off resolves: the amount is the difference, or what the line or callback says moved. */
const WRITTEN_OFF_KINDS: readonly ExceptionKind[] = [
  'amount_mismatch',
  'unmatched_line',
  'unmatched_callback',
  'late_callback',
  'unmatched_deposit',
];

/**
 * Opens an exception found outside a statement (a partner callback), in the caller's transaction: its
 * transfer, if any, shows `ledger_state: exception` until it is resolved.
 */
export async function openException(
  tx: Queryable,
  deps: Deps,
  draft: {
    organizationId: string;
    transferId: string | null;
    kind: ExceptionKind;
    details: Record<string, string | number | null>;
  },
): Promise<ReconciliationException> {
  const now = deps.now();
  const exception = newException(
    deps,
    draft.organizationId,
    null,
    null,
    draft.transferId,
    draft.kind,
    draft.details,
    now,
  );
  await insertExceptions(tx, [exception]);
  if (draft.transferId !== null) {
    const transfer = await lockTransfer(tx, draft.organizationId, draft.transferId);
    if (transfer.ledgerState !== 'exception' && transfer.ledgerState !== 'pending') {
      await saveTransfer(tx, { ...transfer, ledgerState: 'exception', updatedAt: now });
    }
  }
  await recordEvents(tx, deps, [exceptionEvent(deps, exception, 'reconciliation.exception.opened', now)]);
  return exception;
}

/** Imports a statement and applies what it says, in one transaction. */
export async function importStatement(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: ImportStatementInput,
  createdBy: string,
): Promise<StatementRow> {
  if (!(RAILS as readonly string[]).includes(input.rail) || input.rail === 'internal') {
    throw validationError(
      'rail',
      `rail must be one of: ${RAILS.filter((r) => r !== 'internal').join(', ')}`,
      'invalid_value',
    );
  }
  const rail = input.rail as Rail;
  const from = dayStart(input.from, 'from');
  const to = dayStart(input.to, 'to');
  if (to < from) throw validationError('to', 'to must not be before from', 'out_of_range');
  if (input.lines.length > RECONCILIATION_STATEMENT_LINES_MAX) {
    throw validationError(
      'lines',
      `a statement has at most ${RECONCILIATION_STATEMENT_LINES_MAX} lines`,
      'out_of_range',
    );
  }
  const { lines, faults } = parseStatementLines(input.lines, (v, c, p) => parseAmount(v, c, p), isCurrency);
  if (faults.length > 0) {
    throw new AppError({
      status: 422,
      code: 'statement_invalid',
      title: 'Invalid statement',
      detail: `${faults.length} line(s) are invalid; nothing was imported. Each is listed in errors with its row and field.`,
      param: faults[0]?.param,
      errors: faults,
    });
  }
  const now = deps.now();
  const toEnd = new Date(to.getTime() + DAY_MS - 1);
  const window = RECONCILIATION_DATE_TOLERANCE_DAYS * DAY_MS;
  const candidates = await findCandidates(
    tx,
    organizationId,
    rail,
    lines.flatMap((l) => (l.railReference ? [l.railReference] : [])),
    new Date(from.getTime() - window),
    new Date(toEnd.getTime() + window),
  );
  const results = matchStatement(lines, candidates);
  const hash = contentHash(rail, input.from, input.to, results);
  const previous = await findStatementByContent(tx, organizationId, hash);
  if (previous) {
    throw new AppError({
      status: 409,
      code: 'statement_already_imported',
      title: 'Statement imported before',
      detail: `This statement was imported as ${previous.id}; importing it again would match nothing new.`,
    });
  }
  const statementId = deps.newId('statement');
  const exceptions: ReconciliationException[] = [];
  const events: EventRecord[] = [];
  const matchedIds = new Set<string>();
  // Every transfer the statement names, locked in id order, as every writer locks them.
  const named = [...new Set(results.flatMap((r) => r.transferIds))].sort();
  const locked = new Map<string, Transfer>();
  for (const id of named) locked.set(id, await lockTransfer(tx, organizationId, id));
  for (const result of results) {
    const matched = result.findings.every((f) => f.kind === 'matched');
    for (const id of result.transferIds) {
      let transfer = locked.get(id) as Transfer;
      // What the rail says of a transfer it left processing (a time-out) is its outcome now.
      if (transfer.status === 'processing' || transfer.status === 'pending') {
        transfer =
          result.line.status === 'settled'
            ? await applyStatusChange(tx, deps, transfer, { to: 'settled', reason: 'settled_per_statement' })
            : await applyStatusChange(tx, deps, transfer, {
                to: 'failed',
                failureCode: 'rail_reported_failed',
                reason: 'failed_per_statement',
              });
      }
      const ledgerState = matched ? 'matched' : 'exception';
      // A transfer matched by an earlier statement stays matched (it is final); a later line disagreeing
      // with it is still an exception, opened below, for a person to look at.
      const keepsState = transfer.ledgerState === 'pending' || transfer.ledgerState === 'matched';
      if (transfer.ledgerState !== ledgerState && !keepsState) {
        transfer = { ...transfer, ledgerState, updatedAt: now };
        await saveTransfer(tx, transfer);
        if (matched) events.push(ledgerMatchedEvent(deps, transfer, now));
      }
      if (matched) matchedIds.add(id);
      locked.set(id, transfer);
    }
    if (!matched) {
      for (const finding of result.findings) {
        if (finding.kind === 'matched') continue;
        const transferId =
          finding.kind === 'status_mismatch'
            ? String(finding.details.transfer)
            : (result.transferIds[0] ?? null);
        exceptions.push(
          newException(
            deps,
            organizationId,
            statementId,
            result.line.line,
            transferId,
            finding.kind,
            { ...finding.details, rail, currency: result.line.currency },
            now,
          ),
        );
      }
    }
  }
  // Settled transfers of the period the statement leaves out, once they are old enough to be on it.
  const cutoff = Math.min(toEnd.getTime(), now.getTime() - RECONCILIATION_MISSING_CUTOFF_DAYS * DAY_MS);
  if (cutoff >= from.getTime()) {
    const reported = new Set(results.flatMap((r) => r.transferIds));
    for (const id of await findUnreportedSettled(tx, organizationId, rail, from, new Date(cutoff))) {
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
          { rail, currency: transfer.currency, amount_minor: transfer.amountMinor.toString() },
          now,
        ),
      );
    }
  }
  const statement: StatementRow = {
    id: statementId,
    organizationId,
    rail,
    periodFrom: input.from,
    periodTo: input.to,
    contentSha256: hash,
    lineCount: lines.length,
    matchedCount: matchedIds.size,
    exceptionCount: exceptions.length,
    createdBy,
    createdAt: now,
  };
  if (!(await insertStatement(tx, statement))) {
    throw new AppError({
      status: 409,
      code: 'statement_already_imported',
      title: 'Statement imported before',
      detail: 'This statement was imported by a request that finished first.',
    });
  }
  await insertLines(tx, statementId, results);
  await insertExceptions(tx, exceptions);
  events.push(
    ...exceptions.map((e) => exceptionEvent(deps, e, 'reconciliation.exception.opened', now)),
    newEvent(
      deps,
      {
        organizationId,
        type: 'reconciliation.statement.imported',
        resourceId: statementId,
        data: {
          statement_id: statementId,
          rail,
          from: input.from,
          to: input.to,
          lines: lines.length,
          matched: matchedIds.size,
          exceptions: exceptions.length,
        },
      },
      now,
    ),
  );
  await recordEvents(tx, deps, events);
  return statement;
}

export async function getStatement(deps: Deps, organizationId: string, id: string): Promise<StatementRow> {
  const statement = await findStatement(deps.store, organizationId, id);
  if (!statement) throw resourceMissing('statement', id);
  return statement;
}

export async function getException(
  deps: Deps,
  organizationId: string,
  id: string,
): Promise<ReconciliationException> {
  const e = await findException(deps.store, organizationId, id);
  if (!e) throw resourceMissing('reconciliation exception', id);
  return e;
}

export async function listReconciliationExceptions(
  deps: Deps,
  organizationId: string,
  request: PageRequest & Omit<ExceptionFilter, keyof PageRequest>,
): Promise<Page<ReconciliationException>> {
  return toPage(await listExceptions(deps.store, organizationId, request, request.limit + 1), request.limit);
}

export interface ResolveInput {
  action: ResolutionAction;
  note: string;
  /** manual_match of a line no transfer was found for: the transfer it pays. */
  transfer?: string | undefined;
}

function refuseAction(action: ResolutionAction, kind: ExceptionKind, why: string): AppError {
  return new AppError({
    status: 422,
    code: 'invalid_state_transition',
    title: 'Action does not apply',
    detail: `${action} does not resolve a ${kind} exception: ${why}.`,
    param: 'action',
  });
}

async function accountOf(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  kind: 'rail_clearing' | 'reconciliation_adjustment' | 'rail_fee',
  rail: string,
  currency: Currency,
) {
  return ensureSystemAccount(tx, {
    id: deps.newId('ledgerAccount'),
    organizationId,
    kind,
    rail,
    currency,
    now: deps.now(),
  });
}

/** Resolves an open exception once (its row is locked), with the action's ledger effect and its evidence. */
export async function resolveException(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  input: ResolveInput,
  actor: EvidenceActor,
  resolvedBy: string,
): Promise<ReconciliationException> {
  const e = await findException(tx, organizationId, id, { forUpdate: true });
  if (!e) throw resourceMissing('reconciliation exception', id);
  if (e.status !== 'open') {
    throw new AppError({
      status: 409,
      code: 'invalid_state_transition',
      title: 'Exception resolved',
      detail: `Exception ${e.id} was resolved (${e.resolution}); a resolved exception does not change.`,
    });
  }
  const now = deps.now();
  const rail = String(e.details.rail ?? '');
  const currency = String(e.details.currency ?? '') as Currency;
  let transferId = e.transferId;
  let journalEntryId: string | null = null;
  const direct = async (debit: string, credit: string, amountMinor: bigint) => {
    const entryId = deps.newId('journalEntry');
    await postEntry(
      tx,
      {
        id: entryId,
        organizationId,
        transferId,
        kind: 'direct',
        holdEntryId: null,
        createdAt: now,
        postings: directPostings(debit, credit, amountMinor, currency),
      },
      now,
      'adjustment',
    );
    return entryId;
  };
  switch (input.action) {
    case 'manual_match': {
      // A safeguarding shortfall, or a trust balance that differs from the ledger's, concerns the trust
      // accounts, not a transfer: accepting it (made good or explained, as the note says) names none.
      if (transferId === null && !TRUST_ACCOUNT_KINDS.includes(e.kind)) {
        if (input.transfer === undefined) {
          throw validationError(
            'transfer',
            'manual_match of an unmatched line names the transfer it pays',
            'missing',
          );
        }
        const t = await lockTransfer(tx, organizationId, input.transfer);
        if (t.ledgerState === 'matched')
          throw refuseAction('manual_match', e.kind, `transfer ${t.id} is matched already`);
        transferId = t.id;
      }
      break;
    }
    case 'write_off': {
      if (!WRITTEN_OFF_KINDS.includes(e.kind)) {
        throw refuseAction(
          'write_off',
          e.kind,
          'only an amount difference, an unknown line or a partner callback is written off',
        );
      }
      if (e.kind !== 'amount_mismatch' && (e.details.amount_minor == null || !currency)) {
        throw refuseAction(
          'write_off',
          e.kind,
          'it names no amount and currency to write off; match it instead',
        );
      }
      const difference =
        e.kind === 'amount_mismatch'
          ? BigInt(String(e.details.statement_amount_minor)) - BigInt(String(e.details.ledger_amount_minor))
          : BigInt(String(e.details.amount_minor));
      const clearing = await accountOf(tx, deps, organizationId, 'rail_clearing', rail, currency);
      const adjustment = await accountOf(
        tx,
        deps,
        organizationId,
        'reconciliation_adjustment',
        rail,
        currency,
      );
      // The rail moved more than the ledger says: the difference is a loss booked out of clearing; less: a gain.
      if (difference > 0n) journalEntryId = await direct(adjustment, clearing, difference);
      else if (difference < 0n) journalEntryId = await direct(clearing, adjustment, -difference);
      break;
    }
    case 'book_fee': {
      if (e.kind !== 'fee_mismatch')
        throw refuseAction('book_fee', e.kind, 'only a fee the rail charged is booked');
      const clearing = await accountOf(tx, deps, organizationId, 'rail_clearing', rail, currency);
      const fees = await accountOf(tx, deps, organizationId, 'rail_fee', rail, currency);
      journalEntryId = await direct(fees, clearing, BigInt(String(e.details.fees_minor)));
      break;
    }
    case 'refund': {
      if (transferId === null) throw refuseAction('refund', e.kind, 'there is no transfer to refund');
      const t = await lockTransfer(tx, organizationId, transferId);
      if (t.status !== 'settled')
        throw refuseAction('refund', e.kind, `transfer ${t.id} is ${t.status}, not settled`);
      // The rail says the money never left: it goes back to the paying wallet (a reversal entry).
      await applyStatusChange(tx, deps, t, { to: 'returned', reason: 'refunded_per_reconciliation' });
      break;
    }
  }
  const resolved: ReconciliationException = {
    ...e,
    transferId,
    status: 'resolved',
    resolution: input.action,
    note: input.note,
    resolvedBy,
    journalEntryId,
    resolvedAt: now,
  };
  await saveResolution(tx, resolved);
  const events: EventRecord[] = [exceptionEvent(deps, resolved, 'reconciliation.exception.resolved', now)];
  if (transferId !== null && (await countOpenExceptionsOf(tx, transferId)) === 0) {
    const t = await lockTransfer(tx, organizationId, transferId);
    if (t.ledgerState === 'exception' || t.ledgerState === 'posted' || t.ledgerState === 'voided') {
      const matched: Transfer = { ...t, ledgerState: 'matched', updatedAt: now };
      await saveTransfer(tx, matched);
      events.push(ledgerMatchedEvent(deps, matched, now));
    }
  }
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'reconciliation.resolution',
      actor,
      transferId: transferId ?? undefined,
      data: {
        exception_id: e.id,
        kind: e.kind,
        action: input.action,
        note: input.note,
        details: e.details,
        journal_entry: journalEntryId,
        statement_id: e.statementId,
        line: e.line,
      },
    },
  ]);
  await recordEvents(tx, deps, events);
  return resolved;
}

export interface SandboxStatementInput {
  rail: string;
  from: string;
  to: string;
  mismatches?: readonly SandboxStatementMismatch[] | undefined;
}

/** The sandbox rail's statement for a period, ready to import (`POST /v1/reconciliation/statements`). */
export async function sandboxStatement(tx: Queryable, organizationId: string, input: SandboxStatementInput) {
  if (!(RAILS as readonly string[]).includes(input.rail) || input.rail === 'internal') {
    throw validationError(
      'rail',
      `rail must be one of: ${RAILS.filter((r) => r !== 'internal').join(', ')}`,
      'invalid_value',
    );
  }
  const from = dayStart(input.from, 'from');
  const to = dayStart(input.to, 'to');
  // What the rail carried, not what the ledger still has to match: a real rail's statement knows nothing
  // of our matching.
  const carried = await findCarriedPayouts(
    tx,
    organizationId,
    input.rail,
    from,
    new Date(to.getTime() + DAY_MS - 1),
  );
  return {
    object: 'statement' as const,
    rail: input.rail,
    from: input.from,
    to: input.to,
    lines: sandboxStatementLines(carried, input.mismatches ?? [], input.to),
  };
}
