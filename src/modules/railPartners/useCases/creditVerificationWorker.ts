/**
 * Asks partners about payers' payments held `verifying` (creditCallbacks.ts): claims a due one (SKIP LOCKED)
 * and leases it in a short transaction, asks the partner (`verifyCredit`) with no transaction open, then
 * records the question (its answer arrives as a callback: creditVerification.ts) or applies a synchronous
 * answer, in its own transaction, if the payment is still verifying. A question unanswered is asked again
 * with a growing wait; after RAIL_CREDIT_VERIFICATION_WINDOW_MS the payment is refused with an exception.
 * Asking again is harmless: a status query moves no money.
 */
import type { Deps } from '../../../app/deps.ts';
import { type CreditVerificationReport, RailPartnerUnavailableError } from '../../../rails/partner.ts';
import { RAIL_CALL_TIMEOUT_MS, withTimeout } from '../../transfers/index.ts';
import {
  claimDueRailPartnerCredit,
  findRailPartnerCredit,
  isAwaitingVerification,
  type RailPartnerCredit,
  type RailPartnerCreditKey,
  saveRailPartnerCreditCheck,
} from '../repository/credits.ts';
import { findRailPartnerConfig } from '../repository/partners.ts';
import { claimedReport } from './creditCallbacks.ts';
import { settleCreditVerification } from './creditVerification.ts';
import type { RailPartnerDirectory } from './directory.ts';
import { type LeasedRows, workLeasedRows } from './leasedPass.ts';

/** How often the worker looks for payments to verify. */
export const RAIL_CREDIT_VERIFICATION_WORKER_INTERVAL_MS = 1_000;
/** Payments one pass looks at most. */
export const RAIL_CREDIT_VERIFICATION_BATCH_ROWS = 50;
/** A question unanswered (or a call that failed) is asked again this much later, doubling each time... */
export const RAIL_CREDIT_VERIFICATION_RETRY_MS = 60_000;
/** ...up to this much. */
export const RAIL_CREDIT_VERIFICATION_RETRY_MAX_MS = 30 * 60_000;
/** A payment is verified within this long of its confirmation, or refused with an exception. */
export const RAIL_CREDIT_VERIFICATION_WINDOW_MS = 24 * 3_600_000;

type Answer =
  | { kind: 'asked'; queryReference: string }
  | { kind: 'answered'; verification: CreditVerificationReport }
  | { kind: 'again'; afterMs?: number }
  | { kind: 'expired' };

/** The wait before asking again, after `attempts` questions. */
export function creditVerificationRetryMs(attempts: number): number {
  return Math.min(
    RAIL_CREDIT_VERIFICATION_RETRY_MS * 2 ** Math.min(attempts, 16),
    RAIL_CREDIT_VERIFICATION_RETRY_MAX_MS,
  );
}

/** One question to the partner about a leased payment. */
async function ask(deps: Deps, directory: RailPartnerDirectory, credit: RailPartnerCredit): Promise<Answer> {
  const now = deps.now();
  if (now.getTime() - credit.createdAt.getTime() > RAIL_CREDIT_VERIFICATION_WINDOW_MS)
    return { kind: 'expired' };
  const config =
    credit.configId === null
      ? undefined
      : await findRailPartnerConfig(deps.store, credit.organizationId, credit.configId);
  if (!config) return { kind: 'again' };
  const rail = directory.guarded(config);
  const { verifyCredit } = rail.adapter;
  const report = await claimedReport(deps.store, rail.adapter, credit);
  if (!verifyCredit || !report) return { kind: 'again' };
  try {
    const asked = await withTimeout(
      rail.call(() => verifyCredit(report, now)),
      RAIL_CALL_TIMEOUT_MS,
    );
    return 'answer' in asked
      ? { kind: 'answered', verification: asked.answer }
      : { kind: 'asked', queryReference: asked.queryReference };
  } catch (error) {
    return error instanceof RailPartnerUnavailableError
      ? { kind: 'again', afterMs: error.retryAfterMs }
      : { kind: 'again' };
  }
}

/** Records the partner's answer, unless the payment was verified meanwhile (its answer came first). */
async function record(
  deps: Deps,
  directory: RailPartnerDirectory,
  leased: RailPartnerCredit,
  answer: Answer,
): Promise<void> {
  await deps.store.transaction(async (tx) => {
    const current = await findRailPartnerCredit(tx, leased, { forUpdate: true });
    if (!current || !isAwaitingVerification(current.status)) return;
    const config =
      current.configId && (await findRailPartnerConfig(tx, current.organizationId, current.configId));
    const now = deps.now();
    const attempts = current.verificationAttempts + 1;
    const again = (afterMs: number, queryReference = current.queryReference) =>
      saveRailPartnerCreditCheck(tx, {
        ...current,
        queryReference,
        verificationAttempts: attempts,
        nextCheckAt: new Date(now.getTime() + afterMs),
      });
    if (answer.kind === 'asked')
      return again(creditVerificationRetryMs(current.verificationAttempts), answer.queryReference);
    if (answer.kind === 'again' || !config) {
      return again(
        answer.kind === 'again' && answer.afterMs !== undefined
          ? answer.afterMs
          : creditVerificationRetryMs(current.verificationAttempts),
      );
    }
    const adapter = directory.adapterFor(config);
    if (answer.kind === 'expired') {
      await settleCreditVerification(tx, deps, config, adapter, current, 'unanswered', null);
      return;
    }
    const effect = await settleCreditVerification(
      tx,
      deps,
      config,
      adapter,
      current,
      answer.verification,
      null,
    );
    // Still pending: asked again later.
    if (effect.status === 'ignored') await again(creditVerificationRetryMs(current.verificationAttempts));
  });
}

const LEASED_CREDITS: LeasedRows<RailPartnerCredit, RailPartnerCreditKey> = {
  claimDue: claimDueRailPartnerCredit,
  saveLease: saveRailPartnerCreditCheck,
  keyOf: (credit) => credit,
};

/** One pass over the due payments; returns how many it looked at. */
export async function runRailCreditVerificationWorkerOnce(
  deps: Deps,
  directory: RailPartnerDirectory,
): Promise<number> {
  return workLeasedRows(deps, RAIL_CREDIT_VERIFICATION_BATCH_ROWS, LEASED_CREDITS, async (leased) =>
    record(deps, directory, leased, await ask(deps, directory, leased)),
  );
}
