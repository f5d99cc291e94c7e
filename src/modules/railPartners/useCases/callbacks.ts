/**
 * Partner callbacks: stored as they arrived (their own transaction, before they are acknowledged), then
 * applied once in another. Applying reads the callback with the partner's adapter and moves the payout it
 * names: a repeated callback (the same bytes) is recorded as a duplicate and changes nothing; one that
 * agrees with what is recorded changes nothing; one about a payout we cannot find, or contradicting a
 * final one, goes to the reconciliation exception queue. A callback that arrives before the rail worker
 * has recorded the partner's reference is tried again for RAIL_CALLBACK_MATCH_GRACE_MS first.
 */
import { createHash } from 'node:crypto';
import { moveCollection } from '../../../app/collections.ts';
import type { Deps } from '../../../app/deps.ts';
import { openException } from '../../../app/reconciliation.ts';
import { applyStatusChange } from '../../../app/transfers.ts';
import { type Collection, isFinalCollection } from '../../../domain/collections.ts';
import { AppError } from '../../../domain/errors.ts';
import { type Page, type PageRequest, toPage } from '../../../domain/pagination.ts';
import type { Transfer } from '../../../domain/transferRecord.ts';
import { type CallbackReport, MalformedCallbackError } from '../../../rails/partner.ts';
import { findCollection, findCollectionByPartnerReference } from '../../../store/repositories/collections.ts';
import {
  findTransfer,
  findTransferByRailReference,
  saveTransfer,
} from '../../../store/repositories/transfers.ts';
import type { Queryable } from '../../../store/store.ts';
import type { RailCallbackStatus } from '../domain.ts';
import {
  deferRailCallback,
  finishRailCallback,
  insertRailCallback,
  listRailCallbacks,
  lockReceivedCallback,
  type RailCallback,
} from '../repository/callbacks.ts';
import { findRailPartnerConfig, findRailPartnerConfigByToken } from '../repository/partners.ts';
import type { RailPartnerDirectory } from './directory.ts';

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { RailCallback } from '../repository/callbacks.ts';

/** How long a callback about a payout we cannot find yet is tried again before it is an exception. */
export const RAIL_CALLBACK_MATCH_GRACE_MS = 5 * 60_000;
/** Between those tries. */
export const RAIL_CALLBACK_RETRY_MS = 5_000;
/** After applying threw (the database, a bug): tried again this much later, not in a tight loop. */
export const RAIL_CALLBACK_ERROR_RETRY_MS = 60_000;
/** Bytes of a callback body at most (partners send a few kilobytes). */
export const RAIL_CALLBACK_BODY_BYTES_MAX = 64 * 1024;
/** Headers kept with a callback: what a signature or a dispute needs, not cookies or hop-by-hop ones. */
const KEPT_HEADERS = ['content-type', 'user-agent', 'x-forwarded-for', 'x-signature', 'x-callback-signature'];

const FINAL_FAILED: readonly Transfer['status'][] = ['failed', 'canceled', 'rejected', 'expired', 'returned'];

export interface ArrivingCallback {
  rail: string;
  token: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: string;
}

export interface CallbackReceipt {
  callbackId: string;
  status: RailCallbackStatus;
}

function unknownCallbackTarget(): AppError {
  return new AppError({
    status: 404,
    code: 'callback_unknown',
    title: 'Unknown callback address',
    detail: 'No rail partner configuration has this callback address.',
  });
}

/** Stores a callback, then applies it; the answer says what it was found to be. */
export async function receiveRailCallback(
  deps: Deps,
  directory: RailPartnerDirectory,
  arriving: ArrivingCallback,
): Promise<CallbackReceipt> {
  const config = await findRailPartnerConfigByToken(deps.store, arriving.token);
  // A disabled configuration still takes callbacks: payouts made while it was active report late.
  if (!config || config.rail !== arriving.rail) throw unknownCallbackTarget();
  const now = deps.now();
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = arriving.headers[name];
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const callback: RailCallback = {
    id: deps.newId('railCallback'),
    organizationId: config.organizationId,
    configId: config.id,
    partner: config.partner,
    path: arriving.path,
    headers,
    rawBody: arriving.rawBody,
    bodySha256: createHash('sha256').update(arriving.rawBody, 'utf8').digest('hex'),
    status: 'received',
    transferId: null,
    detail: null,
    receivedAt: now,
    nextAttemptAt: now,
    processedAt: null,
  };
  const { stored } = await deps.store.transaction((tx) => insertRailCallback(tx, callback));
  if (stored.status === 'duplicate') {
    deps.metrics?.observeRailCallback(config.partner, 'duplicate');
    return { callbackId: stored.id, status: 'duplicate' };
  }
  let status: RailCallbackStatus = 'received';
  try {
    status = (await applyRailCallback(deps, directory, stored.id)) ?? 'received';
  } catch (error) {
    // Stored, so acknowledged: the sweep applies it later.
    await deferRailCallback(
      deps.store,
      stored.id,
      new Date(deps.now().getTime() + RAIL_CALLBACK_ERROR_RETRY_MS),
      `apply failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return { callbackId: stored.id, status };
}

async function findReported(
  tx: Queryable,
  callback: RailCallback,
  rail: Transfer['rail'],
  report: Extract<CallbackReport, { reference: string }>,
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

/** What a collection's callback does: moves it once; agreeing again changes nothing; contradicting is an exception. */
async function applyToCollection(
  tx: Queryable,
  deps: Deps,
  collection: Collection,
  report: Extract<CallbackReport, { reference: string }>,
): Promise<{ status: RailCallbackStatus; transferId: string | null; detail: string | null }> {
  const outcome = report.outcome;
  if (!isFinalCollection(collection.status)) {
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

/**
 * Applies one stored callback in one transaction, if it is still to be applied (another process may have
 * taken it). Returns what it became, or undefined when there was nothing to do.
 */
export async function applyRailCallback(
  deps: Deps,
  directory: RailPartnerDirectory,
  callbackId: string,
): Promise<RailCallbackStatus | undefined> {
  const result = await deps.store.transaction(async (tx) => {
    const callback = await lockReceivedCallback(tx, callbackId);
    if (!callback) return undefined;
    const config = await findRailPartnerConfig(tx, callback.organizationId, callback.configId);
    if (!config) return undefined;
    const now = deps.now();
    const finish = async (status: RailCallbackStatus, transferId: string | null, detail: string | null) => {
      await finishRailCallback(tx, callback.id, { status, transferId, detail, at: now });
      return { status, partner: callback.partner };
    };
    let report: CallbackReport;
    try {
      report = directory.adapterFor(config).parseCallback({
        path: callback.path,
        headers: callback.headers,
        rawBody: callback.rawBody,
      });
    } catch (error) {
      if (error instanceof MalformedCallbackError) return finish('malformed', null, error.message);
      throw error;
    }
    if (report.kind === 'ignored') return finish('ignored', null, report.reason);
    if (report.kind === 'collection') {
      const collection =
        (await findCollectionByPartnerReference(tx, callback.organizationId, report.reference)) ??
        (report.idempotencyReference === undefined
          ? undefined
          : await findCollection(tx, callback.organizationId, report.idempotencyReference, {
              forUpdate: true,
            }));
      if (collection) {
        const applied = await applyToCollection(tx, deps, collection, report);
        await finishRailCallback(tx, callback.id, {
          status: applied.status,
          transferId: applied.transferId,
          collectionId: collection.id,
          detail: applied.detail,
          at: now,
        });
        return { status: applied.status, partner: callback.partner };
      }
    }
    const transfer =
      report.kind === 'payout' ? await findReported(tx, callback, config.rail, report) : undefined;
    const details = {
      partner: config.partner,
      callback_id: callback.id,
      reference: report.reference,
      reported: report.outcome.kind,
      rail: config.rail,
    };
    if (!transfer) {
      if (now.getTime() - callback.receivedAt.getTime() < RAIL_CALLBACK_MATCH_GRACE_MS) {
        await deferRailCallback(
          tx,
          callback.id,
          new Date(now.getTime() + RAIL_CALLBACK_RETRY_MS),
          'no transfer with this reference yet',
        );
        return { status: 'received' as const, partner: callback.partner };
      }
      await openException(tx, deps, {
        organizationId: callback.organizationId,
        transferId: null,
        kind: 'unmatched_callback',
        details: {
          ...details,
          amount_minor: report.amountMinor === undefined ? null : report.amountMinor.toString(),
          currency: null,
        },
      });
      return finish('exception', null, 'no transfer has this reference');
    }
    const outcome = report.outcome;
    if (transfer.status === 'pending' || transfer.status === 'processing') {
      if (outcome.kind === 'processing') {
        await saveTransfer(tx, {
          ...transfer,
          railReference: transfer.railReference ?? report.reference,
          nextRailCheckAt: outcome.checkAt,
          updatedAt: now,
        });
        return finish('unchanged', transfer.id, 'still processing');
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
          organizationId: callback.organizationId,
          transferId: transfer.id,
          kind: 'amount_mismatch',
          details: {
            ...details,
            statement_amount_minor: report.amountMinor.toString(),
            ledger_amount_minor: transfer.amountMinor.toString(),
            currency: transfer.currency,
          },
        });
        return finish('exception', transfer.id, 'settled for another amount than the transfer');
      }
      return finish('applied', transfer.id, null);
    }
    const agrees =
      outcome.kind === 'processing' ||
      (outcome.kind === 'settled' && transfer.status === 'settled') ||
      (outcome.kind === 'failed' && FINAL_FAILED.includes(transfer.status));
    if (agrees) return finish('unchanged', transfer.id, `already ${transfer.status}`);
    await openException(tx, deps, {
      organizationId: callback.organizationId,
      transferId: transfer.id,
      kind: 'late_callback',
      details: {
        ...details,
        transfer_status: transfer.status,
        amount_minor: transfer.amountMinor.toString(),
        currency: transfer.currency,
      },
    });
    return finish(
      'exception',
      transfer.id,
      `reported ${outcome.kind} for a transfer already ${transfer.status}`,
    );
  });
  if (result) deps.metrics?.observeRailCallback(result.partner, result.status);
  return result?.status;
}

export async function listOrganizationRailCallbacks(
  deps: Deps,
  organizationId: string,
  request: PageRequest & { status?: RailCallbackStatus | undefined; transferId?: string | undefined },
): Promise<Page<RailCallback>> {
  return toPage(
    await listRailCallbacks(deps.store, organizationId, request, request.limit + 1),
    request.limit,
  );
}
