/**
 * Payers' own payments a partner reports (M-Pesa C2B): a validation is answered by whether the account
 * reference the payer quoted names a wallet that can take the money (the wallet's virtual account reference
 * or account number, as for bank deposits); a confirmation credits that wallet once per partner transaction,
 * through the rail-credit path every rail credit takes (a frozen wallet's credit is held for review), and a
 * confirmation no wallet can take goes to the reconciliation exception queue as an `unmatched_deposit`.
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
import { claimRailPartnerCredit, recordRailPartnerCredit } from '../repository/credits.ts';
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

/** What a credit callback does: a validation changes nothing (its answer is the decision); a confirmation credits once. */
export async function applyCreditReport(
  tx: Queryable,
  deps: Deps,
  callback: RailCallback,
  config: RailPartnerConfig,
  report: CreditReport,
): Promise<CallbackEffect> {
  if (report.stage === 'validation') {
    const decision = await decideCredit(tx, callback.organizationId, report);
    return {
      status: 'ignored',
      transferId: null,
      detail: decision.accepted ? 'validation accepted' : `validation rejected: ${decision.reason}`,
    };
  }
  const key = {
    organizationId: callback.organizationId,
    partner: config.partner,
    partnerTransactionId: report.partnerTransactionId,
  };
  if (!(await claimRailPartnerCredit(tx, key, callback.id, deps.now()))) {
    return {
      status: 'unchanged',
      transferId: null,
      detail: `payment ${report.partnerTransactionId} already applied`,
    };
  }
  const target = await creditTarget(tx, callback.organizationId, report);
  if (!target.wallet) {
    const exception = await openException(tx, deps, {
      organizationId: callback.organizationId,
      transferId: null,
      kind: 'unmatched_deposit',
      details: {
        partner: config.partner,
        callback_id: callback.id,
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
    statusReason: 'mobile_money_deposit',
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
