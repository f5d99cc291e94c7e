/**
 * The reconciliation exception queue: every difference between what a rail, a bank or the trust accounts
 * report and what the ledger says is an exception (`ledger_state: exception` on its transfer, if it has one)
 * until an operator resolves it (reconciliationResolutions.ts). Statements open them as they are imported
 * (reconciliationStatements.ts); partner callbacks, bank deposits and the safeguarding check open them here.
 */

import type { Deps } from '../../../app/deps.ts';
import { newEvent, recordEvents } from '../../../app/events.ts';
import { getById, listPage } from '../../../app/reads.ts';
import type { EventRecord } from '../../../domain/events.ts';
import { formatAmount } from '../../../domain/money.ts';
import type { Transfer } from '../../../domain/transferRecord.ts';
import type { Queryable } from '../../../store/store.ts';
import { lockTransfer, saveTransfer } from '../../transfers/index.ts';
import type { ExceptionKind } from '../domain/reconciliation.ts';
import {
  type ExceptionFilter,
  findException,
  insertExceptions,
  listExceptions,
  type ReconciliationException,
} from '../repository/reconciliation.ts';

// The record type the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { ReconciliationException } from '../repository/reconciliation.ts';

/** `ledger.matched`: a transfer's ledger_state became `matched`, by a statement line or a resolution. */
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

export function exceptionEvent(deps: Deps, e: ReconciliationException, type: string, now: Date): EventRecord {
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

export function newException(
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

export const getException = getById<ReconciliationException>(findException, 'reconciliation exception');

export const listReconciliationExceptions = listPage<ExceptionFilter, ReconciliationException>(
  listExceptions,
);
