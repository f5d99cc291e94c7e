/**
 * M-Pesa C2B (payers paying the organization's paybill or till on their own) through Daraja (rail.ts):
 * registering the organization's validation and confirmation URLs for its shortcode, reading what arrives
 * there into credit reports (pure), and the answer a validation gets (ResultCode `0` accepts; a published
 * rejection code cancels the payment before the payer's money moves).
 */

import {
  type CreditDecision,
  type CreditReport,
  type CreditUrlRegistration,
  MalformedCallbackError,
} from '../../../../rails/partner.ts';
import { amountMinorOf, requiredString } from './callbackFields.ts';
import { type DarajaConnection, post, unexpected } from './connection.ts';
import { DARAJA_CALLBACK_PATHS, PATHS } from './protocol.ts';

/**
 * What M-Pesa does with a payment when our validation URL does not answer in time: `Completed` lets it
 * through (its confirmation is then credited, or lands in the exception queue), so an outage of ours never
 * turns payers away.
 */
export const DARAJA_C2B_RESPONSE_TYPE: CreditUrlRegistration['whenUnanswered'] = 'Completed';

/** The published validation rejection codes this adapter answers with, by our reason. */
export const DARAJA_C2B_REJECTION_CODES: Record<
  Extract<CreditDecision, { accepted: false }>['reason'],
  string
> = {
  unknown_account: 'C2B00012', // Invalid Account Number
  account_unavailable: 'C2B00016', // Other Error: the wallet exists but may not take money now
};

/** Registers the organization's C2B URLs for the paybill or till payers pay; throws when Daraja refuses. */
export async function registerC2BUrls(
  connection: DarajaConnection,
  shortCode: string,
): Promise<CreditUrlRegistration> {
  const confirmationUrl = `${connection.callbackBase}/${DARAJA_CALLBACK_PATHS.c2bConfirmation}`;
  const validationUrl = `${connection.callbackBase}/${DARAJA_CALLBACK_PATHS.c2bValidation}`;
  const answer = await post(connection, PATHS.c2bRegisterUrl, {
    ShortCode: shortCode,
    ResponseType: DARAJA_C2B_RESPONSE_TYPE,
    ConfirmationURL: confirmationUrl,
    ValidationURL: validationUrl,
  });
  if (answer.status !== 200 || String(answer.body?.ResponseCode ?? '0') !== '0') {
    return unexpected(PATHS.c2bRegisterUrl, answer);
  }
  return { account: shortCode, confirmationUrl, validationUrl, whenUnanswered: DARAJA_C2B_RESPONSE_TYPE };
}

/** A C2B validation or confirmation body; throws MalformedCallbackError for one not in the published shape. */
export function parseC2BCallback(body: Record<string, unknown>, stage: CreditReport['stage']): CreditReport {
  const what = `C2B ${stage}`;
  const transId = requiredString(body, 'TransID', what);
  const amountMinor = amountMinorOf(body.TransAmount, `${what} TransAmount`);
  if (amountMinor <= 0n) throw new MalformedCallbackError(`${what} TransAmount is not positive`);
  const reference = body.BillRefNumber;
  if (reference !== undefined && reference !== null && typeof reference !== 'string') {
    throw new MalformedCallbackError(`${what} BillRefNumber is not text`);
  }
  const payer = [body.MSISDN, body.FirstName, body.LastName]
    .filter((part): part is string => typeof part === 'string' && part.trim() !== '')
    .join(' ');
  return {
    kind: 'credit',
    stage,
    partnerTransactionId: transId,
    accountReference: reference ?? '',
    amountMinor,
    currency: 'KES',
    payer,
  };
}

/** The answer M-Pesa reads: ResultCode `0` to accept, a rejection code to cancel; a confirmation is acknowledged. */
export function answerC2BCredit(report: CreditReport, decision: CreditDecision): Record<string, unknown> {
  if (report.stage === 'confirmation') return { ResultCode: '0', ResultDesc: 'Success' };
  if (decision.accepted) return { ResultCode: '0', ResultDesc: 'Accepted' };
  return { ResultCode: DARAJA_C2B_REJECTION_CODES[decision.reason], ResultDesc: 'Rejected' };
}
