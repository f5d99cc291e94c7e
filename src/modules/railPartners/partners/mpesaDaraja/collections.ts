/**
 * M-Pesa collections through Daraja (rail.ts): M-Pesa Express (STK push) prompts, the repeat guard that
 * answers a repeated collect on this instance with the first push, and the STK query for a push's result.
 */

import type { CollectionRequest, CollectResult } from '../../../../rails/partner.ts';
import type { RailOutcome } from '../../../../rails/rail.ts';
import { type DarajaConnection, post, unexpected } from './connection.ts';
import {
  ACCOUNT_REFERENCE_MAX_CHARS,
  collectionFailureCode,
  DARAJA_CALLBACK_PATHS,
  DARAJA_UNKNOWN_RESULT_FAILURE_CODE,
  matches,
  nairobiTimestamp,
  PATHS,
  printable,
  refusedFailureCode,
  SAFARICOM_E164,
  STILL_PROCESSING,
  SUBSCRIBER_LOCKED,
  stringField,
  TRANSACTION_DESC_MAX_CHARS,
  wholeShillings,
} from './protocol.ts';

/** When to query an STK push whose callback has not arrived: after the payer's prompt has timed out. */
export const DARAJA_COLLECTION_FIRST_CHECK_AFTER_MS = 90_000;
/** How often an STK push still being processed is queried again. */
export const DARAJA_COLLECTION_POLL_INTERVAL_MS = 30_000;
/** How long this instance remembers an STK push by idempotency reference, to answer a repeated collect. */
export const DARAJA_STK_REPEAT_GUARD_MS = 10 * 60_000;
/** At most this many pushes are remembered; the oldest are forgotten first. */
export const DARAJA_STK_REPEAT_GUARD_MAX_ENTRIES = 10_000;

/** A push this instance made, by idempotency reference: its result, and when it was made (epoch ms). */
interface RememberedPush {
  result: Promise<CollectResult>;
  at: number;
}

/** The pushes one adapter instance remembers, by idempotency reference. */
export type RememberedPushes = Map<string, RememberedPush>;

function stkPassword(connection: DarajaConnection, at: Date): { Password: string; Timestamp: string } {
  const timestamp = nairobiTimestamp(at);
  const password = Buffer.from(
    `${connection.stkShortCode}${connection.config.passkey}${timestamp}`,
    'utf8',
  ).toString('base64');
  return { Password: password, Timestamp: timestamp };
}

/** One STK push: refused here when M-Pesa could not carry it, else sent and its answer read. */
async function pushOnce(
  connection: DarajaConnection,
  request: CollectionRequest,
  now: Date,
): Promise<CollectResult> {
  const { config, callbackBase, stkShortCode } = connection;
  const shillings = wholeShillings(request.amountMinor, request.currency);
  if (shillings === null) return { accepted: false, failureCode: 'amount_not_supported' };
  if (!SAFARICOM_E164.test(request.payerPhone)) return { accepted: false, failureCode: 'invalid_phone' };
  const msisdn = request.payerPhone.slice(1);
  const answer = await post(connection, PATHS.stkPush, {
    BusinessShortCode: stkShortCode,
    ...stkPassword(connection, now),
    TransactionType: config.stkTransactionType ?? 'CustomerPayBillOnline',
    Amount: shillings,
    PartyA: msisdn,
    PartyB: config.stkPartyB ?? stkShortCode,
    PhoneNumber: msisdn,
    CallBackURL: `${callbackBase}/${DARAJA_CALLBACK_PATHS.stk}`,
    AccountReference: printable(request.reference, ACCOUNT_REFERENCE_MAX_CHARS) || 'Payment',
    TransactionDesc: printable(request.description, TRANSACTION_DESC_MAX_CHARS) || 'Payment',
  });
  const checkoutRequestId = stringField(answer.body, 'CheckoutRequestID');
  if (answer.status === 200 && String(answer.body?.ResponseCode) === '0' && checkoutRequestId) {
    return {
      accepted: true,
      reference: checkoutRequestId,
      checkAt: new Date(now.getTime() + DARAJA_COLLECTION_FIRST_CHECK_AFTER_MS),
    };
  }
  // A prompt is already open on the phone (quite possibly ours, from an attempt whose answer was lost):
  // refusing is safer than retrying into a second prompt the payer might also approve.
  if (matches(answer, SUBSCRIBER_LOCKED)) return { accepted: false, failureCode: 'payer_busy' };
  if (answer.status === 400) return { accepted: false, failureCode: refusedFailureCode(answer) };
  if (answer.status === 200) return { accepted: false, failureCode: DARAJA_UNKNOWN_RESULT_FAILURE_CODE };
  return unexpected(PATHS.stkPush, answer);
}

/** Remembers a push, first forgetting the oldest while they are past the guard's time or it is full. */
function rememberPush(
  pushes: RememberedPushes,
  idempotencyReference: string,
  result: Promise<CollectResult>,
  at: number,
): void {
  for (const [key, entry] of pushes) {
    if (pushes.size < DARAJA_STK_REPEAT_GUARD_MAX_ENTRIES && at - entry.at < DARAJA_STK_REPEAT_GUARD_MS)
      break;
    pushes.delete(key);
  }
  pushes.set(idempotencyReference, { result, at });
  // Only an accepted push is worth remembering: after a refusal or an error nothing reached the phone
  // that a repeat could duplicate (an error that hid an accepted push is the documented residual risk).
  result.then(
    (outcome) => {
      if (!outcome.accepted) pushes.delete(idempotencyReference);
    },
    () => pushes.delete(idempotencyReference),
  );
}

/** An STK push, or the first push's result when this instance made one for the same idempotency reference. */
export async function collect(
  connection: DarajaConnection,
  pushes: RememberedPushes,
  request: CollectionRequest,
  now: Date,
): Promise<CollectResult> {
  const at = Date.now();
  const remembered = pushes.get(request.idempotencyReference);
  if (remembered && at - remembered.at < DARAJA_STK_REPEAT_GUARD_MS) return remembered.result;
  const result = pushOnce(connection, request, now);
  rememberPush(pushes, request.idempotencyReference, result, at);
  return result;
}

/** Asks the STK query what became of a push. */
export async function checkCollection(
  connection: DarajaConnection,
  reference: string,
  now: Date,
): Promise<RailOutcome> {
  const answer = await post(connection, PATHS.stkQuery, {
    BusinessShortCode: connection.stkShortCode,
    ...stkPassword(connection, now),
    CheckoutRequestID: reference,
  });
  if (matches(answer, STILL_PROCESSING)) {
    return {
      kind: 'processing',
      checkAt: new Date(now.getTime() + DARAJA_COLLECTION_POLL_INTERVAL_MS),
      reference,
    };
  }
  const resultCode = answer.body?.ResultCode;
  if (answer.status !== 200 || (typeof resultCode !== 'string' && typeof resultCode !== 'number')) {
    return unexpected(PATHS.stkQuery, answer);
  }
  const code = String(resultCode);
  if (code === '0') return { kind: 'settled', reference };
  return { kind: 'failed', failureCode: collectionFailureCode(code), reference };
}
