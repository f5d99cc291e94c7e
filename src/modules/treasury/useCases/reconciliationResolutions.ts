/**
 * Resolving a reconciliation exception, once, by an operator: a manual match, a write-off or a fee booked
 * through a balanced adjustment entry, or a refund; each with who and why, as evidence. A transfer whose last
 * open exception is resolved becomes `matched`.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvents } from '../../../app/events.ts';
import { appendEvidence } from '../../../app/evidence.ts';
import { lockById } from '../../../app/reads.ts';
import { AppError, invalidStateTransition, validationError } from '../../../domain/errors.ts';
import type { EventRecord } from '../../../domain/events.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import type { Currency } from '../../../domain/money.ts';
import type { Transfer } from '../../../domain/transferRecord.ts';
import type { Queryable } from '../../../store/store.ts';
import { directPostings, ensureSystemAccount, postEntry } from '../../ledger/index.ts';
import { applyStatusChange, lockTransfer, saveTransfer } from '../../transfers/index.ts';
import type { ExceptionKind, ResolutionAction } from '../domain/reconciliation.ts';
import {
  countOpenExceptionsOf,
  findException,
  type ReconciliationException,
  saveResolution,
} from '../repository/reconciliation.ts';
import { exceptionEvent, ledgerMatchedEvent } from './reconciliationExceptions.ts';

/**
 * Kinds about no one transfer (the trust accounts as a whole; a network fee paid in an asset the ledger does
 * not keep): `manual_match` accepts them with a note and names no transfer.
 */
const NO_TRANSFER_KINDS: readonly ExceptionKind[] = [
  'safeguarding_shortfall',
  'trust_balance_mismatch',
  'unbooked_network_fee',
];

/** Kinds a write-off resolves: the amount is the difference, or what the line or callback says moved. */
const WRITTEN_OFF_KINDS: readonly ExceptionKind[] = [
  'amount_mismatch',
  'unmatched_line',
  'unmatched_callback',
  'late_callback',
  'unmatched_deposit',
];

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

/** The exception being resolved, with the rail and currency its details name, in the resolving transaction. */
interface Resolution {
  tx: Queryable;
  deps: Deps;
  organizationId: string;
  e: ReconciliationException;
  rail: string;
  currency: Currency;
  now: Date;
}

/** What an action did: the transfer the exception concerns now, and the adjustment entry it booked, if any. */
interface ActionEffect {
  transferId: string | null;
  journalEntryId: string | null;
}

async function accountOf(
  r: Resolution,
  kind: 'rail_clearing' | 'rail_settlement' | 'reconciliation_adjustment' | 'rail_fee',
) {
  return ensureSystemAccount(r.tx, {
    id: r.deps.newId('ledgerAccount'),
    organizationId: r.organizationId,
    kind,
    rail: r.rail,
    currency: r.currency,
    now: r.deps.now(),
  });
}

/**
 * The rail's account a difference is booked against: its clearing account for money out, and for money in
 * the partner's float it landed in (rail_settlement, as a rail credit books it).
 */
function railAccountOf(r: Resolution) {
  return accountOf(r, r.e.details.direction === 'inbound' ? 'rail_settlement' : 'rail_clearing');
}

/** A balanced adjustment entry in the exception's currency, on its transfer if it has one. */
async function postAdjustment(
  r: Resolution,
  debit: string,
  credit: string,
  amountMinor: bigint,
): Promise<string> {
  const entryId = r.deps.newId('journalEntry');
  await postEntry(
    r.tx,
    {
      id: entryId,
      organizationId: r.organizationId,
      transferId: r.e.transferId,
      kind: 'direct',
      holdEntryId: null,
      createdAt: r.now,
      postings: directPostings(debit, credit, amountMinor, r.currency),
    },
    r.now,
    'adjustment',
  );
  return entryId;
}

const lockException = lockById(findException, 'reconciliation exception');

/** The exception, locked; a 404 when there is none, a 409 when it is resolved already. */
async function lockOpenException(
  tx: Queryable,
  organizationId: string,
  id: string,
): Promise<ReconciliationException> {
  const e = await lockException(tx, organizationId, id);
  if (e.status !== 'open') {
    throw invalidStateTransition(
      'Exception resolved',
      `Exception ${e.id} was resolved (${e.resolution}); a resolved exception does not change.`,
    );
  }
  return e;
}

async function matchManually(r: Resolution, transfer: string | undefined): Promise<ActionEffect> {
  const { e } = r;
  // A safeguarding shortfall, or a trust balance that differs from the ledger's, concerns the trust
  // accounts, not a transfer, and an unbooked network fee the organization's own coin: accepting it (made
  // good or explained, as the note says) names none.
  if (e.transferId !== null || NO_TRANSFER_KINDS.includes(e.kind)) {
    return { transferId: e.transferId, journalEntryId: null };
  }
  if (transfer === undefined) {
    throw validationError(
      'transfer',
      'manual_match of an unmatched line names the transfer it pays',
      'missing',
    );
  }
  const t = await lockTransfer(r.tx, r.organizationId, transfer);
  if (t.ledgerState === 'matched')
    throw refuseAction('manual_match', e.kind, `transfer ${t.id} is matched already`);
  return { transferId: t.id, journalEntryId: null };
}

async function writeOff(r: Resolution): Promise<ActionEffect> {
  const { e, currency } = r;
  if (!WRITTEN_OFF_KINDS.includes(e.kind)) {
    throw refuseAction(
      'write_off',
      e.kind,
      'only an amount difference, an unknown line or a partner callback is written off',
    );
  }
  if (e.kind !== 'amount_mismatch' && (e.details.amount_minor == null || !currency)) {
    throw refuseAction('write_off', e.kind, 'it names no amount and currency to write off; match it instead');
  }
  const difference =
    e.kind === 'amount_mismatch'
      ? BigInt(String(e.details.statement_amount_minor)) - BigInt(String(e.details.ledger_amount_minor))
      : BigInt(String(e.details.amount_minor));
  // Money in runs the other way round: more received than the ledger credited is a gain.
  const inbound = e.details.direction === 'inbound';
  const clearing = await railAccountOf(r);
  const adjustment = await accountOf(r, 'reconciliation_adjustment');
  const paidOut = inbound ? -difference : difference;
  let journalEntryId: string | null = null;
  // The rail paid out more than the ledger says: the difference is a loss booked out of clearing; less: a gain.
  if (paidOut > 0n) journalEntryId = await postAdjustment(r, adjustment, clearing, paidOut);
  else if (paidOut < 0n) journalEntryId = await postAdjustment(r, clearing, adjustment, -paidOut);
  return { transferId: e.transferId, journalEntryId };
}

async function bookFee(r: Resolution): Promise<ActionEffect> {
  const { e } = r;
  if (e.kind !== 'fee_mismatch')
    throw refuseAction('book_fee', e.kind, 'only a fee the rail charged is booked');
  const clearing = await railAccountOf(r);
  const fees = await accountOf(r, 'rail_fee');
  const journalEntryId = await postAdjustment(r, fees, clearing, BigInt(String(e.details.fees_minor)));
  return { transferId: e.transferId, journalEntryId };
}

async function refund(r: Resolution): Promise<ActionEffect> {
  const { e } = r;
  if (e.transferId === null) throw refuseAction('refund', e.kind, 'there is no transfer to refund');
  const t = await lockTransfer(r.tx, r.organizationId, e.transferId);
  if (t.direction === 'inbound') {
    throw refuseAction('refund', e.kind, 'money in has no paying wallet of ours; write it off or match it');
  }
  if (t.status !== 'settled')
    throw refuseAction('refund', e.kind, `transfer ${t.id} is ${t.status}, not settled`);
  // The rail says the money never left: it goes back to the paying wallet (a reversal entry).
  await applyStatusChange(r.tx, r.deps, t, { to: 'returned', reason: 'refunded_per_reconciliation' });
  return { transferId: e.transferId, journalEntryId: null };
}

async function applyAction(r: Resolution, input: ResolveInput): Promise<ActionEffect> {
  switch (input.action) {
    case 'manual_match':
      return matchManually(r, input.transfer);
    case 'write_off':
      return writeOff(r);
    case 'book_fee':
      return bookFee(r);
    case 'refund':
      return refund(r);
  }
}

/** A transfer with no open exception left is matched (`ledger.matched` among the resolution's events). */
async function matchWhenNoneOpen(
  r: Resolution,
  transferId: string | null,
  events: EventRecord[],
): Promise<void> {
  if (transferId === null || (await countOpenExceptionsOf(r.tx, transferId)) !== 0) return;
  const t = await lockTransfer(r.tx, r.organizationId, transferId);
  if (t.ledgerState === 'exception' || t.ledgerState === 'posted' || t.ledgerState === 'voided') {
    const matched: Transfer = { ...t, ledgerState: 'matched', updatedAt: r.now };
    await saveTransfer(r.tx, matched);
    events.push(ledgerMatchedEvent(r.deps, matched, r.now));
  }
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
  const e = await lockOpenException(tx, organizationId, id);
  const now = deps.now();
  const rail = String(e.details.rail ?? '');
  const currency = String(e.details.currency ?? '') as Currency;
  const r: Resolution = { tx, deps, organizationId, e, rail, currency, now };
  const { transferId, journalEntryId } = await applyAction(r, input);
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
  await matchWhenNoneOpen(r, transferId, events);
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
