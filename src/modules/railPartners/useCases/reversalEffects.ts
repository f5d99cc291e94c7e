/**
 * What a partner's reversal result does, inside the callback's applying transaction: the payout it names is
 * locked first (the lock order every money movement takes), then its reversal. A success returns a settled
 * transfer once through the transfers' status change (one ledger return, `transfer.returned`); a refusal
 * leaves it settled and records why; a repeat, or anything agreeing with what is recorded, changes nothing.
 * A success for a reversal recorded as refused still returns the transfer: the partner says the money came
 * back (a resent request refused as "already reversed" while the first one succeeded).
 */
import type { Deps } from '../../../app/deps.ts';
import type { Transfer } from '../../../domain/transferRecord.ts';
import type { Queryable } from '../../../store/store.ts';
import { applyStatusChange, findTransfer } from '../../transfers/index.ts';
import { openException } from '../../treasury/index.ts';
import type { RailPartnerConfig } from '../domain.ts';
import type { RailCallback } from '../repository/callbacks.ts';
import { findRailReversalByPartnerIds, type RailReversal } from '../repository/reversals.ts';
import type { CallbackEffect, CallbackExceptionDetails, NamingReport } from './callbackEffects.ts';
import { saveReversalChange } from './reversals.ts';

/** A callback naming a reversal (`kind: 'reversal'`; the report type does not tell the kinds apart). */
type ReversalReport = NamingReport;

/** The reversal a result names and its transfer, both locked (transfer first); undefined when none matches. */
async function lockReported(
  tx: Queryable,
  config: RailPartnerConfig,
  report: ReversalReport,
): Promise<{ reversal: RailReversal; transfer: Transfer } | undefined> {
  const ids = { reference: report.reference, originalTransactionId: report.originalTransactionId };
  const named = await findRailReversalByPartnerIds(tx, config.id, ids);
  if (!named) return undefined;
  const transfer = await findTransfer(tx, named.organizationId, named.transferId, { forUpdate: true });
  const reversal = await findRailReversalByPartnerIds(tx, config.id, ids, { forUpdate: true });
  return transfer && reversal ? { reversal, transfer } : undefined;
}

/** Applies a reversal result; undefined when it names no reversal we know (the caller defers it, then opens an exception). */
export async function applyReversalReport(
  tx: Queryable,
  deps: Deps,
  callback: RailCallback,
  config: RailPartnerConfig,
  report: ReversalReport,
): Promise<CallbackEffect | undefined> {
  const found = await lockReported(tx, config, report);
  if (!found) return undefined;
  const { reversal, transfer } = found;
  const outcome = report.outcome;
  const now = deps.now();
  const unchanged = (detail: string): CallbackEffect => ({
    status: 'unchanged',
    transferId: transfer.id,
    detail,
  });
  if (outcome.kind === 'processing') return unchanged('reversal still processing');
  if (outcome.kind === 'failed') {
    if (reversal.status === 'succeeded' || reversal.status === 'refused') {
      return unchanged(`reversal already ${reversal.status}`);
    }
    const refused: RailReversal = {
      ...reversal,
      status: 'refused',
      partnerReference: reversal.partnerReference ?? report.reference,
      failureCode: outcome.failureCode,
      nextCheckAt: null,
      updatedAt: now,
    };
    await saveReversalChange(tx, deps, refused, transfer);
    return { status: 'applied', transferId: transfer.id, detail: `reversal refused: ${outcome.failureCode}` };
  }
  if (transfer.status === 'returned') {
    if (reversal.status === 'succeeded') return unchanged('already returned');
    await succeed(tx, deps, reversal, transfer, report, now);
    return unchanged('already returned');
  }
  if (transfer.status !== 'settled') {
    return lateException(tx, deps, callback, config, report, transfer);
  }
  const returned = await applyStatusChange(tx, deps, transfer, {
    to: 'returned',
    reason: 'reversed_by_partner',
  });
  await succeed(tx, deps, reversal, returned, report, now);
  if (report.amountMinor !== undefined && report.amountMinor !== transfer.amountMinor) {
    return reversalException(
      tx,
      deps,
      { callback, config, report, transfer },
      'amount_mismatch',
      {
        statement_amount_minor: report.amountMinor.toString(),
        ledger_amount_minor: transfer.amountMinor.toString(),
        currency: transfer.currency,
      },
      'reversed another amount than the payout',
    );
  }
  return { status: 'applied', transferId: transfer.id, detail: 'reversed: transfer returned' };
}

/** Records the reversal as succeeded, with the partner's receipt of it. */
async function succeed(
  tx: Queryable,
  deps: Deps,
  reversal: RailReversal,
  transfer: Transfer,
  report: ReversalReport,
  now: Date,
): Promise<void> {
  const succeeded: RailReversal = {
    ...reversal,
    status: 'succeeded',
    partnerReference: reversal.partnerReference ?? report.reference,
    partnerTransactionId: report.partnerTransactionId ?? reversal.partnerTransactionId,
    failureCode: null,
    nextCheckAt: null,
    updatedAt: now,
  };
  await saveReversalChange(tx, deps, succeeded, transfer);
}

function exceptionDetails(
  callback: RailCallback,
  config: RailPartnerConfig,
  report: ReversalReport,
): CallbackExceptionDetails {
  return {
    partner: config.partner,
    callback_id: callback.id,
    reference: report.reference,
    reported: `reversal_${report.outcome.kind}`,
    rail: config.rail,
  };
}

/** A reversal reported done for a transfer that is neither settled nor returned: for an operator to look at. */
async function lateException(
  tx: Queryable,
  deps: Deps,
  callback: RailCallback,
  config: RailPartnerConfig,
  report: ReversalReport,
  transfer: Transfer,
): Promise<CallbackEffect> {
  return reversalException(
    tx,
    deps,
    { callback, config, report, transfer },
    'late_callback',
    {
      transfer_status: transfer.status,
      amount_minor: transfer.amountMinor.toString(),
      currency: transfer.currency,
    },
    `reported a reversal of a transfer ${transfer.status}`,
  );
}

/** Opens the reconciliation exception a reversal report raises on its transfer; the callback's effect says why. */
async function reversalException(
  tx: Queryable,
  deps: Deps,
  reported: { callback: RailCallback; config: RailPartnerConfig; report: ReversalReport; transfer: Transfer },
  kind: 'amount_mismatch' | 'late_callback',
  details: Record<string, string>,
  detail: string,
): Promise<CallbackEffect> {
  const { callback, config, report, transfer } = reported;
  await openException(tx, deps, {
    organizationId: transfer.organizationId,
    transferId: transfer.id,
    kind,
    details: { ...exceptionDetails(callback, config, report), ...details },
  });
  return { status: 'exception', transferId: transfer.id, detail };
}
