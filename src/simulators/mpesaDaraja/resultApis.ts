/**
 * What Daraja's result APIs (B2C, B2B, Reversal, Account Balance, Transaction Status) share: the initiator
 * fields a request is checked for first, the acknowledgement of an accepted request, the result of a wrong
 * initiator credential, the ReferenceData naming the sandbox's queue URL, and keeping a payment whose
 * result is POSTed later.
 */
import { scheduleResult } from './callbacks.ts';
import { placeholderTransactionId } from './formats.ts';
import {
  ACCEPTED_DESC,
  ApiAnswer,
  type DarajaSimulatedPayment,
  type DarajaState,
  invalidField,
  SUCCESS_DESC,
} from './state.ts';
import { nonEmptyString } from './validation.ts';

/** The result of a request whose initiator name or SecurityCredential is wrong (ResultCode 2001). */
export const INITIATOR_INVALID = {
  kind: 'decline',
  resultCode: 2001,
  resultDesc: 'The initiator information is invalid.',
} as const;

/** Daraja's refusal of a missing Initiator or SecurityCredential, or of a CommandID other than the API's. */
export function initiatorRefusal(body: Record<string, unknown>, commandId: string): ApiAnswer | undefined {
  if (!nonEmptyString(body.Initiator)) return invalidField('Initiator');
  if (!nonEmptyString(body.SecurityCredential)) return invalidField('SecurityCredential');
  if (body.CommandID !== commandId) return invalidField('CommandID');
  return undefined;
}

/** The synchronous answer to an accepted request: the ids its result will carry. */
export function acceptedAnswer(ids: { originatorConversationId: string; conversationId: string }): ApiAnswer {
  return new ApiAnswer(200, {
    OriginatorConversationID: ids.originatorConversationId,
    ConversationID: ids.conversationId,
    ResponseCode: '0',
    ResponseDescription: ACCEPTED_DESC,
  });
}

/** A result's ReferenceData as the published samples write it: the sandbox's queue URL of the API's results. */
export function queueTimeoutReference(resultsPath: string) {
  return {
    ReferenceItem: {
      Key: 'QueueTimeoutURL',
      Value: `https://internalsandbox.safaricom.co.ke/mpesa/${resultsPath}/v1/submit`,
    },
  };
}

/**
 * A payment's result as the B2B and Reversal samples write it: a declined one carries its code and a
 * placeholder TransactionID; a completed one its receipt and the API's `parameters`, built only then.
 */
export function paymentResultBody(
  payment: DarajaSimulatedPayment,
  referenceData: unknown,
  parameters: () => Array<{ Key: string; Value: unknown }>,
): unknown {
  const envelope = {
    ResultType: 0,
    OriginatorConversationID: payment.originatorConversationId,
    ConversationID: payment.conversationId,
  };
  if (payment.outcome.kind === 'decline') {
    const { resultCode, resultDesc } = payment.outcome;
    const declined = { TransactionID: placeholderTransactionId(payment.receipt) };
    return sampleResult(envelope, resultCode, resultDesc, declined, referenceData);
  }
  const completed = { TransactionID: payment.receipt, ResultParameters: { ResultParameter: parameters() } };
  return sampleResult(envelope, 0, SUCCESS_DESC, completed, referenceData);
}

/**
 * A result in the order the B2B, Reversal and Account Balance samples write its fields: the envelope (the
 * ids), the code and its description, what the API adds for that outcome, and ReferenceData last.
 */
export function sampleResult(
  envelope: Record<string, unknown>,
  resultCode: number | string,
  resultDesc: string,
  added: Record<string, unknown>,
  referenceData: unknown,
): unknown {
  return {
    Result: {
      ...envelope,
      ResultCode: resultCode,
      ResultDesc: resultDesc,
      ...added,
      ReferenceData: referenceData,
    },
  };
}

/** Keeps an accepted payment where Transaction Status, Account Balance and Reversal find it. */
export function recordPayment(state: DarajaState, payment: DarajaSimulatedPayment): void {
  state.paymentsByOriginator.set(payment.originatorConversationId, payment);
  state.payments.push(payment);
}

/** Schedules the result the payment's outcome calls for; the payment completes when the money moves. */
export function schedulePaymentResult(
  state: DarajaState,
  payment: DarajaSimulatedPayment,
  resultUrl: string,
  resultBody: () => unknown,
): void {
  scheduleResult(state, payment.outcome, resultUrl, resultBody, () => {
    payment.completedAt ??= state.now();
  });
}
