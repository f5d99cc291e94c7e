/**
 * Daraja's Reversal API: a request naming a completed M-Pesa transaction by its receipt (`TransactionID`) is
 * checked field by field as Daraja checks it, acknowledged at once, and its result POSTed to the ResultURL
 * in the published sample's shape. Only a completed B2C or B2B payment made by the `ReceiverParty`
 * shortcode, for exactly the `Amount` paid and not reversed before, is reversed: the money goes back to
 * that shortcode's Utility Account (recorded as a payment from the payee to it, so Account Balance and
 * Transaction Status see it). Otherwise the result says why: `R000001` already reversed, `R000002` no
 * such transaction (for that shortcode and amount), `2001` a wrong initiator credential.
 */
import { accountText, utilityCents } from './accountBalance.ts';
import { type DarajaSimulatedOutcome, declined } from './behaviours.ts';
import { compactDateTime, conversationId, receiptNumber, requestIdLike } from './formats.ts';
import {
  acceptedAnswer,
  INITIATOR_INVALID,
  initiatorRefusal,
  paymentResultBody,
  queueTimeoutReference,
  recordPayment,
  schedulePaymentResult,
} from './resultApis.ts';
import { initiatorValid } from './securityCredential.ts';
import { ApiAnswer, type DarajaSimulatedPayment, type DarajaState, invalidField } from './state.ts';
import {
  absoluteUrl,
  b2cRemarksValid,
  optionalText,
  REMARKS_MAX_CHARS,
  SHORTCODE,
  wholeAmount,
} from './validation.ts';

export const REVERSAL_PATH = '/mpesa/reversal/v1/request';

/** The only `RecieverIdentifierType` the published page allows for a reversal ("should be '11'"). */
const REVERSAL_RECEIVER_IDENTIFIER_TYPE = '11';
/** An M-Pesa receipt: ten upper-case letters and digits (formats.ts writes them so). */
const RECEIPT = /^[A-Z0-9]{10}$/;

const ALREADY_REVERSED = declined('R000001', 'The transaction has already been reversed.');
const INVALID_ORIGINAL = declined('R000002', 'The OriginalTransactionID is invalid.');

/** What a valid reversal request asks for. */
interface ReversalRequest {
  transactionId: string;
  amount: number;
  receiverParty: string;
}

/** The receipts each simulator has reversed: kept beside its state so a second reversal finds the first. */
const reversedReceipts = new WeakMap<DarajaState, Map<string, DarajaSimulatedPayment>>();

function reversalsOf(state: DarajaState): Map<string, DarajaSimulatedPayment> {
  let reversals = reversedReceipts.get(state);
  if (!reversals) {
    reversals = new Map();
    reversedReceipts.set(state, reversals);
  }
  return reversals;
}

/** POST /mpesa/reversal/v1/request */
export function reversalRequest(state: DarajaState, body: Record<string, unknown>): ApiAnswer {
  const checked = checkReversalRequest(body);
  if (checked instanceof ApiAnswer) return checked;
  const original = state.payments.find((p) => p.receipt === checked.transactionId);
  const outcome = reversalOutcome(state, body, checked, original);
  const reversal: DarajaSimulatedPayment = {
    originatorConversationId: requestIdLike(),
    conversationId: conversationId(),
    receipt: receiptNumber(),
    // The money comes back from the payee to the shortcode that paid.
    partyA: original?.partyB ?? checked.receiverParty,
    partyB: checked.receiverParty,
    amount: checked.amount,
    outcome,
    acceptedAt: state.now(),
    creditsUtilityOf: outcome.kind === 'complete' ? checked.receiverParty : undefined,
  };
  if (outcome.kind === 'complete') reversalsOf(state).set(checked.transactionId, reversal);
  recordPayment(state, reversal);
  schedulePaymentResult(state, reversal, String(body.ResultURL), () =>
    reversalResultBody(state, reversal, checked),
  );
  return acceptedAnswer(reversal);
}

/**
 * A wrong credential → 2001; a receipt already reversed → R000001; no completed payment of that receipt,
 * from that shortcode, for that amount → R000002; otherwise the money comes back.
 */
function reversalOutcome(
  state: DarajaState,
  body: Record<string, unknown>,
  request: ReversalRequest,
  original: DarajaSimulatedPayment | undefined,
): DarajaSimulatedOutcome {
  if (!initiatorValid(state.config, body.Initiator, body.SecurityCredential)) return INITIATOR_INVALID;
  if (reversalsOf(state).has(request.transactionId)) return ALREADY_REVERSED;
  const reversible =
    original !== undefined &&
    original.completedAt !== undefined &&
    original.outcome.kind !== 'decline' &&
    original.partyA === request.receiverParty &&
    original.amount === request.amount;
  return reversible ? { kind: 'complete', callback: 'once' } : INVALID_ORIGINAL;
}

/** Daraja's refusal of the first missing or malformed field, or the reversal a valid request asks for. */
function checkReversalRequest(body: Record<string, unknown>): ApiAnswer | ReversalRequest {
  const initiatorProblem = initiatorRefusal(body, 'TransactionReversal');
  if (initiatorProblem) return initiatorProblem;
  const transactionId = String(body.TransactionID ?? '');
  if (!RECEIPT.test(transactionId)) return invalidField('TransactionID');
  const amount = wholeAmount(body.Amount);
  if (amount === null) return invalidField('Amount');
  const receiverParty = String(body.ReceiverParty ?? '');
  if (!SHORTCODE.test(receiverParty)) return invalidField('ReceiverParty');
  // Daraja's field name is spelt "Reciever".
  if (String(body.RecieverIdentifierType) !== REVERSAL_RECEIVER_IDENTIFIER_TYPE)
    return invalidField('RecieverIdentifierType');
  if (!absoluteUrl(body.ResultURL)) return invalidField('ResultURL');
  if (!absoluteUrl(body.QueueTimeOutURL)) return invalidField('QueueTimeOutURL');
  if (!b2cRemarksValid(body.Remarks)) return invalidField('Remarks');
  const occasion = body.Occasion ?? body.Occassion;
  if (!optionalText(occasion, REMARKS_MAX_CHARS)) return invalidField('Occasion');
  return { transactionId, amount, receiverParty };
}

/** The shortcode's Utility Account as the result writes it, as Account Balance writes one account. */
function utilityAccountAfter(state: DarajaState, request: ReversalRequest): string {
  return accountText('Utility Account', utilityCents(state, request.receiverParty));
}

/** The published result: on success the shortcode's Utility Account after it and the original receipt. */
function reversalResultBody(
  state: DarajaState,
  reversal: DarajaSimulatedPayment,
  request: ReversalRequest,
): unknown {
  return paymentResultBody(reversal, queueTimeoutReference('reversalresults'), () => [
    { Key: 'DebitAccountBalance', Value: utilityAccountAfter(state, request) },
    { Key: 'Amount', Value: reversal.amount },
    { Key: 'TransCompletedTime', Value: compactDateTime(reversal.completedAt ?? state.now()) },
    { Key: 'OriginalTransactionID', Value: request.transactionId },
    { Key: 'Charge', Value: 0 },
    { Key: 'CreditPartyPublicName', Value: `${reversal.partyA} - Simulated Customer` },
    { Key: 'DebitPartyPublicName', Value: `${request.receiverParty} - Simulated Business` },
  ]);
}
