/**
 * The reports Daraja's results make of a payout, a collection or a reversal (callbacks.ts, b2b.ts,
 * reversal.ts): settled with M-Pesa's receipt, or failed with our failure code. Pure.
 */

import type { CallbackReport } from '../../../../rails/partner.ts';

/** A report on a payout, a collection or a reversal. */
type MovementReport = Extract<CallbackReport, { kind: 'payout' | 'collection' | 'reversal' }>;
/** What a report is about: the kind of movement and our reference for it (the outcome names it too). */
type ReportSubject = Pick<MovementReport, 'kind' | 'reference' | 'idempotencyReference'>;

/** A payout named by the transfer id: the reference its result is matched by, and our idempotency reference. */
export function payoutSubject(reference: string): ReportSubject {
  return { kind: 'payout', reference, idempotencyReference: reference };
}

/** The movement failed, with our failure code for the result. */
export function failedReport(subject: ReportSubject, failureCode: string): MovementReport {
  return { ...subject, outcome: { kind: 'failed', failureCode, reference: subject.reference } };
}

/** The movement settled, with M-Pesa's receipt and the amount the result reports. */
export function settledReport(subject: ReportSubject, receipt: string, amountMinor: bigint): MovementReport {
  return {
    ...subject,
    outcome: { kind: 'settled', reference: subject.reference },
    partnerTransactionId: receipt,
    amountMinor,
  };
}
