/**
 * Verifying a C2B payment with M-Pesa before it is credited (rail.ts `verifyCredit`): Daraja does not sign
 * C2B confirmations, so whoever learns the confirmation address could POST one. We ask Transaction Status
 * by the payment's receipt (`TransactionID` = the confirmation's TransID) with the result sent to
 * `c2b/verify/{TransID}`, and read that result (pure) into a credit verification report: the payment's
 * status, amount and receiving party as M-Pesa has them, and the query's ConversationID, which only Daraja's
 * synchronous answer told us, so a forged result cannot name a question we asked.
 */

import {
  type ArrivedCallback,
  type CreditReport,
  type CreditVerificationAsk,
  type CreditVerificationReport,
  MalformedCallbackError,
} from '../../../../rails/partner.ts';
import { amountMinorOf, keyValues, objectField, resultCodeOf } from './callbackFields.ts';
import { type DarajaConnection, DarajaProtocolError } from './connection.ts';
import { askTransactionStatus } from './payouts.ts';
import { DARAJA_CALLBACK_PATHS, parseObject } from './protocol.ts';

/** Where a C2B verification result arrives: this, then the payment's TransID. */
export const DARAJA_C2B_VERIFY_PATH_PREFIX = 'c2b/verify/';
/** Result codes that mean M-Pesa has no such transaction (the simulator answers `2033`; `2032` is read too). */
const NOT_FOUND_RESULT_CODES = new Set(['2032', '2033']);
/** TransactionStatus values of a payment that did not complete (Daraja publishes only `Completed`). */
const FAILED_STATUSES = new Set(['failed', 'declined', 'cancelled', 'canceled', 'expired', 'reversed']);

/** A C2B verification result read, or undefined for a callback at any other path. */
export function parseC2BVerificationCallback(
  callback: ArrivedCallback,
  paybill: string,
): CreditVerificationReport | undefined {
  if (!callback.path.startsWith(DARAJA_C2B_VERIFY_PATH_PREFIX)) return undefined;
  const body = parseObject(callback.rawBody);
  if (!body) throw new MalformedCallbackError(`Daraja callback at ${callback.path} is not a JSON object`);
  return parseC2BVerification(body, callback.path, paybill);
}

/** Asks Transaction Status about the payment by its TransID; the result arrives at `c2b/verify/{TransID}`. */
export async function verifyC2BPayment(
  connection: DarajaConnection,
  paybill: string,
  report: CreditReport,
): Promise<CreditVerificationAsk> {
  const transId = report.partnerTransactionId;
  const conversationId = await askTransactionStatus(connection, {
    reference: transId,
    byReceipt: true,
    partyA: paybill,
    occasion: transId,
    remarks: 'Payment verification',
    resultPath: `${DARAJA_C2B_VERIFY_PATH_PREFIX}${encodeURIComponent(transId)}`,
    timeoutPath: DARAJA_CALLBACK_PATHS.statusQueueTimeout,
  });
  if (conversationId === undefined || conversationId === '') {
    throw new DarajaProtocolError(`Daraja accepted the status query for ${transId} without a ConversationID`);
  }
  return { queryReference: conversationId };
}

/**
 * A Transaction Status result about a C2B payment, named by the path's TransID. `toOurAccount` when the
 * CreditPartyName is our paybill (`"<shortcode> - <name>"`, as the published sample writes parties).
 */
export function parseC2BVerification(
  body: Record<string, unknown>,
  path: string,
  paybill: string,
): CreditVerificationReport {
  const transId = decodeURIComponent(path.slice(DARAJA_C2B_VERIFY_PATH_PREFIX.length));
  if (transId === '') throw new MalformedCallbackError('C2B verification result names no TransID');
  const result = objectField(body, 'Result', 'C2B verification result');
  const code = resultCodeOf(result, 'C2B verification result');
  const conversationId = result.ConversationID;
  if (typeof conversationId !== 'string' || conversationId === '') {
    throw new MalformedCallbackError('C2B verification result has no ConversationID');
  }
  const base = {
    kind: 'credit_verification' as const,
    partnerTransactionId: transId,
    queryReference: conversationId,
  };
  if (NOT_FOUND_RESULT_CODES.has(code)) return { ...base, outcome: 'not_found', toOurAccount: false };
  // Any other refusal (our initiator's credentials, a system error) says nothing about the payment.
  if (code !== '0') return { ...base, outcome: 'pending', toOurAccount: false };
  const parameters = keyValues(result.ResultParameters, 'ResultParameter', 'Key', 'C2B verification result');
  const receipt = parameters.get('ReceiptNo');
  // An answer about another transaction does not vouch for this one.
  if (typeof receipt === 'string' && receipt !== '' && receipt !== transId) {
    return { ...base, outcome: 'not_found', toOurAccount: false };
  }
  const creditParty = parameters.get('CreditPartyName');
  const receiver = typeof creditParty === 'string' ? creditParty : undefined;
  const toOurAccount = receiver !== undefined && receiver.split(' - ')[0]?.trim() === paybill;
  const status = String(parameters.get('TransactionStatus') ?? '').toLowerCase();
  const described = { ...base, toOurAccount, ...(receiver === undefined ? {} : { receiver }) };
  if (status === 'completed') {
    return {
      ...described,
      outcome: 'completed',
      amountMinor: amountMinorOf(parameters.get('Amount'), 'C2B verification result Amount'),
    };
  }
  return { ...described, outcome: FAILED_STATUSES.has(status) ? 'failed' : 'pending' };
}
