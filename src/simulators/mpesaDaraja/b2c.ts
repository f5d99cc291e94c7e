/**
 * Daraja's B2C API (payment requests, v1 and v3): checks a request as Daraja does, accepts it for processing
 * once per OriginatorConversationID, and POSTs its result to the ResultURL (or, when it times out in
 * Daraja's queue, a notice to the QueueTimeOutURL).
 *
 * A repeated OriginatorConversationID is refused (HTTP 500, `500.002.1001` "Duplicate
 * OriginatorConversationID") and makes no second payment; Daraja does not replay the first answer.
 */

import { behaviourOf, type DarajaSimulatedOutcome } from './behaviours.ts';
import { schedule } from './callbacks.ts';
import {
  conversationId,
  dottedDateTime,
  placeholderTransactionId,
  receiptNumber,
  requestIdLike,
} from './formats.ts';
import {
  INITIATOR_INVALID,
  queueTimeoutReference,
  recordPayment,
  schedulePaymentResult,
} from './resultApis.ts';
import { initiatorValid } from './securityCredential.ts';
import {
  ACCEPTED_DESC,
  ApiAnswer,
  type DarajaSimulatedPayment,
  type DarajaState,
  errorBody,
  invalidField,
  SUCCESS_DESC,
} from './state.ts';
import {
  absoluteUrl,
  b2cRemarksValid,
  nonEmptyString,
  optionalText,
  REMARKS_MAX_CHARS,
  SAFARICOM_MSISDN,
  SHORTCODE,
  wholeAmount,
} from './validation.ts';

export const B2C_PATHS = new Set(['/mpesa/b2c/v1/paymentrequest', '/mpesa/b2c/v3/paymentrequest']);

const B2C_COMMAND_IDS = new Set(['BusinessPayment', 'SalaryPayment', 'PromotionPayment']);

/** POST /mpesa/b2c/v{1,3}/paymentrequest */
export function b2cPaymentRequest(
  state: DarajaState,
  path: string,
  body: Record<string, unknown>,
): ApiAnswer | 'hang' {
  const checked = checkPaymentRequest(path, body);
  if (checked instanceof ApiAnswer) return checked;
  const { amount, partyA, partyB } = checked;
  const originator = body.OriginatorConversationID;
  const originatorConversationId = nonEmptyString(originator) ? originator : requestIdLike();
  if (state.paymentsByOriginator.has(originatorConversationId)) {
    return new ApiAnswer(500, errorBody('500.002.1001', 'Duplicate OriginatorConversationID'));
  }
  const behaviour = behaviourOf(partyB).payout;
  if (behaviour.kind === 'refuse') {
    return new ApiAnswer(behaviour.status, errorBody(behaviour.errorCode, behaviour.errorMessage));
  }
  const credentialsValid = initiatorValid(state.config, body.InitiatorName, body.SecurityCredential);
  const outcome: DarajaSimulatedOutcome = credentialsValid ? behaviour : INITIATOR_INVALID;
  const payment: DarajaSimulatedPayment = {
    originatorConversationId,
    conversationId: conversationId(),
    receipt: receiptNumber(),
    partyA,
    partyB,
    amount,
    outcome,
    acceptedAt: state.now(),
  };
  recordPayment(state, payment);
  scheduleResultOrQueueNotice(state, payment, body);
  if (outcome.kind === 'hang') return 'hang';
  return new ApiAnswer(200, {
    ConversationID: payment.conversationId,
    OriginatorConversationID: originatorConversationId,
    ResponseCode: '0',
    ResponseDescription: ACCEPTED_DESC,
  });
}

/** Daraja's refusal of the first missing or malformed field, or the payee and amount of a valid request. */
function checkPaymentRequest(
  path: string,
  body: Record<string, unknown>,
): ApiAnswer | { amount: number; partyA: string; partyB: string } {
  const version3 = path.includes('/v3/');
  const originator = body.OriginatorConversationID;
  if (version3 && !nonEmptyString(originator)) return invalidField('OriginatorConversationID');
  if (originator !== undefined && !nonEmptyString(originator))
    return invalidField('OriginatorConversationID');
  if (!nonEmptyString(body.InitiatorName)) return invalidField('InitiatorName');
  if (!nonEmptyString(body.SecurityCredential)) return invalidField('SecurityCredential');
  if (!B2C_COMMAND_IDS.has(String(body.CommandID))) return invalidField('CommandID');
  const amount = wholeAmount(body.Amount);
  if (amount === null) return invalidField('Amount');
  const partyA = String(body.PartyA ?? '');
  if (!SHORTCODE.test(partyA)) return invalidField('PartyA');
  const partyB = String(body.PartyB ?? '');
  if (!SAFARICOM_MSISDN.test(partyB)) return invalidField('PartyB');
  if (!b2cRemarksValid(body.Remarks)) return invalidField('Remarks');
  if (!absoluteUrl(body.QueueTimeOutURL)) return invalidField('QueueTimeOutURL');
  if (!absoluteUrl(body.ResultURL)) return invalidField('ResultURL');
  // Daraja's sample spells it "Occassion"; both spellings are accepted, neither is required.
  const occasion = body.Occassion ?? body.Occasion;
  if (!optionalText(occasion, REMARKS_MAX_CHARS)) return invalidField('Occasion');
  return { amount, partyA, partyB };
}

/** A payment that times out in the queue gets only the queue notice; any other, the result its outcome says. */
function scheduleResultOrQueueNotice(
  state: DarajaState,
  payment: DarajaSimulatedPayment,
  body: Record<string, unknown>,
): void {
  if (payment.outcome.kind === 'queue_timeout') {
    const notice = JSON.stringify(queueTimeoutBody(payment));
    schedule(state, String(body.QueueTimeOutURL), () => notice, state.config.callbackDelayMs);
    return;
  }
  schedulePaymentResult(state, payment, String(body.ResultURL), () => b2cResultBody(payment));
}

function b2cResultBody(payment: DarajaSimulatedPayment): unknown {
  const referenceData = queueTimeoutReference('b2cresults');
  if (payment.outcome.kind === 'decline') {
    return {
      Result: {
        ResultType: 0,
        ResultCode: payment.outcome.resultCode,
        ResultDesc: payment.outcome.resultDesc,
        OriginatorConversationID: payment.originatorConversationId,
        ConversationID: payment.conversationId,
        TransactionID: placeholderTransactionId(payment.receipt),
        ReferenceData: referenceData,
      },
    };
  }
  return {
    Result: {
      ResultType: 0,
      ResultCode: 0,
      ResultDesc: SUCCESS_DESC,
      OriginatorConversationID: payment.originatorConversationId,
      ConversationID: payment.conversationId,
      TransactionID: payment.receipt,
      ResultParameters: {
        ResultParameter: [
          { Key: 'TransactionAmount', Value: payment.amount },
          { Key: 'TransactionReceipt', Value: payment.receipt },
          { Key: 'B2CRecipientIsRegisteredCustomer', Value: 'Y' },
          { Key: 'B2CChargesPaidAccountAvailableFunds', Value: -4510.0 },
          { Key: 'ReceiverPartyPublicName', Value: `${payment.partyB} - Simulated Customer` },
          { Key: 'TransactionCompletedDateTime', Value: dottedDateTime(payment.completedAt ?? new Date()) },
          { Key: 'B2CUtilityAccountAvailableFunds', Value: 10116.0 },
          { Key: 'B2CWorkingAccountAvailableFunds', Value: 900000.0 },
        ],
      },
      ReferenceData: referenceData,
    },
  };
}

/** Assumed shape: Daraja documents the QueueTimeOutURL but not its body; integrators see a Result like this. */
function queueTimeoutBody(payment: DarajaSimulatedPayment): unknown {
  return {
    Result: {
      ResultType: 1,
      ResultCode: 1,
      ResultDesc: 'The service request has timed out.',
      OriginatorConversationID: payment.originatorConversationId,
      ConversationID: payment.conversationId,
      TransactionID: placeholderTransactionId(payment.receipt),
    },
  };
}
