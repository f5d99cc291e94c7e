/**
 * An operator's request to reverse a settled payout through its rail partner: checked and recorded in one
 * transaction (the transfer locked; one reversal per transfer, a second request answers the first), with
 * who asked and why as an event and evidence. Nothing moves here: the reversal worker sends the request,
 * and the partner's result returns the transfer once (reversalEffects.ts).
 */
import type { Deps } from '../../../app/deps.ts';
import { recordEvent } from '../../../app/events.ts';
import { appendEvidence } from '../../../app/evidence.ts';
import { AppError, invalidStateTransition, validationError } from '../../../domain/errors.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import { formatAmount } from '../../../domain/money.ts';
import type { Transfer } from '../../../domain/transferRecord.ts';
import { type CallbackReport, MalformedCallbackError, type PartnerRail } from '../../../rails/partner.ts';
import type { Queryable } from '../../../store/store.ts';
import { findTransfer, lockTransfer } from '../../transfers/index.ts';
import type { RailPartnerConfig } from '../domain.ts';
import { listRailCallbacks } from '../repository/callbacks.ts';
import { findActiveRailPartner, findRailPartnerConfig } from '../repository/partners.ts';
import {
  findRailReversalOfTransfer,
  insertRailReversal,
  type RailReversal,
  saveRailReversal,
} from '../repository/reversals.ts';
import { findTransferRailPartner } from '../repository/transferPartners.ts';
import { type RailPartnerDirectory, railPartnerDirectory } from './directory.ts';

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { RailReversal, RailReversalStatus } from '../repository/reversals.ts';
export { RAIL_REVERSAL_STATUSES } from '../repository/reversals.ts';

/** A reversal's reason: required, at most this many characters. */
export const REVERSAL_REASON_MAX_CHARS = 500;
/** Stored callbacks of a transfer read for its partner's receipt, at most (a payout has a handful). */
const RECEIPT_SEARCH_CALLBACKS_MAX = 50;

/** The reversal as the API and its events show it. */
export function presentReversal(
  r: RailReversal,
  transfer: Pick<Transfer, 'amountMinor' | 'currency' | 'rail'>,
) {
  return {
    object: 'transfer_reversal' as const,
    id: r.id,
    transfer: r.transferId,
    status: r.status,
    reason: r.reason,
    requested_by: r.requestedBy,
    partner: r.partner,
    rail: transfer.rail,
    amount: formatAmount(transfer.amountMinor, transfer.currency),
    currency: transfer.currency,
    original_transaction_id: r.originalTransactionId,
    partner_reference: r.partnerReference,
    partner_transaction_id: r.partnerTransactionId,
    failure_code: r.failureCode,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

export type PresentedReversal = ReturnType<typeof presentReversal>;

/** The `rail_reversal.updated` event: the reversal as it stands after a change. */
export async function recordReversalEvent(
  tx: Queryable,
  deps: Deps,
  reversal: RailReversal,
  transfer: Transfer,
): Promise<void> {
  await recordEvent(tx, deps, deps.now(), {
    organizationId: reversal.organizationId,
    type: 'rail_reversal.updated',
    resourceId: reversal.transferId,
    data: presentReversal(reversal, transfer),
  });
}

/** Saves a reversal's new status and announces it (`rail_reversal.updated`). */
export async function saveReversalChange(
  tx: Queryable,
  deps: Deps,
  changed: RailReversal,
  transfer: Transfer,
): Promise<void> {
  await saveRailReversal(tx, changed);
  await recordReversalEvent(tx, deps, changed, transfer);
}

function notReversible(detail: string): AppError {
  return new AppError({
    status: 422,
    code: 'reversal_not_supported',
    title: 'This transfer cannot be reversed',
    detail,
    param: 'id',
  });
}

/** The organization's partner that carried the transfer, if it can reverse it, with its adapter. */
async function reversingPartner(
  tx: Queryable,
  directory: RailPartnerDirectory,
  transfer: Transfer,
): Promise<{ config: RailPartnerConfig; adapter: PartnerRail }> {
  if (transfer.direction !== 'outbound' || !transfer.sourceWalletId || transfer.destinationWalletId) {
    throw notReversible('Only a payout to a rail partner can be reversed through the partner.');
  }
  // The partner that carried the payout is the one that can reverse it (pinned before it was sent).
  const pinned = await findTransferRailPartner(tx, transfer.id);
  const carrier =
    pinned === undefined
      ? await findActiveRailPartner(tx, transfer.organizationId, transfer.rail, transfer.network)
      : await findRailPartnerConfig(tx, transfer.organizationId, pinned);
  const config = carrier?.status === 'active' ? carrier : undefined;
  const adapter = config && directory.adapterFor(config);
  if (!config || !adapter?.reverse) {
    throw notReversible(
      `No active rail partner for ${transfer.rail}${transfer.network ? ` (${transfer.network})` : ''} can reverse a payout.`,
    );
  }
  return { config, adapter };
}

/**
 * The partner's receipt of the settled payout: the transfer's own, or (a payout settled before transfers kept
 * receipts) read again from the callback that settled it.
 */
async function payoutReceipt(tx: Queryable, adapter: PartnerRail, transfer: Transfer): Promise<string> {
  if (transfer.partnerReceipt !== null) return transfer.partnerReceipt;
  const callbacks = await listRailCallbacks(
    tx,
    transfer.organizationId,
    { transferId: transfer.id },
    RECEIPT_SEARCH_CALLBACKS_MAX,
  );
  for (const callback of callbacks) {
    if (callback.status !== 'applied' && callback.status !== 'unchanged') continue;
    let report: CallbackReport;
    try {
      report = adapter.parseCallback({
        path: callback.path,
        headers: callback.headers,
        rawBody: callback.rawBody,
      });
    } catch (error) {
      // Read once already; one this adapter no longer reads names no receipt.
      if (error instanceof MalformedCallbackError) continue;
      throw error;
    }
    if (report.kind === 'payout' && report.outcome.kind === 'settled' && report.partnerTransactionId) {
      return report.partnerTransactionId;
    }
  }
  throw notReversible(
    'The partner’s receipt for this payout is not known (no settling callback was stored).',
  );
}

/**
 * Records an operator's request to reverse a settled payout, or answers the transfer's reversal already
 * asked for. Refused: a transfer not settled (409), one no partner of the organization can reverse (422).
 */
export async function requestReversal(
  tx: Queryable,
  deps: Deps,
  input: {
    organizationId: string;
    transferId: string;
    reason: string;
    actor: EvidenceActor;
    actorId: string;
  },
): Promise<PresentedReversal> {
  if (input.reason.trim() === '') throw validationError('reason', 'A reason is required.', 'required');
  const transfer = await lockTransfer(tx, input.organizationId, input.transferId);
  const existing = await findRailReversalOfTransfer(tx, input.organizationId, transfer.id);
  if (existing) return presentReversal(existing, transfer);
  if (transfer.status !== 'settled') {
    throw invalidStateTransition(
      'Only a settled transfer can be reversed',
      `The transfer is ${transfer.status}; a reversal sends back money the rail has paid.`,
      'id',
    );
  }
  const { config, adapter } = await reversingPartner(tx, railPartnerDirectory(deps), transfer);
  const now = deps.now();
  const reversal: RailReversal = {
    id: deps.newId('railReversal'),
    organizationId: transfer.organizationId,
    transferId: transfer.id,
    configId: config.id,
    partner: config.partner,
    status: 'requested',
    reason: input.reason,
    requestedBy: input.actorId,
    originalTransactionId: await payoutReceipt(tx, adapter, transfer),
    partnerReference: null,
    partnerTransactionId: null,
    failureCode: null,
    nextCheckAt: now,
    createdAt: now,
    updatedAt: now,
  };
  await insertRailReversal(tx, reversal);
  await recordReversalEvent(tx, deps, reversal, transfer);
  // Evidence last: the chain head is the last lock a transaction takes (src/store/lockOrder.ts).
  await appendEvidence(tx, deps, [
    {
      organizationId: transfer.organizationId,
      kind: 'transfer.reversal',
      actor: input.actor,
      transferId: transfer.id,
      walletId: transfer.sourceWalletId ?? undefined,
      data: {
        reversal_id: reversal.id,
        reason: reversal.reason,
        partner: reversal.partner,
        original_transaction_id: reversal.originalTransactionId,
      },
    },
  ]);
  return presentReversal(reversal, transfer);
}

/** A transfer's reversal, or 404 (the transfer's own 404 first). */
export async function getReversalOfTransfer(
  deps: Deps,
  organizationId: string,
  transferId: string,
): Promise<PresentedReversal> {
  const transfer = await findTransfer(deps.store, organizationId, transferId);
  const reversal = transfer && (await findRailReversalOfTransfer(deps.store, organizationId, transfer.id));
  if (!transfer || !reversal) {
    throw new AppError({
      status: 404,
      code: 'resource_missing',
      title: 'No reversal',
      detail: transfer ? 'No reversal has been asked for this transfer.' : 'No transfer has this id.',
      param: 'id',
    });
  }
  return presentReversal(reversal, transfer);
}
