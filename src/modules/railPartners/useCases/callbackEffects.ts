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
import { deferRailCallback, type RailCallback } from '../repository/callbacks.ts';

const FINAL_FAILED: readonly Transfer['status'][] = ['failed', 'canceled', 'rejected', 'expired', 'returned'];

/** A callback that names a payout or a collection (not an ignored one). */
export type NamingReport = Extract<CallbackReport, { kind: 'payout' | 'collection' | 'reversal' }>;

/** What applying a callback came to, recorded on it: its status, the transfer it touched, and why. */
export interface CallbackEffect {
  status: RailCallbackStatus;
  transferId: string | null;
  detail: string | null;
}

/**
 * Defers a callback that came before what it names can be found (a payout's reference not yet recorded, an
 * answer racing its question): while it is younger than `graceMs` it is applied again `retryMs` later, with
 * `why` recorded. Whether it was deferred.
 */
export async function deferredWhileYoung(
  tx: Queryable,
  callback: RailCallback,
  now: Date,
  wait: { graceMs: number; retryMs: number; why: string },
): Promise<boolean> {
  if (now.getTime() - callback.receivedAt.getTime() >= wait.graceMs) return false;
  await deferRailCallback(tx, callback.id, new Date(now.getTime() + wait.retryMs), wait.why);
  return true;
}

/** What a payout callback's exception records about it, whatever the exception. */
export type CallbackExceptionDetails = Record<string, string>;

/**
 * The payout a callback names, locked: by the partner's reference, or by our idempotency reference; on any
 * of the rails the callback's configuration carries.
 */
export async function findReported(
  tx: Queryable,
  callback: RailCallback,
  rails: readonly Transfer['rail'][],
  report: NamingReport,
): Promise<Transfer | undefined> {
  for (const rail of rails) {
    const byReference = await findTransferByRailReference(
      tx,
      callback.organizationId,
      rail,
      report.reference,
    );
    if (byReference) return findTransfer(tx, callback.organizationId, byReference, { forUpdate: true });
  }
  if (report.idempotencyReference === undefined) return undefined;
  const byId = await findTransfer(tx, callback.organizationId, report.idempotencyReference, {
    forUpdate: true,
  });
  // The rail worker may have recorded this very reference between the look-up above and the lock.
  const sameReference = byId?.railReference === null || byId?.railReference === report.reference;
  return byId && rails.includes(byId.rail) && sameReference ? byId : undefined;
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

/** The final statuses that agree with a reported settlement or failure, for each kind of record. */
const AGREEING_FINAL_STATUSES: Record<
  CallbackSubject['noun'],
  { settled: readonly string[]; failed: readonly string[] }
> = {
  collection: { settled: ['succeeded'], failed: ['failed'] },
  transfer: { settled: ['settled'], failed: FINAL_FAILED },
};

/**
 * The payout or collection a callback names, as its comparison and its exceptions see it: the record and
 * the transfer it stands for (a collection's may not exist yet).
 */
interface CallbackSubject {
  noun: 'collection' | 'transfer';
  record: { organizationId: string; status: string; amountMinor: bigint; currency: string };
  transferId: string | null;
}

function collectionSubject(collection: Collection): CallbackSubject {
  return { noun: 'collection', record: collection, transferId: collection.transferId };
}

function transferSubject(transfer: Transfer): CallbackSubject {
  return { noun: 'transfer', record: transfer, transferId: transfer.id };
}

/** Opens an exception about the subject's transfer (or its collection, when it has none yet). */
function openSubjectException(
  tx: Queryable,
  deps: Deps,
  subject: CallbackSubject,
  kind: 'amount_mismatch' | 'late_callback',
  details: CallbackExceptionDetails,
) {
  return openException(tx, deps, {
    organizationId: subject.record.organizationId,
    transferId: subject.transferId,
    kind,
    details,
  });
}

/**
 * After a move to the reported outcome: a settlement reported for another amount than recorded opens an
 * amount mismatch exception (saying `mismatch`); anything else applied.
 */
async function settledAmountEffect(
  tx: Queryable,
  deps: Deps,
  subject: CallbackSubject,
  report: NamingReport,
  details: CallbackExceptionDetails,
  mismatch: string,
): Promise<CallbackEffect> {
  if (
    report.outcome.kind !== 'settled' ||
    report.amountMinor === undefined ||
    report.amountMinor === subject.record.amountMinor
  ) {
    return { status: 'applied', transferId: subject.transferId, detail: null };
  }
  await openSubjectException(tx, deps, subject, 'amount_mismatch', {
    ...details,
    statement_amount_minor: report.amountMinor.toString(),
    ledger_amount_minor: subject.record.amountMinor.toString(),
    currency: subject.record.currency,
  });
  return { status: 'exception', transferId: subject.transferId, detail: mismatch };
}

/** A final payout or collection: a callback that agrees changes nothing, one that contradicts is a late callback. */
async function compareFinal(
  tx: Queryable,
  deps: Deps,
  subject: CallbackSubject,
  report: NamingReport,
  details: CallbackExceptionDetails,
): Promise<CallbackEffect> {
  const outcome = report.outcome;
  const { record } = subject;
  const agrees =
    outcome.kind === 'processing' ||
    AGREEING_FINAL_STATUSES[subject.noun][outcome.kind].includes(record.status);
  if (agrees)
    return { status: 'unchanged', transferId: subject.transferId, detail: `already ${record.status}` };
  await openSubjectException(tx, deps, subject, 'late_callback', {
    ...details,
    amount_minor: record.amountMinor.toString(),
    currency: record.currency,
  });
  return {
    status: 'exception',
    transferId: subject.transferId,
    detail: `reported ${outcome.kind} for a ${subject.noun} already ${record.status}`,
  };
}

/** What a collection's callback does: moves it once; agreeing again changes nothing; contradicting is an exception. */
export async function applyToCollection(
  tx: Queryable,
  deps: Deps,
  collection: Collection,
  report: NamingReport,
): Promise<CallbackEffect> {
  if (!isFinalCollection(collection.status)) return moveOpenCollection(tx, deps, collection, report);
  return compareFinal(tx, deps, collectionSubject(collection), report, {
    collection_id: collection.id,
    reference: report.reference,
    reported: report.outcome.kind,
    collection_status: collection.status,
    rail: collection.rail,
  });
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
      ? {
          to: 'succeeded',
          partnerReference: current.partnerReference ?? report.reference,
          partnerReceipt: report.partnerTransactionId,
        }
      : { to: 'failed', failureCode: outcome.failureCode },
  );
  return settledAmountEffect(
    tx,
    deps,
    { ...collectionSubject(collection), transferId: moved.transferId },
    report,
    { collection_id: collection.id, rail: collection.rail },
    'paid another amount than asked',
  );
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
  if (transfer.status !== 'pending' && transfer.status !== 'processing') {
    return compareFinal(tx, deps, transferSubject(transfer), report, {
      ...details,
      transfer_status: transfer.status,
    });
  }
  // Still open: it records the partner's reference, and settles or fails as reported.
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
      ? {
          to: 'settled',
          railReference,
          partnerReceipt: report.partnerTransactionId,
          reason: 'settled_per_callback',
          networkFee: outcome.networkFee,
        }
      : { to: 'failed', failureCode: outcome.failureCode, railReference, reason: 'failed_per_callback' },
  );
  return settledAmountEffect(
    tx,
    deps,
    transferSubject(transfer),
    report,
    details,
    'settled for another amount than the transfer',
  );
}
