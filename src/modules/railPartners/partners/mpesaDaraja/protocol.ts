/**
 * Daraja's API as the M-Pesa adapter speaks it (rail.ts): its paths and callback paths, what its result and
 * error codes mean to us, its free-text limits, and the pure helpers that write requests' fields and read
 * answers' bodies.
 */

import { jsonObjectOf } from '../../../../domain/json.ts';
import type { Currency } from '../../../../domain/money.ts';
import { fitsRailAmountStep } from '../../../../domain/transfers.ts';

/** Daraja's free-text limits: B2C Remarks 100, STK AccountReference 12 and TransactionDesc 13 characters. */
export const REMARKS_MAX_CHARS = 100;
export const ACCOUNT_REFERENCE_MAX_CHARS = 12;
export const TRANSACTION_DESC_MAX_CHARS = 13;
/** Kenya keeps East Africa Time all year (UTC+3); STK timestamps are Nairobi wall-clock time. */
const NAIROBI_OFFSET_MS = 3 * 60 * 60 * 1000;
/** Daraja writes amounts in Kenya shillings; our KES amounts are in cents. */
export const KES_MINOR_PER_SHILLING = 100n;
/** Safaricom numbers in E.164: +2547XXXXXXXX and +2541XXXXXXXX. */
export const SAFARICOM_E164 = /^\+254[17]\d{8}$/;

export const PATHS = {
  oauth: '/oauth/v1/generate?grant_type=client_credentials',
  b2c: '/mpesa/b2c/v3/paymentrequest',
  transactionStatus: '/mpesa/transactionstatus/v1/query',
  stkPush: '/mpesa/stkpush/v1/processrequest',
  stkQuery: '/mpesa/stkpushquery/v1/query',
  accountBalance: '/mpesa/accountbalance/v1/query',
  c2bRegisterUrl: '/mpesa/c2b/v2/registerurl',
} as const;

/** Callback paths under the organization's callback base URL. */
export const DARAJA_CALLBACK_PATHS = {
  b2cResult: 'b2c/result',
  b2cQueueTimeout: 'b2c/timeout',
  statusResult: 'status/result',
  statusQueueTimeout: 'status/timeout',
  stk: 'stk',
  balanceResult: 'balance/result',
  balanceQueueTimeout: 'balance/timeout',
  c2bValidation: 'c2b/validation',
  c2bConfirmation: 'c2b/confirmation',
} as const;

/** The failure code for a ResultCode neither table names; the raw callback (stored first) keeps Daraja's code. */
export const DARAJA_UNKNOWN_RESULT_FAILURE_CODE = 'partner_rejected';

/** B2C ResultCode → our failure code. Codes about our own set-up fail the payout as a configuration error. */
export const DARAJA_PAYOUT_FAILURE_CODES: Record<string, string> = {
  '1': 'insufficient_funds', // our B2C utility account cannot cover it
  '2': 'limit_exceeded', // below the minimum transaction amount
  '3': 'limit_exceeded', // above the maximum transaction amount
  '4': 'limit_exceeded', // would exceed the daily transfer limit
  '8': 'limit_exceeded', // would exceed the recipient's maximum balance
  '2040': 'recipient_not_registered', // not an M-Pesa customer (BusinessPayment pays registered ones only)
  SFC_IC0003: 'recipient_not_registered', // "The operator does not exist."
  '11': 'partner_configuration_error', // our shortcode's account is in an invalid state
  '21': 'partner_configuration_error', // the initiator may not initiate this request
  '2001': 'partner_configuration_error', // initiator name or security credential wrong
  '2006': 'partner_configuration_error', // our account's status does not allow it
  '2028': 'partner_configuration_error', // our shortcode lacks the B2C product
  '8006': 'partner_configuration_error', // the security credential is locked
};

/** STK ResultCode (callback and query) → our failure code. */
export const DARAJA_COLLECTION_FAILURE_CODES: Record<string, string> = {
  '1': 'insufficient_funds',
  '2': 'limit_exceeded',
  '3': 'limit_exceeded',
  '4': 'limit_exceeded',
  '8': 'limit_exceeded',
  '1001': 'payer_busy', // another M-Pesa session is open on the phone
  '1019': 'collection_expired',
  '1031': 'payer_cancelled',
  '1032': 'payer_cancelled',
  '1037': 'payer_unreachable',
  '2001': 'payer_authentication_failed', // wrong PIN
};

/** A refused request's field (from "Bad Request - Invalid <Field>") → our failure code. */
const REFUSED_FIELD_FAILURE_CODES: Record<string, string> = {
  PartyB: 'invalid_phone',
  PhoneNumber: 'invalid_phone',
  Amount: 'amount_not_supported',
};

/** Token errors: B2C and Transaction Status answer 401.002.01, M-Pesa Express 404.001.03, some 400.003.01. */
const TOKEN_ERROR_CODES = new Set(['401.002.01', '404.001.03', '400.003.01']);
/** `500.002.1001` is also "System internal error.", so the message decides. */
export const DUPLICATE_ORIGINATOR = {
  errorCode: '500.002.1001',
  message: /duplicate originatorconversationid/i,
};
/** `500.001.1001` is overloaded too: "Wrong credentials", "Merchant does not exist", these two. */
export const SUBSCRIBER_LOCKED = { errorCode: '500.001.1001', message: /unable to lock subscriber/i };
export const STILL_PROCESSING = { errorCode: '500.001.1001', message: /being processed/i };

/** An answer from Daraja: its HTTP status, and its body when that is a JSON object. */
export interface DarajaAnswer {
  status: number;
  body: Record<string, unknown> | null;
}

export function payoutFailureCode(code: string): string {
  return DARAJA_PAYOUT_FAILURE_CODES[code] ?? DARAJA_UNKNOWN_RESULT_FAILURE_CODE;
}

export function collectionFailureCode(code: string): string {
  return DARAJA_COLLECTION_FAILURE_CODES[code] ?? DARAJA_UNKNOWN_RESULT_FAILURE_CODE;
}

/** Whole shillings in KES (the step src/domain/transfers.ts declares for M-Pesa), or null: Daraja moves nothing else. */
export function wholeShillings(amountMinor: bigint, currency: Currency): number | null {
  if (
    currency !== 'KES' ||
    amountMinor <= 0n ||
    !fitsRailAmountStep('mobile_money', 'mpesa', currency, amountMinor)
  )
    return null;
  const shillings = amountMinor / KES_MINOR_PER_SHILLING;
  return shillings <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(shillings) : null;
}

export function refusedFailureCode(answer: DarajaAnswer): string {
  const message = stringField(answer.body, 'errorMessage') ?? '';
  const field = /Invalid\s+(\w+)/i.exec(message)?.[1];
  return (
    (field !== undefined ? REFUSED_FIELD_FAILURE_CODES[field] : undefined) ??
    DARAJA_UNKNOWN_RESULT_FAILURE_CODE
  );
}

export function isTokenRefusal(answer: DarajaAnswer): boolean {
  const errorCode = stringField(answer.body, 'errorCode');
  return answer.status === 401 || (errorCode !== undefined && TOKEN_ERROR_CODES.has(errorCode));
}

export function matches(answer: DarajaAnswer, error: { errorCode: string; message: RegExp }): boolean {
  return (
    stringField(answer.body, 'errorCode') === error.errorCode &&
    error.message.test(stringField(answer.body, 'errorMessage') ?? '')
  );
}

export function describeError(answer: DarajaAnswer): string {
  const errorCode = stringField(answer.body, 'errorCode');
  const errorMessage = stringField(answer.body, 'errorMessage');
  return errorCode || errorMessage ? `: ${errorCode ?? ''} ${errorMessage ?? ''}`.trimEnd() : '';
}

export function stringField(body: Record<string, unknown> | null, key: string): string | undefined {
  const value = body?.[key];
  return typeof value === 'string' ? value : undefined;
}

/** A body that is a JSON object, or null (Daraja's answers and callbacks are read as objects or not at all). */
export function parseObject(text: string): Record<string, unknown> | null {
  return jsonObjectOf(text) ?? null;
}

/** Free text Daraja will take: printable ASCII, trimmed to its limit. */
export function printable(text: string, maxChars: number): string {
  return text
    .replace(/[^\x20-\x7e]/g, '')
    .trim()
    .slice(0, maxChars);
}

/** YYYYMMDDHHmmss in Nairobi time, as STK passwords and timestamps expect. */
export function nairobiTimestamp(at: Date): string {
  return new Date(at.getTime() + NAIROBI_OFFSET_MS).toISOString().replace(/\D/g, '').slice(0, 14);
}
