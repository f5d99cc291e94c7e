/**
 * Daraja's B2B payment request (payouts from a shortcode to a paybill or a till): checks a request field by
 * field as Daraja does, accepts it for processing, and POSTs its result to the ResultURL in the published
 * shape. The payment debits PartyA's Utility Account (as B2C does) and, for a paybill, credits PartyB's;
 * more than PartyA's Utility Account holds is declined with ResultCode 1, a wrong initiator credential
 * with 2001. The request carries no OriginatorConversationID (Daraja generates one), so a repeated request
 * is a second payment, as it is on M-Pesa.
 */
import { utilityCents } from './accountBalance.ts';
import { type B2BRequest, b2bResultBody, CENTS_PER_SHILLING } from './b2bResult.ts';
import { type DarajaSimulatedOutcome, INSUFFICIENT_BALANCE } from './behaviours.ts';
import { conversationId, receiptNumber, requestIdLike } from './formats.ts';
import { acceptedAnswer, INITIATOR_INVALID, recordPayment, schedulePaymentResult } from './resultApis.ts';
import { initiatorValid } from './securityCredential.ts';
import { ApiAnswer, type DarajaSimulatedPayment, type DarajaState, invalidField } from './state.ts';
import {
  absoluteUrl,
  B2B_ACCOUNT_REFERENCE_MAX_CHARS,
  boundedText,
  nonEmptyString,
  optionalText,
  REMARKS_MAX_CHARS,
  SAFARICOM_MSISDN,
  SHORTCODE,
  SHORTCODE_IDENTIFIER_TYPE,
  TILL_IDENTIFIER_TYPE,
  wholeAmount,
} from './validation.ts';

export const B2B_PATH = '/mpesa/b2b/v1/paymentrequest';

/** The command IDs implemented, each with the receiver identifier type it pays. */
const B2B_RECEIVER_TYPES: Record<string, string> = {
  BusinessPayBill: SHORTCODE_IDENTIFIER_TYPE,
  BusinessBuyGoods: TILL_IDENTIFIER_TYPE,
};

/** POST /mpesa/b2b/v1/paymentrequest */
export function b2bPaymentRequest(state: DarajaState, body: Record<string, unknown>): ApiAnswer {
  const checked = checkB2BRequest(body);
  if (checked instanceof ApiAnswer) return checked;
  const outcome = b2bOutcome(state, body, checked);
  const payment: DarajaSimulatedPayment = {
    originatorConversationId: requestIdLike(),
    conversationId: conversationId(),
    receipt: receiptNumber(),
    partyA: checked.partyA,
    partyB: checked.partyB,
    amount: checked.amount,
    outcome,
    acceptedAt: state.now(),
    creditsUtilityOf: checked.commandId === 'BusinessPayBill' ? checked.partyB : undefined,
  };
  recordPayment(state, payment);
  const debitedBefore = utilityCents(state, checked.partyA);
  schedulePaymentResult(state, payment, String(body.ResultURL), () =>
    b2bResultBody(state, payment, checked, body, debitedBefore),
  );
  return acceptedAnswer(payment);
}

/** A wrong credential → 2001; more than PartyA's Utility Account holds → 1; otherwise the money moves. */
function b2bOutcome(
  state: DarajaState,
  body: Record<string, unknown>,
  request: B2BRequest,
): DarajaSimulatedOutcome {
  if (!initiatorValid(state.config, body.Initiator, body.SecurityCredential)) return INITIATOR_INVALID;
  const available = utilityCents(state, request.partyA);
  if (BigInt(request.amount) * CENTS_PER_SHILLING > available) return INSUFFICIENT_BALANCE;
  return { kind: 'complete', callback: 'once' };
}

/** Daraja's refusal of the first missing or malformed field, or the payment a valid request asks for. */
function checkB2BRequest(body: Record<string, unknown>): ApiAnswer | B2BRequest {
  if (!nonEmptyString(body.Initiator)) return invalidField('Initiator');
  if (!nonEmptyString(body.SecurityCredential)) return invalidField('SecurityCredential');
  const commandId = String(body.CommandID);
  const receiverType = Object.hasOwn(B2B_RECEIVER_TYPES, commandId)
    ? B2B_RECEIVER_TYPES[commandId]
    : undefined;
  if (receiverType === undefined) return invalidField('CommandID');
  if (String(body.SenderIdentifierType) !== SHORTCODE_IDENTIFIER_TYPE)
    return invalidField('SenderIdentifierType');
  // Daraja's field name is spelt "Reciever".
  if (String(body.RecieverIdentifierType) !== receiverType) return invalidField('RecieverIdentifierType');
  const amount = wholeAmount(body.Amount);
  if (amount === null) return invalidField('Amount');
  const partyA = String(body.PartyA ?? '');
  if (!SHORTCODE.test(partyA)) return invalidField('PartyA');
  const partyB = String(body.PartyB ?? '');
  if (!SHORTCODE.test(partyB)) return invalidField('PartyB');
  const paybill = commandId === 'BusinessPayBill';
  const reference = body.AccountReference;
  if (
    paybill
      ? !boundedText(reference, B2B_ACCOUNT_REFERENCE_MAX_CHARS)
      : !optionalText(reference, B2B_ACCOUNT_REFERENCE_MAX_CHARS)
  )
    return invalidField('AccountReference');
  if (body.Requester !== undefined && !SAFARICOM_MSISDN.test(String(body.Requester)))
    return invalidField('Requester');
  if (!boundedText(body.Remarks, REMARKS_MAX_CHARS)) return invalidField('Remarks');
  if (!absoluteUrl(body.QueueTimeOutURL)) return invalidField('QueueTimeOutURL');
  if (!absoluteUrl(body.ResultURL)) return invalidField('ResultURL');
  const occasion = body.Occassion ?? body.Occasion;
  if (!optionalText(occasion, REMARKS_MAX_CHARS)) return invalidField('Occasion');
  return {
    commandId,
    amount,
    partyA,
    partyB,
    accountReference: typeof reference === 'string' ? reference : undefined,
  };
}
