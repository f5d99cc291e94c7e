/**
 * Partner callbacks: stored as they arrived (their own transaction, before they are acknowledged), then
 * applied once in another. Applying reads the callback with the partner's adapter and moves the payout it
 * names: a repeated callback (the same bytes) is recorded as a duplicate and changes nothing; one that
 * agrees with what is recorded changes nothing; one about a payout we cannot find, or contradicting a
 * final one, goes to the reconciliation exception queue. A callback that arrives before the rail worker
 * has recorded the partner's reference is tried again for RAIL_CALLBACK_MATCH_GRACE_MS first. What a
 * callback does to the payout or collection it names is callbackEffects.ts; to a reversal, reversalEffects.ts;
 * a payer's own payment (a credit report) is creditCallbacks.ts, and the partner's answer verifying one
 * creditVerification.ts.
 */
import { createHash } from 'node:crypto';
import type { Deps } from '../../../app/deps.ts';
import { listPage } from '../../../app/reads.ts';
import { AppError } from '../../../domain/errors.ts';
import {
  type ArrivedCallback,
  type CallbackReport,
  CallbackVerificationUnavailableError,
  MalformedCallbackError,
  type PartnerRail,
} from '../../../rails/partner.ts';
import type { Queryable } from '../../../store/store.ts';
import { openException } from '../../treasury/index.ts';
import { type RailCallbackStatus, type RailPartnerConfig, railsCarriedBy } from '../domain.ts';
import {
  deferRailCallback,
  finishRailCallback,
  insertRailCallback,
  listRailCallbacks,
  lockReceivedCallback,
  type RailCallback,
} from '../repository/callbacks.ts';
import { findRailPartnerConfig, findRailPartnerConfigByToken } from '../repository/partners.ts';
import { applyBalancesReport } from './balanceQueries.ts';
import {
  applyToCollection,
  applyToTransfer,
  type CallbackEffect,
  type CallbackExceptionDetails,
  deferredWhileYoung,
  findReported,
  findReportedCollection,
  type NamingReport,
} from './callbackEffects.ts';
import { applyCreditReport, creditCallbackAnswer } from './creditCallbacks.ts';
import { applyCreditVerificationReport } from './creditVerification.ts';
import { applyCustodyDeposit } from './custodyDeposits.ts';
import { applyCustodySweepReport } from './custodySweepReports.ts';
import type { RailPartnerDirectory } from './directory.ts';
import { applyReversalReport } from './reversalEffects.ts';

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
const KEPT_HEADERS = [
  'content-type',
  'user-agent',
  'x-forwarded-for',
  'x-signature',
  'x-callback-signature',
  'flutterwave-signature',
  'fireblocks-signature',
  'fireblocks-webhook-signature',
];
/** Headers that carry a shared secret as is (Flutterwave's `verif-hash`): kept only as `<name>-sha256`. */
const DIGESTED_HEADERS = ['verif-hash'];

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
  /** The body the partner expects back, where it reads one (a C2B validation's decision); creditCallbacks.ts. */
  answer?: Record<string, unknown> | undefined;
}

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** A signature that cannot be checked now: nothing stored, and the partner is told to send it again. */
function verificationUnavailable(why: string): AppError {
  return new AppError({
    status: 503,
    code: 'service_unavailable',
    title: 'Callback signature cannot be checked now',
    detail: `The callback was not stored: ${why}. Send it again later.`,
  });
}

/**
 * The partner's asynchronous signature check (PartnerRail.verifyCallback), before anything is stored: how
 * it was verified, or the reason it was refused (stored `malformed`); throws a 503 when it cannot be
 * checked now.
 */
async function verifyArriving(
  directory: RailPartnerDirectory,
  config: RailPartnerConfig,
  arrived: ArrivedCallback,
): Promise<{ verifiedBy: string | null; refusal?: string }> {
  let adapter: PartnerRail;
  try {
    adapter = directory.adapterFor(config);
  } catch {
    // An adapter that cannot be built now: stored unverified, as before, and applying it meets the same fault.
    return { verifiedBy: null };
  }
  if (!adapter.verifyCallback) return { verifiedBy: null };
  try {
    return { verifiedBy: (await adapter.verifyCallback(arrived)) ?? null };
  } catch (error) {
    if (error instanceof CallbackVerificationUnavailableError) throw verificationUnavailable(error.message);
    if (error instanceof MalformedCallbackError) return { verifiedBy: null, refusal: error.message };
    throw error;
  }
}

function unknownCallbackTarget(): AppError {
  return new AppError({
    status: 404,
    code: 'callback_unknown',
    title: 'Unknown callback address',
    detail: 'No rail partner configuration has this callback address.',
  });
}

/** The headers kept with a callback: KEPT_HEADERS as sent, DIGESTED_HEADERS as `<name>-sha256`. */
function keptHeaders(arriving: ArrivingCallback['headers']): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = arriving[name];
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  for (const name of DIGESTED_HEADERS) {
    const value = arriving[name];
    if (typeof value === 'string') headers[`${name}-sha256`] = sha256Hex(value);
  }
  return headers;
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
  const headers = keptHeaders(arriving.headers);
  const checked = await verifyArriving(directory, config, {
    path: arriving.path,
    headers,
    rawBody: arriving.rawBody,
  });
  const callback: RailCallback = {
    id: deps.newId('railCallback'),
    organizationId: config.organizationId,
    configId: config.id,
    partner: config.partner,
    path: arriving.path,
    headers,
    rawBody: arriving.rawBody,
    bodySha256: sha256Hex(arriving.rawBody),
    status: 'received',
    transferId: null,
    detail: null,
    receivedAt: now,
    nextAttemptAt: now,
    processedAt: null,
    verifiedBy: checked.verifiedBy,
  };
  const { stored } = await deps.store.transaction(async (tx) => {
    const inserted = await insertRailCallback(tx, callback);
    if (checked.refusal !== undefined && inserted.stored.status !== 'duplicate') {
      // Kept for a dispute, never applied.
      await finishRailCallback(tx, callback.id, {
        status: 'malformed',
        transferId: null,
        detail: checked.refusal,
        at: now,
      });
      return { stored: { ...inserted.stored, status: 'malformed' as const } };
    }
    return inserted;
  });
  const answer = () => creditCallbackAnswer(deps.store, directory, config, callback);
  if (stored.status === 'duplicate' || stored.status === 'malformed') {
    deps.metrics?.observeRailCallback(config.partner, stored.status);
    return { callbackId: stored.id, status: stored.status, answer: await answer() };
  }
  let status: RailCallbackStatus = 'received';
  try {
    status = (await applyRailCallback(deps, directory, stored.id)) ?? 'received';
  } catch (error) {
    // Stored, so acknowledged: the sweep applies it later.
    await deferFailedApply(deps, stored.id, error);
  }
  return { callbackId: stored.id, status, answer: await answer() };
}

/** A stored callback whose applying threw: the sweep applies it again RAIL_CALLBACK_ERROR_RETRY_MS later. */
export async function deferFailedApply(deps: Deps, callbackId: string, error: unknown): Promise<void> {
  await deferRailCallback(
    deps.store,
    callbackId,
    new Date(deps.now().getTime() + RAIL_CALLBACK_ERROR_RETRY_MS),
    `apply failed: ${error instanceof Error ? error.message : String(error)}`,
  );
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
  const result = await deps.store.transaction((tx) => applyLockedCallback(tx, deps, directory, callbackId));
  if (result) deps.metrics?.observeRailCallback(result.partner, result.status);
  return result?.status;
}

/** The applying transaction: the callback locked, its effect decided and made, its outcome recorded. */
async function applyLockedCallback(
  tx: Queryable,
  deps: Deps,
  directory: RailPartnerDirectory,
  callbackId: string,
): Promise<{ status: RailCallbackStatus; partner: string } | undefined> {
  const callback = await lockReceivedCallback(tx, callbackId);
  if (!callback) return undefined;
  const config = await findRailPartnerConfig(tx, callback.organizationId, callback.configId);
  if (!config) return undefined;
  const now = deps.now();
  const effect = await effectOf(tx, deps, directory, callback, config, now);
  if (effect === 'deferred') return { status: 'received', partner: callback.partner };
  await finishRailCallback(tx, callback.id, { ...effect, at: now });
  return { status: effect.status, partner: callback.partner };
}

/**
 * What a locked callback does, read with its partner's adapter: a collection's or a payout's effect, or
 * `deferred` while the payout it names may not have its reference recorded yet.
 */
async function effectOf(
  tx: Queryable,
  deps: Deps,
  directory: RailPartnerDirectory,
  callback: RailCallback,
  config: RailPartnerConfig,
  now: Date,
): Promise<(CallbackEffect & { collectionId?: string }) | 'deferred'> {
  let report: CallbackReport;
  const adapter = directory.adapterFor(config);
  try {
    const arrived = {
      path: callback.path,
      headers: callback.headers,
      rawBody: callback.rawBody,
      verifiedBy: callback.verifiedBy,
    };
    const deposit = adapter.parseDeposit?.(arrived);
    if (deposit) {
      const source = { partner: callback.partner, callbackId: callback.id };
      return applyCustodyDeposit(tx, deps, callback.organizationId, deposit, source);
    }
    report = adapter.parseCallback(arrived);
  } catch (error) {
    if (error instanceof MalformedCallbackError)
      return { status: 'malformed', transferId: null, detail: error.message };
    throw error;
  }
  if (report.kind === 'ignored') return { status: 'ignored', transferId: null, detail: report.reason };
  if (report.kind === 'sweep') return applyCustodySweepReport(tx, deps, config, report, callback.id);
  if (report.kind === 'credit') return applyCreditReport(tx, deps, callback, config, report, adapter);
  if (report.kind === 'credit_verification') {
    return applyCreditVerificationReport(tx, deps, callback, config, adapter, report);
  }
  if (report.kind === 'balances') return applyBalancesReport(tx, deps, config, report);
  if (report.kind === 'reversal') {
    const reversed = await applyReversalReport(tx, deps, callback, config, report);
    if (reversed) return reversed;
  }
  if (report.kind === 'collection') {
    const collection = await findReportedCollection(tx, callback, report);
    if (collection)
      return { ...(await applyToCollection(tx, deps, collection, report)), collectionId: collection.id };
  }
  const transfer =
    report.kind === 'payout' ? await findReported(tx, callback, railsCarriedBy(config), report) : undefined;
  const details: CallbackExceptionDetails = {
    partner: config.partner,
    callback_id: callback.id,
    reference: report.reference,
    reported: report.outcome.kind,
    rail: config.rail,
  };
  if (!transfer) return applyUnmatched(tx, deps, callback, report, details, now);
  return applyToTransfer(tx, deps, transfer, report, details, now);
}

/**
 * A callback naming no payout or collection we can find: tried again for RAIL_CALLBACK_MATCH_GRACE_MS (the
 * rail worker may not have recorded the partner's reference yet), then an exception.
 */
async function applyUnmatched(
  tx: Queryable,
  deps: Deps,
  callback: RailCallback,
  report: NamingReport,
  details: CallbackExceptionDetails,
  now: Date,
): Promise<CallbackEffect | 'deferred'> {
  const deferred = await deferredWhileYoung(tx, callback, now, {
    graceMs: RAIL_CALLBACK_MATCH_GRACE_MS,
    retryMs: RAIL_CALLBACK_RETRY_MS,
    why: 'no transfer with this reference yet',
  });
  if (deferred) return 'deferred';
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
  return { status: 'exception', transferId: null, detail: 'no transfer has this reference' };
}

export const listOrganizationRailCallbacks = listPage(listRailCallbacks);
