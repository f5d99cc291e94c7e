/**
 * Daraja's Transaction Status API: a query names a B2C payment by its receipt (`TransactionID`) or by the
 * payment's OriginatorConversationID, sent as `OriginalConversationID` (the published request's name), or a
 * completed C2B payment to the query's `PartyA` by its TransID (`TransactionID`), is accepted at once, and
 * its result (the payment as it stands when the result is sent) is POSTed to the query's ResultURL. A
 * TransactionID M-Pesa never issued (a forged one) is not found: ResultCode `2033`.
 */
import { schedule } from './callbacks.ts';
import { compactDateTime, conversationId, placeholderTransactionId, requestIdLike } from './formats.ts';
import { acceptedAnswer, INITIATOR_INVALID, initiatorRefusal } from './resultApis.ts';
import { initiatorValid } from './securityCredential.ts';
import {
  ApiAnswer,
  type DarajaSimulatedC2BPayment,
  type DarajaSimulatedPayment,
  type DarajaState,
  invalidField,
  SUCCESS_DESC,
} from './state.ts';
import {
  absoluteUrl,
  boundedText,
  nonEmptyString,
  optionalText,
  REMARKS_MAX_CHARS,
  SHORTCODE,
} from './validation.ts';

export const TRANSACTION_STATUS_PATH = '/mpesa/transactionstatus/v1/query';

/** The ids a status query answers with, and its result names. */
interface StatusQuery {
  originatorConversationId: string;
  conversationId: string;
}

/** POST /mpesa/transactionstatus/v1/query */
export function transactionStatusQuery(state: DarajaState, body: Record<string, unknown>): ApiAnswer {
  const checked = checkStatusQuery(body);
  if (checked instanceof ApiAnswer) return checked;
  const { transactionId, originator, occasion } = checked;
  const query: StatusQuery = { originatorConversationId: requestIdLike(), conversationId: conversationId() };
  const credentialsValid = initiatorValid(state.config, body.Initiator, body.SecurityCredential);
  const payment =
    (originator !== undefined ? state.paymentsByOriginator.get(originator) : undefined) ??
    state.payments.find((p) => transactionId !== undefined && p.receipt === transactionId);
  const c2bPayment =
    payment === undefined && transactionId !== undefined
      ? state.c2bPayments.find(
          (p) =>
            p.transId === transactionId && p.status === 'completed' && p.shortCode === String(body.PartyA),
        )
      : undefined;
  // Built when sent: it reports the payment as it stands then.
  schedule(
    state,
    String(body.ResultURL),
    () =>
      JSON.stringify(
        statusResultBody(
          state.config.shortCode,
          query,
          credentialsValid,
          c2bPayment ?? payment,
          typeof occasion === 'string' ? occasion : undefined,
        ),
      ),
    state.config.callbackDelayMs,
  );
  return acceptedAnswer(query);
}

/** Daraja's refusal of the first missing or malformed field, or what a valid query names the payment by. */
function checkStatusQuery(
  body: Record<string, unknown>,
): ApiAnswer | { transactionId?: string; originator?: string; occasion: unknown } {
  const initiatorProblem = initiatorRefusal(body, 'TransactionStatusQuery');
  if (initiatorProblem) return initiatorProblem;
  const transactionId = nonEmptyString(body.TransactionID) ? body.TransactionID : undefined;
  // The published request names the payment's id OriginalConversationID; any other spelling is ignored,
  // as Daraja ignores fields it does not know.
  const originator = nonEmptyString(body.OriginalConversationID) ? body.OriginalConversationID : undefined;
  if (transactionId === undefined && originator === undefined) return invalidField('TransactionID');
  if (!SHORTCODE.test(String(body.PartyA ?? ''))) return invalidField('PartyA');
  if (!['1', '2', '4'].includes(String(body.IdentifierType))) return invalidField('IdentifierType');
  if (!absoluteUrl(body.ResultURL)) return invalidField('ResultURL');
  if (body.QueueTimeOutURL !== undefined && !absoluteUrl(body.QueueTimeOutURL))
    return invalidField('QueueTimeOutURL');
  if (!boundedText(body.Remarks, REMARKS_MAX_CHARS)) return invalidField('Remarks');
  const occasion = body.Occasion ?? body.Occassion;
  if (!optionalText(occasion, REMARKS_MAX_CHARS)) return invalidField('Occasion');
  return { transactionId, originator, occasion };
}

function statusResultBody(
  shortCode: string,
  query: StatusQuery,
  credentialsValid: boolean,
  payment: DarajaSimulatedPayment | DarajaSimulatedC2BPayment | undefined,
  occasion: string | undefined,
): unknown {
  const envelope = (code: number, desc: string, transactionId: string) => ({
    ConversationID: query.conversationId,
    OriginatorConversationID: query.originatorConversationId,
    ReferenceData: { ReferenceItem: { Key: 'Occasion', Value: occasion ?? '' } },
    ResultCode: code,
    ResultDesc: desc,
    ResultType: 0,
    TransactionID: transactionId,
  });
  if (!credentialsValid) {
    return {
      Result: envelope(INITIATOR_INVALID.resultCode, INITIATOR_INVALID.resultDesc, 'NLJ0000000'),
    };
  }
  if (payment !== undefined && 'transId' in payment) {
    return {
      Result: {
        ...envelope(0, SUCCESS_DESC, payment.transId),
        ResultParameters: { ResultParameter: c2bStatusParameters(payment) },
      },
    };
  }
  if (payment === undefined || payment.outcome.kind === 'queue_timeout') {
    return {
      Result: envelope(
        2033,
        'The transaction receipt number cannot be found by the specified OriginatorConversationID or ConversationID.',
        'NLJ0000000',
      ),
    };
  }
  const status = transactionStatusOf(payment);
  const transactionId = status === 'Completed' ? payment.receipt : placeholderTransactionId(payment.receipt);
  return {
    Result: {
      ...envelope(0, SUCCESS_DESC, transactionId),
      ResultParameters: { ResultParameter: paymentStatusParameters(shortCode, payment, status) },
    },
  };
}

/** Assumed: Daraja does not publish the TransactionStatus values; "Completed" is in its sample. */
function transactionStatusOf(payment: DarajaSimulatedPayment): 'Pending' | 'Failed' | 'Completed' {
  return payment.completedAt === undefined
    ? 'Pending'
    : payment.outcome.kind === 'decline'
      ? 'Failed'
      : 'Completed';
}

/** The ResultParameter list of a found payment, in Daraja's sample order. */
function paymentStatusParameters(
  shortCode: string,
  payment: DarajaSimulatedPayment,
  status: 'Pending' | 'Failed' | 'Completed',
): Array<{ Key: string; Value?: unknown }> {
  const completed = status === 'Completed';
  const reason = payment.outcome.kind === 'decline' ? payment.outcome.resultDesc : undefined;
  return [
    { Key: 'DebitPartyName', Value: `${shortCode} - Simulated Business` },
    { Key: 'CreditPartyName', Value: `${payment.partyB} - Simulated Customer` },
    { Key: 'OriginatorConversationID', Value: payment.originatorConversationId },
    { Key: 'InitiatedTime', Value: compactDateTime(payment.acceptedAt) },
    { Key: 'DebitAccountType', Value: 'Utility Account' },
    { Key: 'DebitPartyCharges', Value: 'Fee For B2C Payment|KES|22.40' },
    reason === undefined ? { Key: 'TransactionReason' } : { Key: 'TransactionReason', Value: reason },
    { Key: 'ReasonType', Value: 'Business Payment to Customer via API' },
    { Key: 'TransactionStatus', Value: status },
    payment.completedAt === undefined
      ? { Key: 'FinalisedTime' }
      : { Key: 'FinalisedTime', Value: compactDateTime(payment.completedAt) },
    { Key: 'Amount', Value: payment.amount },
    { Key: 'ConversationID', Value: payment.conversationId },
    completed ? { Key: 'ReceiptNo', Value: payment.receipt } : { Key: 'ReceiptNo' },
  ];
}

/**
 * A completed C2B payment's ResultParameter list, in the published sample's order: the payer debited, our
 * paybill or till credited (`"<shortcode> - <name>"`, as the sample writes parties), its TransID the receipt.
 * The sample is a B2C payment's; the C2B values of DebitAccountType and ReasonType are assumed.
 */
function c2bStatusParameters(payment: DarajaSimulatedC2BPayment): Array<{ Key: string; Value?: unknown }> {
  const at = compactDateTime(payment.at);
  return [
    { Key: 'DebitPartyName', Value: `${payment.msisdn} - ${payment.firstName}` },
    { Key: 'CreditPartyName', Value: `${payment.shortCode} - Simulated Business` },
    { Key: 'OriginatorConversationID' },
    { Key: 'InitiatedTime', Value: at },
    { Key: 'DebitAccountType', Value: 'MMF Account For Customer' },
    { Key: 'DebitPartyCharges' },
    { Key: 'TransactionReason' },
    {
      Key: 'ReasonType',
      Value: payment.commandId === 'CustomerBuyGoodsOnline' ? 'Buy Goods Online' : 'Pay Bill Online',
    },
    { Key: 'TransactionStatus', Value: 'Completed' },
    { Key: 'FinalisedTime', Value: at },
    { Key: 'Amount', Value: payment.amount },
    { Key: 'ConversationID' },
    { Key: 'ReceiptNo', Value: payment.transId },
  ];
}
