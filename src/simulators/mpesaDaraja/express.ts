/**
 * Daraja's M-Pesa Express API: an STK push asks the payer's phone to approve a payment and POSTs the result
 * to the CallBackURL; its query tells where a push stands. Both are signed with the paybill shortcode's
 * passkey.
 *
 * M-Pesa Express has no idempotency key: every accepted push is a new CheckoutRequestID and a new prompt.
 * The only guard is M-Pesa's own: a push to a phone that already has a prompt open is refused (HTTP 500,
 * `500.001.1001` "Unable to lock subscriber, ...").
 */
import { behaviourOf, declined } from './behaviours.ts';
import { scheduleResult } from './callbacks.ts';
import { checkoutRequestId, compactDateTime, receiptNumber, requestIdLike } from './formats.ts';
import {
  ApiAnswer,
  DARAJA_STK_PROMPT_TIMEOUT_MS,
  type DarajaSimulatedPush,
  type DarajaState,
  errorBody,
  invalidField,
  SUCCESS_DESC,
} from './state.ts';
import {
  ACCOUNT_REFERENCE_MAX_CHARS,
  absoluteUrl,
  boundedText,
  nonEmptyString,
  SAFARICOM_MSISDN,
  SHORTCODE,
  STK_TIMESTAMP,
  TRANSACTION_DESC_MAX_CHARS,
  wholeAmount,
} from './validation.ts';

export const STK_PUSH_PATH = '/mpesa/stkpush/v1/processrequest';
export const STK_QUERY_PATH = '/mpesa/stkpushquery/v1/query';

const STK_TRANSACTION_TYPES = new Set(['CustomerPayBillOnline', 'CustomerBuyGoodsOnline']);

/** How an unanswered prompt ends at the time-out, as Daraja's result codes name it. */
const PROMPT_UNANSWERED = declined(1037, 'DS timeout user cannot be reached');
const PROMPT_EXPIRED = declined(1019, 'Transaction has expired.');

/** POST /mpesa/stkpush/v1/processrequest */
export function stkPush(state: DarajaState, body: Record<string, unknown>): ApiAnswer | 'hang' {
  const checked = checkPush(state, body);
  if (checked instanceof ApiAnswer) return checked;
  const { amount, phoneNumber } = checked;
  const behaviour = behaviourOf(phoneNumber).collection;
  if (behaviour.kind === 'refuse') {
    return new ApiAnswer(behaviour.status, errorBody(behaviour.errorCode, behaviour.errorMessage));
  }
  // M-Pesa's one guard against a second prompt: the payer's phone is locked while one is open.
  endTimedOutPrompts(state);
  const shortCode = String(body.BusinessShortCode);
  if ([...state.openPushes].some((p) => p.phoneNumber === phoneNumber && p.businessShortCode === shortCode)) {
    return new ApiAnswer(
      500,
      errorBody(
        '500.001.1001',
        'Unable to lock subscriber, a transaction is already in process for the current subscriber',
      ),
    );
  }
  const push: DarajaSimulatedPush = {
    businessShortCode: shortCode,
    merchantRequestId: requestIdLike(),
    checkoutRequestId: checkoutRequestId(),
    receipt: receiptNumber(),
    phoneNumber,
    amount,
    accountReference: String(body.AccountReference),
    outcome: behaviour,
    acceptedAt: state.now(),
  };
  state.pushesByCheckout.set(push.checkoutRequestId, push);
  state.pushes.push(push);
  state.openPushes.add(push);
  scheduleResult(
    state,
    behaviour,
    String(body.CallBackURL),
    () => stkCallbackBody(push),
    () => {
      push.completedAt ??= state.now();
      state.openPushes.delete(push);
    },
  );
  if (behaviour.kind === 'hang') return 'hang';
  return new ApiAnswer(200, {
    MerchantRequestID: push.merchantRequestId,
    CheckoutRequestID: push.checkoutRequestId,
    ResponseCode: '0',
    ResponseDescription: 'Success. Request accepted for processing',
    CustomerMessage: 'Success. Request accepted for processing',
  });
}

/** POST /mpesa/stkpushquery/v1/query */
export function stkQuery(state: DarajaState, body: Record<string, unknown>): ApiAnswer {
  const refusal = stkCredentialsRefusal(state, body);
  if (refusal) return refusal;
  const push = state.pushesByCheckout.get(String(body.CheckoutRequestID ?? ''));
  if (!push) return new ApiAnswer(400, errorBody('400.002.02', 'Bad Request - Invalid CheckoutRequestID'));
  endTimedOutPrompts(state);
  if (push.completedAt === undefined) {
    return new ApiAnswer(500, errorBody('500.001.1001', 'The transaction is being processed'));
  }
  const declined = push.outcome.kind === 'decline' ? push.outcome : undefined;
  return new ApiAnswer(200, {
    ResponseCode: '0',
    // Daraja's own spelling.
    ResponseDescription: 'The service request has been accepted successsfully',
    MerchantRequestID: push.merchantRequestId,
    CheckoutRequestID: push.checkoutRequestId,
    ResultCode: String(declined?.resultCode ?? 0),
    ResultDesc: declined?.resultDesc ?? SUCCESS_DESC,
  });
}

/**
 * Prompts open past DARAJA_STK_PROMPT_TIMEOUT_MS (by the simulator's clock) end as M-Pesa ends them, and
 * release their phone's lock. Seen by the query and the next push; no callback is POSTed for it.
 */
function endTimedOutPrompts(state: DarajaState): void {
  const now = state.now().getTime();
  for (const push of state.openPushes) {
    if (push.completedAt !== undefined) {
      state.openPushes.delete(push);
      continue;
    }
    const endsAt = push.acceptedAt.getTime() + DARAJA_STK_PROMPT_TIMEOUT_MS;
    if (now < endsAt) continue;
    const expires = push.outcome.kind === 'never_complete' && push.outcome.expires === true;
    push.outcome = expires ? PROMPT_EXPIRED : PROMPT_UNANSWERED;
    push.completedAt = new Date(endsAt);
    state.openPushes.delete(push);
  }
}

/** The shortcode, timestamp and password both Express APIs carry: Daraja's refusal, or null when they hold. */
function stkCredentialsRefusal(state: DarajaState, body: Record<string, unknown>): ApiAnswer | null {
  const shortCode = String(body.BusinessShortCode ?? '');
  if (!SHORTCODE.test(shortCode)) return invalidField('BusinessShortCode');
  const timestamp = String(body.Timestamp ?? '');
  if (!STK_TIMESTAMP.test(timestamp)) return invalidField('Timestamp');
  if (!nonEmptyString(body.Password)) return invalidField('Password');
  if (shortCode !== state.config.stkShortCode) {
    return new ApiAnswer(500, errorBody('500.001.1001', 'Merchant does not exist'));
  }
  const expected = Buffer.from(`${shortCode}${state.config.passkey}${timestamp}`, 'utf8').toString('base64');
  if (body.Password !== expected) return new ApiAnswer(500, errorBody('500.001.1001', 'Wrong credentials'));
  return null;
}

/** Daraja's refusal of the first missing or malformed field, or the payer and amount of a valid push. */
function checkPush(
  state: DarajaState,
  body: Record<string, unknown>,
): ApiAnswer | { amount: number; phoneNumber: string } {
  const refusal = stkCredentialsRefusal(state, body);
  if (refusal) return refusal;
  if (!STK_TRANSACTION_TYPES.has(String(body.TransactionType))) return invalidField('TransactionType');
  const amount = wholeAmount(body.Amount);
  if (amount === null) return invalidField('Amount');
  const phoneNumber = String(body.PhoneNumber ?? '');
  if (!SAFARICOM_MSISDN.test(phoneNumber)) return invalidField('PhoneNumber');
  if (!SAFARICOM_MSISDN.test(String(body.PartyA ?? ''))) return invalidField('PartyA');
  if (!SHORTCODE.test(String(body.PartyB ?? ''))) return invalidField('PartyB');
  if (!absoluteUrl(body.CallBackURL)) return invalidField('CallBackURL');
  if (!boundedText(body.AccountReference, ACCOUNT_REFERENCE_MAX_CHARS))
    return invalidField('AccountReference');
  // Optional on the published page; when sent, held to its limit.
  if (
    body.TransactionDesc !== undefined &&
    !boundedText(body.TransactionDesc, TRANSACTION_DESC_MAX_CHARS, true)
  )
    return invalidField('TransactionDesc');
  return { amount, phoneNumber };
}

function stkCallbackBody(push: DarajaSimulatedPush): unknown {
  const ids = { MerchantRequestID: push.merchantRequestId, CheckoutRequestID: push.checkoutRequestId };
  if (push.outcome.kind === 'decline') {
    return {
      Body: {
        stkCallback: { ...ids, ResultCode: push.outcome.resultCode, ResultDesc: push.outcome.resultDesc },
      },
    };
  }
  return {
    Body: {
      stkCallback: {
        ...ids,
        ResultCode: 0,
        ResultDesc: SUCCESS_DESC,
        CallbackMetadata: {
          Item: [
            { Name: 'Amount', Value: push.amount },
            { Name: 'MpesaReceiptNumber', Value: push.receipt },
            { Name: 'Balance' },
            { Name: 'TransactionDate', Value: compactDateTime(push.completedAt ?? push.acceptedAt) },
            { Name: 'PhoneNumber', Value: Number(push.phoneNumber) },
          ],
        },
      },
    },
  };
}
