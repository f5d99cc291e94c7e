/**
 * What an applied callback does to the payout or collection it names, inside the applying transaction:
 * finds it under lock, moves it once; a callback agreeing with what is recorded changes nothing, and one
 * contradicting a final status, or settling for another amount, opens a reconciliation exception.
 */

import type { Deps } from '../../../app/deps.ts';
import type { Transfer } from '../../../domain/transferRecord.ts';
import type { CallbackReport } from '../../../rails/partner.ts';
import type { Queryable } from '../../../store/store.ts';
import {
  type Collection,
  findCollection,
  findCollectionByPartnerReference,
  isFinalCollection,
  moveCollection,
} from '../../collections/index.ts';
import {
  applyStatusChange,
  findTransfer,
  findTransferByRailReference,
  saveTransfer,
} from '../../transfers/index.ts';
import { openException } from '../../treasury/index.ts';
import type { RailCallbackStatus } from '../domain.ts';
import type { RailCallback } from '../repository/callbacks.ts';

const FINAL_FAILED: readonly Transfer['status'][] = ['failed', 'canceled', 'rejected', 'expired', 'returned'];

/** A callback that names a payout or a collection (not an ignored one). */
export type NamingReport = Extract<CallbackReport, { reference: string }>;

/** What applying a callback came to, recorded on it: its status, the transfer it touched, and why. */
export interface CallbackEffect {
  status: RailCallbackStatus;
  transferId: string | null;
  detail: string | null;
}

/** What a payout callback's exception records about it, whatever the exception. */
export type CallbackExceptionDetails = Record<string, string>;

/** The payout a callback names, locked: by the partner's reference, or by our idempotency reference. */
export async function findReported(
  tx: Queryable,
  callback: RailCallback,
  rail: Transfer['rail'],
  report: NamingReport,
): Promise<Transfer | undefined> {
  const byReference = await findTransferByRailReference(tx, callback.organizationId, rail, report.reference);
  if (byReference) return findTransfer(tx, callback.organizationId, byReference, { forUpdate: true });
  if (report.idempotencyReference === undefined) return undefined;
  const byId = await findTransfer(tx, callback.organizationId, report.idempotencyReference, {
    forUpdate: true,
  });
  // The rail worker may have recorded this very reference between the look-up above and the lock.
  const sameReference = byId?.railReference === null || byId?.railReference === report.reference;
  return byId && byId.rail === rail && sameReference ? byId : undefined;
}

/** The collection a callback names: by the partner's reference, or locked by our idempotency reference. */
export async function findReportedCollection(
  tx: Queryable,
  callback: RailCallback,
  report: NamingReport,
): Promise<Collection | undefined> {
  return (
    (await findCollectionByPartnerReference(tx, callback.organizationId, report.reference)) ??
    (report.idempotencyReference === undefined
      ? undefined
      : await findCollection(tx, callback.organizationId, report.idempotencyReference, {
          forUpdate: true,
        }))
  );
}

/** What a collection's callback does: moves it once; agreeing again changes nothing; contradicting is an exception. */
export async function applyToCollection(
  tx: Queryable,
  deps: Deps,
  collection: Collection,
  report: NamingReport,
): Promise<CallbackEffect> {
  if (!isFinalCollection(collection.status)) return moveOpenCollection(tx, deps, collection, report);
  return compareFinalCollection(tx, deps, collection, report);
}

/** A collection still open moves to the reported outcome (through processing when it was pending). */
async function moveOpenCollection(
  tx: Queryable,
  deps: Deps,
  collection: Collection,
  report: NamingReport,
): Promise<CallbackEffect> {
  const outcome = report.outcome;
  if (outcome.kind === 'processing')
    return { status: 'unchanged', transferId: null, detail: 'still processing' };
  let current = collection;
  if (current.status === 'pending') {
    current = await moveCollection(tx, deps, current, {
      to: 'processing',
      partnerReference: report.reference,
    });
  }
  const moved = await moveCollection(
    tx,
    deps,
    current,
    outcome.kind === 'settled'
      ? { to: 'succeeded', partnerReference: current.partnerReference ?? report.reference }
      : { to: 'failed', failureCode: outcome.failureCode },
  );
  if (
    outcome.kind === 'settled' &&
    report.amountMinor !== undefined &&
    report.amountMinor !== collection.amountMinor
  ) {
    await openException(tx, deps, {
      organizationId: collection.organizationId,
      transferId: moved.transferId,
      kind: 'amount_mismatch',
      details: {
        collection_id: collection.id,
        statement_amount_minor: report.amountMinor.toString(),
        ledger_amount_minor: collection.amountMinor.toString(),
        rail: collection.rail,
        currency: collection.currency,
      },
    });
    return { status: 'exception', transferId: moved.transferId, detail: 'paid another amount than asked' };
  }
  return { status: 'applied', transferId: moved.transferId, detail: null };
}

/** A final collection: a callback that agrees changes nothing, one that contradicts is a late callback. */
async function compareFinalCollection(
  tx: Queryable,
  deps: Deps,
  collection: Collection,
  report: NamingReport,
): Promise<CallbackEffect> {
  const outcome = report.outcome;
  const agrees =
    outcome.kind === 'processing' ||
    (outcome.kind === 'settled' && collection.status === 'succeeded') ||
    (outcome.kind === 'failed' && collection.status === 'failed');
  if (agrees)
    return { status: 'unchanged', transferId: collection.transferId, detail: `already ${collection.status}` };
  await openException(tx, deps, {
    organizationId: collection.organizationId,
    transferId: collection.transferId,
    kind: 'late_callback',
    details: {
      collection_id: collection.id,
      reference: report.reference,
      reported: outcome.kind,
      collection_status: collection.status,
      amount_minor: collection.amountMinor.toString(),
      currency: collection.currency,
      rail: collection.rail,
    },
  });
  return {
    status: 'exception',
    transferId: collection.transferId,
    detail: `reported ${outcome.kind} for a collection already ${collection.status}`,
  };
}

/** What a payout's callback does: moves it once; agreeing again changes nothing; contradicting is an exception. */
export async function applyToTransfer(
  tx: Queryable,
  deps: Deps,
  transfer: Transfer,
  report: NamingReport,
  details: CallbackExceptionDetails,
  now: Date,
): Promise<CallbackEffect> {
  if (transfer.status === 'pending' || transfer.status === 'processing')
    return moveOpenTransfer(tx, deps, transfer, report, details, now);
  return compareFinalTransfer(tx, deps, transfer, report, details);
}

/** A payout still open records the partner's reference, and settles or fails as reported. */
async function moveOpenTransfer(
  tx: Queryable,
  deps: Deps,
  transfer: Transfer,
  report: NamingReport,
  details: CallbackExceptionDetails,
  now: Date,
): Promise<CallbackEffect> {
  const outcome = report.outcome;
  if (outcome.kind === 'processing') {
    await saveTransfer(tx, {
      ...transfer,
      railReference: transfer.railReference ?? report.reference,
      nextRailCheckAt: outcome.checkAt,
      updatedAt: now,
    });
    return { status: 'unchanged', transferId: transfer.id, detail: 'still processing' };
  }
  const railReference = transfer.railReference === null ? report.reference : undefined;
  await applyStatusChange(
    tx,
    deps,
    transfer,
    outcome.kind === 'settled'
      ? { to: 'settled', railReference, reason: 'settled_per_callback' }
      : { to: 'failed', failureCode: outcome.failureCode, railReference, reason: 'failed_per_callback' },
  );
  if (
    outcome.kind === 'settled' &&
    report.amountMinor !== undefined &&
    report.amountMinor !== transfer.amountMinor
  ) {
    await openException(tx, deps, {
      organizationId: transfer.organizationId,
      transferId: transfer.id,
      kind: 'amount_mismatch',
      details: {
        ...details,
        statement_amount_minor: report.amountMinor.toString(),
        ledger_amount_minor: transfer.amountMinor.toString(),
        currency: transfer.currency,
      },
    });
    return {
      status: 'exception',
      transferId: transfer.id,
      detail: 'settled for another amount than the transfer',
    };
  }
  return { status: 'applied', transferId: transfer.id, detail: null };
}

/** A final payout: a callback that agrees changes nothing, one that contradicts is a late callback. */
async function compareFinalTransfer(
  tx: Queryable,
  deps: Deps,
  transfer: Transfer,
  report: NamingReport,
  details: CallbackExceptionDetails,
): Promise<CallbackEffect> {
  const outcome = report.outcome;
  const agrees =
    outcome.kind === 'processing' ||
    (outcome.kind === 'settled' && transfer.status === 'settled') ||
    (outcome.kind === 'failed' && FINAL_FAILED.includes(transfer.status));
  if (agrees) return { status: 'unchanged', transferId: transfer.id, detail: `already ${transfer.status}` };
  await openException(tx, deps, {
    organizationId: transfer.organizationId,
    transferId: transfer.id,
    kind: 'late_callback',
    details: {
      ...details,
      transfer_status: transfer.status,
      amount_minor: transfer.amountMinor.toString(),
      currency: transfer.currency,
    },
  });
  return {
    status: 'exception',
    transferId: transfer.id,
    detail: `reported ${outcome.kind} for a transfer already ${transfer.status}`,
  };
}
