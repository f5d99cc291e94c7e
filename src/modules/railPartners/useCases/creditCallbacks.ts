/**
 * Payers' own payments a partner reports (M-Pesa C2B): a validation is answered by whether the account
 * reference the payer quoted names a wallet that can take the money (the wallet's virtual account reference
 * or account number, as for bank deposits); a confirmation claims the payment once per partner transaction.
 * Where the partner's adapter can verify a payment (`verifyCredit`: its callbacks are not signed), the claim
 * waits `verifying` until the partner's own answer (creditVerification.ts); otherwise it is credited at once.
 * Crediting goes through the rail-credit path every rail credit takes (a frozen wallet's credit is held for
 * review), and a payment no wallet can take goes to the reconciliation exception queue as an `unmatched_deposit`.
 */
import type { Deps } from '../../../app/deps.ts';
import type { Wallet } from '../../../domain/wallets.ts';
import type {
  ArrivedCallback,
  CallbackReport,
  CreditDecision,
  CreditReport,
  PartnerRail,
} from '../../../rails/partner.ts';
import type { Queryable } from '../../../store/store.ts';
import { creditFromRail } from '../../transfers/index.ts';
import { normalizePayerReference, openException, walletIdOfReference } from '../../treasury/index.ts';
import { findWallet } from '../../wallets/index.ts';
import type { RailPartnerConfig } from '../domain.ts';
import type { RailCallback } from '../repository/callbacks.ts';
import { findRailCallback } from '../repository/callbacks.ts';
import {
  claimRailPartnerCredit,
  confirmRailPartnerCredit,
  findRailPartnerCredit,
  isAwaitingVerification,
  type RailPartnerCredit,
  railPartnerCreditKey,
  recordRailPartnerCredit,
} from '../repository/credits.ts';
import type { CallbackEffect } from './callbackEffects.ts';
import type { RailPartnerDirectory } from './directory.ts';

/** Why a credit report's payment cannot be credited to a wallet, or the wallet that takes it. */
type CreditTarget =
  | { wallet: Wallet }
  | { wallet?: undefined; reason: Extract<CreditDecision, { accepted: false }>['reason']; detail: string };

/** The wallet the payer's reference names, if it can take a credit in the payment's currency. */
async function creditTarget(
  db: Queryable,
  organizationId: string,
  report: CreditReport,
): Promise<CreditTarget> {
  const reference = normalizePayerReference(report.accountReference);
  const walletId = reference === '' ? undefined : await walletIdOfReference(db, organizationId, reference);
  const wallet = walletId === undefined ? undefined : await findWallet(db, organizationId, walletId);
  if (!wallet) return { reason: 'unknown_account', detail: 'no wallet has this account reference' };
  if (wallet.currency !== report.currency) {
    return {
      reason: 'unknown_account',
      detail: `the wallet holds ${wallet.currency}, the payment is ${report.currency}`,
    };
  }
  if (wallet.status === 'closed') return { reason: 'account_unavailable', detail: 'the wallet is closed' };
  return { wallet };
}

/**
 * Whether a payment may complete. A frozen wallet is refused here (the payer keeps their money) though a
 * confirmation for one, arriving without a validation, is credited and held for review.
 */
export async function decideCredit(
  db: Queryable,
  organizationId: string,
  report: CreditReport,
): Promise<CreditDecision> {
  const target = await creditTarget(db, organizationId, report);
  if (!target.wallet) return { accepted: false, reason: target.reason };
  if (target.wallet.status === 'frozen') return { accepted: false, reason: 'account_unavailable' };
  return { accepted: true };
}

/**
 * A payment accepted at validation whose confirmation has not come is asked about this much later
 * (confirmations follow in seconds; the ask is then the only thing that credits it).
 */
export const RAIL_CREDIT_UNCONFIRMED_CHECK_AFTER_MS = 5 * 60_000;

/**
 * What a credit callback does: a validation moves nothing (its answer is the decision; an accepted one is
 * claimed `unconfirmed` where the partner verifies, so a missing confirmation is recovered); a confirmation
 * claims the payment once.
 */
export async function applyCreditReport(
  tx: Queryable,
  deps: Deps,
  callback: RailCallback,
  config: RailPartnerConfig,
  report: CreditReport,
  adapter: PartnerRail,
): Promise<CallbackEffect> {
  const key = railPartnerCreditKey(config, report.partnerTransactionId);
  const verifies = adapter.verifyCredit !== undefined;
  const now = deps.now();
  if (report.stage === 'validation') {
    const decision = await decideCredit(tx, callback.organizationId, report);
    if (decision.accepted && verifies) {
      await claimRailPartnerCredit(tx, key, callback.id, now, {
        configId: config.id,
        status: 'unconfirmed',
        nextCheckAt: new Date(now.getTime() + RAIL_CREDIT_UNCONFIRMED_CHECK_AFTER_MS),
      });
    }
    return {
      status: 'ignored',
      transferId: null,
      detail: decision.accepted ? 'validation accepted' : `validation rejected: ${decision.reason}`,
    };
  }
  const claim = verifies
    ? { configId: config.id, status: 'verifying' as const, nextCheckAt: now }
    : undefined;
  if (!(await claimRailPartnerCredit(tx, key, callback.id, now, claim))) {
    return confirmedAgain(tx, deps, { callback, config, adapter }, report);
  }
  if (verifies) return { status: 'applied', transferId: null, detail: CREDIT_AWAITING_VERIFICATION };
  return creditClaimedPayment(tx, deps, callback.id, config, report);
}

/** The credit report of the callback that claimed a payment, read again (parsing is pure). */
export async function claimedReport(
  db: Queryable,
  adapter: PartnerRail,
  credit: RailPartnerCredit,
): Promise<CreditReport | undefined> {
  const callback = await findRailCallback(db, credit.organizationId, credit.callbackId);
  if (!callback) return undefined;
  try {
    const report = adapter.parseCallback(callback);
    return report.kind === 'credit' ? report : undefined;
  } catch {
    return undefined;
  }
}

/** What an exception about a payer's payment records, whatever went wrong with it. */
export function creditExceptionDetails(
  config: RailPartnerConfig,
  callbackId: string,
  report: CreditReport,
  reason: string,
): Record<string, string> {
  return {
    partner: config.partner,
    callback_id: callbackId,
    reference: report.partnerTransactionId,
    partner_transaction_id: report.partnerTransactionId,
    account_reference: report.accountReference,
    amount_minor: report.amountMinor.toString(),
    currency: report.currency,
    rail: config.rail,
    reason,
  };
}

/**
 * A confirmation of a payment already claimed: the same payment sent again changes nothing, and the first
 * confirmation of one claimed at validation takes the claim over (verifying). One telling another story
 * (another amount or account reference) is a forgery or a fault: an exception names it, and a payment still
 * awaiting verification is then not credited (which story is true is for people to tell).
 */
async function confirmedAgain(
  tx: Queryable,
  deps: Deps,
  { callback, config, adapter }: { callback: RailCallback; config: RailPartnerConfig; adapter: PartnerRail },
  report: CreditReport,
): Promise<CallbackEffect> {
  const key = railPartnerCreditKey(config, report.partnerTransactionId);
  const credit = await findRailPartnerCredit(tx, key, { forUpdate: true });
  const first = credit && (await claimedReport(tx, adapter, credit));
  const sameStory =
    first !== undefined &&
    first.amountMinor === report.amountMinor &&
    normalizePayerReference(first.accountReference) === normalizePayerReference(report.accountReference);
  const takenOver =
    credit !== undefined &&
    (credit.status === 'unconfirmed' || (credit.status === 'unverified' && credit.exceptionId === null));
  if (credit && takenOver && (sameStory || !first)) {
    // The confirmation of a payment we accepted at validation (or closed as not found then).
    await confirmRailPartnerCredit(tx, key, callback.id, deps.now());
    return { status: 'applied', transferId: null, detail: CREDIT_AWAITING_VERIFICATION };
  }
  if (!credit || !first || sameStory) {
    return {
      status: 'unchanged',
      transferId: null,
      detail: `payment ${report.partnerTransactionId} already applied`,
    };
  }
  const exception = await openException(tx, deps, {
    organizationId: callback.organizationId,
    transferId: null,
    kind: 'unmatched_callback',
    details: {
      ...creditExceptionDetails(config, callback.id, report, 'unverified_credit'),
      reported: 'conflicting_confirmation',
      first_callback_id: credit.callbackId,
      credited_transfer_id: credit.transferId,
    },
  });
  if (isAwaitingVerification(credit.status)) {
    await recordRailPartnerCredit(tx, key, {
      transferId: null,
      exceptionId: exception.id,
      status: 'unverified',
    });
  }
  return { status: 'exception', transferId: null, detail: 'another confirmation of this payment differs' };
}

/** What a confirmation claimed now records until the partner's answer: nothing is credited yet. */
export const CREDIT_AWAITING_VERIFICATION = 'awaiting verification with the partner';

/**
 * Credits a claimed payment to the wallet its reference names (held for review when frozen), or opens an
 * `unmatched_deposit` exception when no wallet can take it; records what it became.
 */
export async function creditClaimedPayment(
  tx: Queryable,
  deps: Deps,
  claimingCallbackId: string,
  config: RailPartnerConfig,
  report: CreditReport,
): Promise<CallbackEffect> {
  const key = railPartnerCreditKey(config, report.partnerTransactionId);
  const target = await creditTarget(tx, config.organizationId, report);
  if (!target.wallet) {
    const exception = await openException(tx, deps, {
      organizationId: config.organizationId,
      transferId: null,
      kind: 'unmatched_deposit',
      details: {
        partner: config.partner,
        callback_id: claimingCallbackId,
        partner_transaction_id: report.partnerTransactionId,
        reference: report.accountReference,
        amount_minor: report.amountMinor.toString(),
        currency: report.currency,
        rail: config.rail,
        network: config.network,
        payer_name: report.payer,
        reason: target.detail,
      },
    });
    await recordRailPartnerCredit(tx, key, { transferId: null, exceptionId: exception.id });
    return { status: 'exception', transferId: null, detail: target.detail };
  }
  const transfer = await creditFromRail(tx, deps, target.wallet, {
    amountMinor: report.amountMinor,
    rail: config.rail,
    network: config.network,
    railReference: report.partnerTransactionId,
    partnerReceipt: report.partnerTransactionId,
    statusReason: config.rail === 'bank' ? 'bank_deposit' : 'mobile_money_deposit',
    metadata: { account_reference: report.accountReference, payer: report.payer },
  });
  await recordRailPartnerCredit(tx, key, { transferId: transfer.id, exceptionId: null });
  return {
    status: 'applied',
    transferId: transfer.id,
    detail: transfer.status === 'in_review' ? 'held for review: the wallet is frozen' : null,
  };
}

/**
 * The partner's answer to a credit callback (a validation's decision, a confirmation's acknowledgement), or
 * undefined for any other callback. Decided afresh for a repeated validation: it changes nothing.
 */
export async function creditCallbackAnswer(
  db: Queryable,
  directory: RailPartnerDirectory,
  config: RailPartnerConfig,
  callback: ArrivedCallback,
): Promise<Record<string, unknown> | undefined> {
  let adapter: PartnerRail;
  let report: CallbackReport;
  try {
    adapter = directory.adapterFor(config);
    if (!adapter.answerCredit) return undefined;
    report = adapter.parseCallback(callback);
  } catch {
    // No adapter here, or a body it cannot read: answered as any other callback.
    return undefined;
  }
  if (report.kind !== 'credit') return undefined;
  const decision: CreditDecision =
    report.stage === 'validation'
      ? await decideCredit(db, config.organizationId, report)
      : { accepted: true };
  return adapter.answerCredit?.(report, decision);
}
