/**
 * A payer's payment held `verifying` (creditCallbacks.ts) meets the partner's own answer about it, once,
 * inside the transaction that credits it: a `completed` payment of the confirmed amount, received by our
 * own account, is credited as any confirmation was; a payment the partner cannot find, that failed, or that
 * differs in amount or receiver credits nothing and opens an `unmatched_callback` exception naming it (as
 * does no answer within the verification window: creditVerificationWorker.ts). An answer arriving as a
 * callback must echo the question we asked (its `queryReference`); a repeated or late one changes nothing.
 */
import type { Deps } from '../../../app/deps.ts';
import type { CreditReport, CreditVerificationReport, PartnerRail } from '../../../rails/partner.ts';
import type { Queryable } from '../../../store/store.ts';
import { RAIL_CALL_TIMEOUT_MS, RAIL_CLAIM_LEASE_MS } from '../../transfers/index.ts';
import { openException } from '../../treasury/index.ts';
import type { RailPartnerConfig } from '../domain.ts';
import type { RailCallback } from '../repository/callbacks.ts';
import {
  findRailPartnerCredit,
  isAwaitingVerification,
  type RailPartnerCredit,
  railPartnerCreditKey,
  recordRailPartnerCredit,
} from '../repository/credits.ts';
import { type CallbackEffect, deferredWhileYoung } from './callbackEffects.ts';
import { claimedReport, creditClaimedPayment, creditExceptionDetails } from './creditCallbacks.ts';

/**
 * How long an answer echoing a question not recorded yet is tried again: the worker records the question
 * within its lease, after a call that takes at most RAIL_CALL_TIMEOUT_MS.
 */
export const CREDIT_VERIFICATION_ANSWER_GRACE_MS = RAIL_CLAIM_LEASE_MS + RAIL_CALL_TIMEOUT_MS;
/** Between those tries. */
export const CREDIT_VERIFICATION_ANSWER_RETRY_MS = 5_000;

/** Why the partner's answer does not vouch for the payment as confirmed, or undefined when it does. */
function unverifiedReason(report: CreditReport, verification: CreditVerificationReport): string | undefined {
  switch (verification.outcome) {
    case 'not_found':
      return 'the partner has no such payment';
    case 'failed':
      return 'the partner reports the payment did not complete';
    case 'pending':
      return undefined;
    case 'completed':
      if (verification.amountMinor !== report.amountMinor) {
        return `the partner reports amount_minor ${verification.amountMinor ?? 'none'}, the confirmation ${report.amountMinor}`;
      }
      if (!verification.toOurAccount)
        return `the payment was received by ${verification.receiver ?? 'another account'}`;
      return undefined;
  }
}

/**
 * Applies the partner's answer to a locked payment still verifying: credits it, refuses it with an
 * exception, or (`pending`) leaves it for the next check. `evidenceCallbackId`: the answer's callback, if any.
 */
export async function settleCreditVerification(
  tx: Queryable,
  deps: Deps,
  config: RailPartnerConfig,
  adapter: PartnerRail,
  credit: RailPartnerCredit,
  verification: CreditVerificationReport | 'unanswered',
  evidenceCallbackId: string | null,
): Promise<CallbackEffect> {
  const report = await claimedReport(tx, adapter, credit);
  if (verification !== 'unanswered' && verification.outcome === 'pending') {
    return { status: 'ignored', transferId: null, detail: 'the partner cannot tell yet' };
  }
  const reason =
    verification === 'unanswered'
      ? 'the partner did not answer within the verification window'
      : report === undefined
        ? 'the confirmation cannot be read again'
        : unverifiedReason(report, verification);
  if (reason === undefined && report !== undefined) {
    return creditClaimedPayment(tx, deps, credit.callbackId, config, report);
  }
  const neverHappened =
    verification !== 'unanswered' &&
    (verification.outcome === 'not_found' || verification.outcome === 'failed');
  if (credit.status === 'unconfirmed' && neverHappened) {
    // Validated, never confirmed, and M-Pesa has no completed payment: nothing to credit or to report. A
    // confirmation arriving after all takes the claim over and is asked about again.
    await recordRailPartnerCredit(tx, credit, { transferId: null, exceptionId: null, status: 'unverified' });
    return { status: 'ignored', transferId: null, detail: 'the validated payment did not complete' };
  }
  const claimed =
    report === undefined
      ? { partner: config.partner, reference: credit.partnerTransactionId, rail: config.rail }
      : creditExceptionDetails(config, credit.callbackId, report, 'unverified_credit');
  const exception = await openException(tx, deps, {
    organizationId: credit.organizationId,
    transferId: null,
    kind: 'unmatched_callback',
    details: {
      ...claimed,
      reason: 'unverified_credit',
      reported: verification === 'unanswered' ? 'unanswered' : verification.outcome,
      detail: reason ?? 'unverified',
      verified_amount_minor:
        verification === 'unanswered' ? null : (verification.amountMinor?.toString() ?? null),
      verified_receiver: verification === 'unanswered' ? null : (verification.receiver ?? null),
      verification_callback_id: evidenceCallbackId,
    },
  });
  await recordRailPartnerCredit(tx, credit, {
    transferId: null,
    exceptionId: exception.id,
    status: 'unverified',
  });
  return { status: 'exception', transferId: null, detail: `unverified credit: ${reason}` };
}

/**
 * A verification answer arriving as a callback: applied to the payment it names if that is still verifying
 * and the answer echoes our last question; one naming no question we asked is tried again for
 * CREDIT_VERIFICATION_ANSWER_GRACE_MS (the worker may not have recorded the question yet), then ignored.
 */
export async function applyCreditVerificationReport(
  tx: Queryable,
  deps: Deps,
  callback: RailCallback,
  config: RailPartnerConfig,
  adapter: PartnerRail,
  verification: CreditVerificationReport,
): Promise<CallbackEffect | 'deferred'> {
  const key = railPartnerCreditKey(config, verification.partnerTransactionId);
  const credit = await findRailPartnerCredit(tx, key, { forUpdate: true });
  if (!credit) return { status: 'ignored', transferId: null, detail: 'no payment awaits this verification' };
  if (!isAwaitingVerification(credit.status)) {
    return {
      status: 'unchanged',
      transferId: credit.transferId,
      detail: `payment ${credit.partnerTransactionId} already verified`,
    };
  }
  if (verification.queryReference === undefined || verification.queryReference !== credit.queryReference) {
    const now = deps.now();
    const deferred = await deferredWhileYoung(tx, callback, now, {
      graceMs: CREDIT_VERIFICATION_ANSWER_GRACE_MS,
      retryMs: CREDIT_VERIFICATION_ANSWER_RETRY_MS,
      why: 'names no verification question asked yet',
    });
    if (deferred) return 'deferred';
    return { status: 'ignored', transferId: null, detail: 'names no verification question we asked' };
  }
  return settleCreditVerification(tx, deps, config, adapter, credit, verification, callback.id);
}
