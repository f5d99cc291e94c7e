/**
 * Safaricom M-Pesa through Daraja: payouts by B2C, collections by M-Pesa Express (STK push), payout status
 * by the Transaction Status API. Daraja answers requests synchronously with an acceptance and reports the
 * outcome later by POSTing to the callback URLs each request names; this adapter builds those URLs under
 * the organization's callback base and reads what arrives there (parseCallback).
 *
 * Idempotency. B2C carries our idempotency reference as OriginatorConversationID. Daraja refuses a repeated
 * one (HTTP 500, `500.002.1001` "Duplicate OriginatorConversationID") without paying again and without
 * naming the first ConversationID, so the payout's reference is the OriginatorConversationID: the one id
 * every submit knows, that every result echoes and that the Transaction Status API accepts. A duplicate
 * refusal is read as "already accepted".
 *
 * M-Pesa Express has no idempotency key: each push is a new CheckoutRequestID and a new PIN prompt, and the
 * callback does not echo anything of ours. Without persisting anything this adapter can only (1) answer a
 * repeated collect on this instance with the first push's reference, and (2) take M-Pesa's refusal to
 * prompt a phone that already has a prompt open ("Unable to lock subscriber") as `payer_busy` rather than
 * retry into a second prompt. A collect repeated from another process after the first prompt has closed
 * sends a second prompt: the residual risk, documented in docs/rails/mpesa-daraja.md.
 *
 * Daraja does not sign callbacks. The guard is the unguessable token in the callback base URL (and, in
 * production, allow-listing Safaricom's callback IP addresses); parseCallback only reads the shape.
 */

import type { Currency } from '../../../domain/money.ts';
import type { Transfer } from '../../../domain/transferRecord.ts';
import { fitsRailAmountStep } from '../../../domain/transfers.ts';
import type { OutboundFetch, OutboundRequestInit } from '../../../outbound/guard.ts';
import {
  type ArrivedCallback,
  type CallbackReport,
  type CallbackTarget,
  type CollectionRequest,
  type CollectResult,
  MalformedCallbackError,
  type PartnerRail,
} from '../../../rails/partner.ts';
import type { RailOutcome, SubmitRequest, SubmitResult } from '../../../rails/rail.ts';

/** How long one HTTP request to Daraja may take before it is abandoned (and the call throws). */
export const DARAJA_REQUEST_TIMEOUT_MS = 30_000;
/** A cached token is replaced this long before Daraja says it expires, so none expires in flight. */
export const DARAJA_TOKEN_REFRESH_MARGIN_MS = 60_000;
/** When to look at an accepted payout if its result has not arrived (results usually take seconds). */
export const DARAJA_PAYOUT_FIRST_CHECK_AFTER_MS = 60_000;
/** How often a payout still processing is asked about again (each check is a Transaction Status query). */
export const DARAJA_STATUS_POLL_INTERVAL_MS = 60_000;
/** When to query an STK push whose callback has not arrived: after the payer's prompt has timed out. */
export const DARAJA_COLLECTION_FIRST_CHECK_AFTER_MS = 90_000;
/** How often an STK push still being processed is queried again. */
export const DARAJA_COLLECTION_POLL_INTERVAL_MS = 30_000;
/** How long this instance remembers an STK push by idempotency reference, to answer a repeated collect. */
export const DARAJA_STK_REPEAT_GUARD_MS = 10 * 60_000;
/** At most this many pushes are remembered; the oldest are forgotten first. */
export const DARAJA_STK_REPEAT_GUARD_MAX_ENTRIES = 10_000;

/** Daraja's free-text limits: B2C Remarks 100, STK AccountReference 12 and TransactionDesc 13 characters. */
const REMARKS_MAX_CHARS = 100;
const ACCOUNT_REFERENCE_MAX_CHARS = 12;
const TRANSACTION_DESC_MAX_CHARS = 13;
/** Kenya keeps East Africa Time all year (UTC+3); STK timestamps are Nairobi wall-clock time. */
const NAIROBI_OFFSET_MS = 3 * 60 * 60 * 1000;
/** Daraja writes amounts in Kenya shillings; our KES amounts are in cents. */
const KES_MINOR_PER_SHILLING = 100n;
/** Safaricom numbers in E.164: +2547XXXXXXXX and +2541XXXXXXXX. */
const SAFARICOM_E164 = /^\+254[17]\d{8}$/;

const PATHS = {
  oauth: '/oauth/v1/generate?grant_type=client_credentials',
  b2c: '/mpesa/b2c/v3/paymentrequest',
  transactionStatus: '/mpesa/transactionstatus/v1/query',
  stkPush: '/mpesa/stkpush/v1/processrequest',
  stkQuery: '/mpesa/stkpushquery/v1/query',
} as const;

/** Callback paths under the organization's callback base URL. */
export const DARAJA_CALLBACK_PATHS = {
  b2cResult: 'b2c/result',
  b2cQueueTimeout: 'b2c/timeout',
  statusResult: 'status/result',
  statusQueueTimeout: 'status/timeout',
  stk: 'stk',
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

/** B2C result codes that say nothing about the payout: the first request's own result decides. */
const PAYOUT_RESULT_CODES_TO_IGNORE: Record<string, string> = {
  '15': 'duplicate_originator_conversation_id',
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
const DUPLICATE_ORIGINATOR = { errorCode: '500.002.1001', message: /duplicate originatorconversationid/i };
/** `500.001.1001` is overloaded too: "Wrong credentials", "Merchant does not exist", these two. */
const SUBSCRIBER_LOCKED = { errorCode: '500.001.1001', message: /unable to lock subscriber/i };
const STILL_PROCESSING = { errorCode: '500.001.1001', message: /being processed/i };

export interface MpesaDarajaConfig {
  /**
   * How the adapter calls out: the outbound address guard's fetch (src/outbound/guard.ts), which checks the
   * URL and every address it connects to under the deployment's policy.
   */
  fetch: OutboundFetch;
  /** https://api.safaricom.co.ke in production, https://sandbox.safaricom.co.ke to test; no trailing slash. */
  baseUrl: string;
  consumerKey: string;
  consumerSecret: string;
  /** The B2C (bulk disbursement) shortcode: B2C PartyA and the Transaction Status PartyA. */
  shortCode: string;
  /** The API operator created on the M-Pesa organization portal. */
  initiatorName: string;
  /** The initiator's password encrypted with Safaricom's public certificate, base64. */
  securityCredential: string;
  /** The Lipa na M-Pesa Online passkey, for STK passwords. */
  passkey: string;
  /** The STK BusinessShortCode (paybill or store number); the B2C shortCode when they are one account. */
  stkShortCode?: string;
  /** CustomerPayBillOnline (default) or CustomerBuyGoodsOnline. */
  stkTransactionType?: 'CustomerPayBillOnline' | 'CustomerBuyGoodsOnline';
  /** STK PartyB: the till number for buy goods; the STK shortcode by default. */
  stkPartyB?: string;
  /** BusinessPayment (default, registered customers only), SalaryPayment or PromotionPayment. */
  b2cCommandId?: 'BusinessPayment' | 'SalaryPayment' | 'PromotionPayment';
  requestTimeoutMs?: number;
}

/** Daraja could not be reached or did not answer usefully; the call may be retried. */
export class DarajaError extends Error {
  override name = 'DarajaError';
}
/** Daraja did not answer within the request time-out. */
export class DarajaTimeoutError extends DarajaError {
  override name = 'DarajaTimeoutError';
}
/** Daraja answered 5xx (other than the duplicate refusal), or the connection failed. */
export class DarajaUnavailableError extends DarajaError {
  override name = 'DarajaUnavailableError';
  constructor(
    message: string,
    readonly status?: number,
    readonly errorCode?: string,
  ) {
    super(message);
  }
}
/** Daraja refused our consumer key and secret, or a fresh token. Retrying will not help until fixed. */
export class DarajaAuthError extends DarajaError {
  override name = 'DarajaAuthError';
}
/** An answer this adapter does not understand (a 4xx it cannot map, a body not in Daraja's shape). */
export class DarajaProtocolError extends DarajaError {
  override name = 'DarajaProtocolError';
}

interface DarajaAnswer {
  status: number;
  body: Record<string, unknown> | null;
}

interface RememberedPush {
  result: Promise<CollectResult>;
  at: number;
}

export function mpesaDarajaRail(config: MpesaDarajaConfig, callbacks: CallbackTarget): PartnerRail {
  const baseUrl = config.baseUrl.replace(/\/+$/, '');
  const callbackBase = callbacks.baseUrl.replace(/\/+$/, '');
  const timeoutMs = config.requestTimeoutMs ?? DARAJA_REQUEST_TIMEOUT_MS;
  const stkShortCode = config.stkShortCode ?? config.shortCode;
  let token: { value: string; refreshAt: number } | undefined;
  let tokenRequest: Promise<string> | undefined;
  const pushes = new Map<string, RememberedPush>();

  async function send(path: string, init: OutboundRequestInit): Promise<DarajaAnswer> {
    let response: Response;
    let text: string;
    try {
      response = await config.fetch(`${baseUrl}${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
      text = await response.text();
    } catch (error) {
      if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
        throw new DarajaTimeoutError(`Daraja did not answer ${path} within ${timeoutMs} ms`);
      }
      throw new DarajaUnavailableError(`Daraja could not be reached for ${path}: ${String(error)}`);
    }
    return { status: response.status, body: parseObject(text) };
  }

  async function fetchToken(): Promise<string> {
    const basic = Buffer.from(`${config.consumerKey}:${config.consumerSecret}`, 'utf8').toString('base64');
    const answer = await send(PATHS.oauth, { method: 'GET', headers: { authorization: `Basic ${basic}` } });
    const accessToken = answer.body?.access_token;
    const expiresInSeconds = Number(answer.body?.expires_in);
    if (answer.status === 200 && typeof accessToken === 'string' && Number.isFinite(expiresInSeconds)) {
      token = {
        value: accessToken,
        refreshAt: Date.now() + expiresInSeconds * 1000 - DARAJA_TOKEN_REFRESH_MARGIN_MS,
      };
      return accessToken;
    }
    if (answer.status >= 500) {
      throw new DarajaUnavailableError(`Daraja's OAuth answered HTTP ${answer.status}`, answer.status);
    }
    throw new DarajaAuthError(
      `Daraja refused the consumer key and secret (HTTP ${answer.status}${describeError(answer)})`,
    );
  }

  /** A cached token until shortly before it expires; one request for it at a time. */
  async function accessToken(): Promise<string> {
    if (token && Date.now() < token.refreshAt) return token.value;
    tokenRequest ??= fetchToken().finally(() => {
      tokenRequest = undefined;
    });
    return tokenRequest;
  }

  /** POSTs with a bearer token; a refused token is replaced and the request sent once more. */
  async function post(path: string, payload: Record<string, unknown>): Promise<DarajaAnswer> {
    for (let attempt = 1; ; attempt++) {
      const bearer = await accessToken();
      const answer = await send(path, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify(payload),
      });
      if (!isTokenRefusal(answer)) return answer;
      if (token?.value === bearer) token = undefined;
      if (attempt === 2)
        throw new DarajaAuthError(`Daraja refused a fresh access token${describeError(answer)}`);
    }
  }

  /** Throws for what a retry may fix (5xx) and for what this adapter cannot read. */
  function unexpected(path: string, answer: DarajaAnswer): never {
    const errorCode = stringField(answer.body, 'errorCode');
    if (answer.status >= 500) {
      throw new DarajaUnavailableError(
        `Daraja answered HTTP ${answer.status} to ${path}${describeError(answer)}`,
        answer.status,
        errorCode,
      );
    }
    throw new DarajaProtocolError(`Daraja answered HTTP ${answer.status} to ${path}${describeError(answer)}`);
  }

  function stkPassword(at: Date): { Password: string; Timestamp: string } {
    const timestamp = nairobiTimestamp(at);
    const password = Buffer.from(`${stkShortCode}${config.passkey}${timestamp}`, 'utf8').toString('base64');
    return { Password: password, Timestamp: timestamp };
  }

  async function pushOnce(request: CollectionRequest, now: Date): Promise<CollectResult> {
    const shillings = wholeShillings(request.amountMinor, request.currency);
    if (shillings === null) return { accepted: false, failureCode: 'amount_not_supported' };
    if (!SAFARICOM_E164.test(request.payerPhone)) return { accepted: false, failureCode: 'invalid_phone' };
    const msisdn = request.payerPhone.slice(1);
    const answer = await post(PATHS.stkPush, {
      BusinessShortCode: stkShortCode,
      ...stkPassword(now),
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

  function rememberPush(idempotencyReference: string, result: Promise<CollectResult>, at: number): void {
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

  return {
    partner: 'mpesa_daraja',

    async submit({ idempotencyReference, transfer }: SubmitRequest, now: Date): Promise<SubmitResult> {
      const shillings = wholeShillings(transfer.amountMinor, transfer.currency);
      if (shillings === null) return { accepted: false, failureCode: 'amount_not_supported' };
      const recipient = payoutRecipient(transfer);
      if ('failureCode' in recipient) return { accepted: false, failureCode: recipient.failureCode };
      const answer = await post(PATHS.b2c, {
        OriginatorConversationID: idempotencyReference,
        InitiatorName: config.initiatorName,
        SecurityCredential: config.securityCredential,
        CommandID: config.b2cCommandId ?? 'BusinessPayment',
        Amount: shillings,
        PartyA: config.shortCode,
        PartyB: recipient.msisdn,
        Remarks: printable(`Payout ${transfer.id}`, REMARKS_MAX_CHARS),
        QueueTimeOutURL: `${callbackBase}/${DARAJA_CALLBACK_PATHS.b2cQueueTimeout}`,
        ResultURL: `${callbackBase}/${DARAJA_CALLBACK_PATHS.b2cResult}`,
        // Daraja's published sample spells the field this way.
        Occassion: printable(idempotencyReference, REMARKS_MAX_CHARS),
      });
      const accepted: SubmitResult = {
        accepted: true,
        reference: idempotencyReference,
        checkAt: new Date(now.getTime() + DARAJA_PAYOUT_FIRST_CHECK_AFTER_MS),
      };
      if (answer.status === 200 && String(answer.body?.ResponseCode) === '0') {
        const echoed = stringField(answer.body, 'OriginatorConversationID');
        if (echoed !== undefined && echoed !== idempotencyReference) {
          throw new DarajaProtocolError(
            `Daraja accepted payout ${idempotencyReference} under another OriginatorConversationID, ${echoed}`,
          );
        }
        return accepted;
      }
      // The first submit with this reference reached Daraja; its result (or a status query) decides.
      if (matches(answer, DUPLICATE_ORIGINATOR)) return accepted;
      if (answer.status === 400) return { accepted: false, failureCode: refusedFailureCode(answer) };
      if (answer.status === 200) return { accepted: false, failureCode: DARAJA_UNKNOWN_RESULT_FAILURE_CODE };
      return unexpected(PATHS.b2c, answer);
    },

    /** Asks for a Transaction Status result (it arrives at `status/result`) and looks again later. */
    async check(transfer: Transfer, now: Date): Promise<RailOutcome> {
      const reference = transfer.railReference;
      if (!reference)
        throw new DarajaProtocolError(`Transfer ${transfer.id} has no Daraja reference to check`);
      const answer = await post(PATHS.transactionStatus, {
        Initiator: config.initiatorName,
        SecurityCredential: config.securityCredential,
        CommandID: 'TransactionStatusQuery',
        OriginatorConversationID: reference,
        PartyA: config.shortCode,
        IdentifierType: '4', // PartyA is an organization shortcode
        ResultURL: `${callbackBase}/${DARAJA_CALLBACK_PATHS.statusResult}`,
        QueueTimeOutURL: `${callbackBase}/${DARAJA_CALLBACK_PATHS.statusQueueTimeout}`,
        Remarks: 'Payout status',
        // Echoed in the result's ReferenceData: names the payout even when M-Pesa cannot find it.
        Occasion: printable(reference, REMARKS_MAX_CHARS),
      });
      if (answer.status !== 200 || String(answer.body?.ResponseCode) !== '0') {
        return unexpected(PATHS.transactionStatus, answer);
      }
      return {
        kind: 'processing',
        checkAt: new Date(now.getTime() + DARAJA_STATUS_POLL_INTERVAL_MS),
        reference,
      };
    },

    async collect(request: CollectionRequest, now: Date): Promise<CollectResult> {
      const at = Date.now();
      const remembered = pushes.get(request.idempotencyReference);
      if (remembered && at - remembered.at < DARAJA_STK_REPEAT_GUARD_MS) return remembered.result;
      const result = pushOnce(request, now);
      rememberPush(request.idempotencyReference, result, at);
      return result;
    },

    async checkCollection(reference: string, _idempotencyReference: string, now: Date): Promise<RailOutcome> {
      const answer = await post(PATHS.stkQuery, {
        BusinessShortCode: stkShortCode,
        ...stkPassword(now),
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
    },

    parseCallback(callback: ArrivedCallback): CallbackReport {
      const body = parseObject(callback.rawBody);
      if (!body) throw new MalformedCallbackError(`Daraja callback at ${callback.path} is not a JSON object`);
      switch (callback.path) {
        case DARAJA_CALLBACK_PATHS.b2cResult:
          return parseB2cResult(body);
        case DARAJA_CALLBACK_PATHS.b2cQueueTimeout:
        case DARAJA_CALLBACK_PATHS.statusQueueTimeout:
          return parseQueueTimeout(body, callback.path);
        case DARAJA_CALLBACK_PATHS.statusResult:
          return parseStatusResult(body);
        case DARAJA_CALLBACK_PATHS.stk:
          return parseStkCallback(body);
        default:
          throw new MalformedCallbackError(`No Daraja callback is expected at ${callback.path}`);
      }
    },
  };
}

// --- Callbacks (pure) -----------------------------------------------------------------------------------

function parseB2cResult(body: Record<string, unknown>): CallbackReport {
  const result = objectField(body, 'Result', 'B2C result');
  const reference = requiredString(result, 'OriginatorConversationID', 'B2C result');
  const code = resultCodeOf(result, 'B2C result');
  const ignored = PAYOUT_RESULT_CODES_TO_IGNORE[code];
  if (ignored) return { kind: 'ignored', reason: ignored };
  const base = { kind: 'payout' as const, reference, idempotencyReference: reference };
  if (code !== '0') {
    return { ...base, outcome: { kind: 'failed', failureCode: payoutFailureCode(code), reference } };
  }
  const parameters = keyValues(result.ResultParameters, 'ResultParameter', 'Key', 'B2C result');
  const receipt = parameters.get('TransactionReceipt') ?? result.TransactionID;
  if (typeof receipt !== 'string' || receipt === '') {
    throw new MalformedCallbackError('B2C result reports success without a TransactionReceipt');
  }
  return {
    ...base,
    outcome: { kind: 'settled', reference },
    partnerTransactionId: receipt,
    amountMinor: amountMinorOf(parameters.get('TransactionAmount'), 'B2C result TransactionAmount'),
  };
}

/** Daraja's queue time-out notice: the request waited too long in Daraja's queue. It decides nothing. */
function parseQueueTimeout(body: Record<string, unknown>, path: string): CallbackReport {
  const result = objectField(body, 'Result', 'queue time-out notice');
  requiredString(result, 'OriginatorConversationID', 'queue time-out notice');
  return {
    kind: 'ignored',
    reason: path === DARAJA_CALLBACK_PATHS.b2cQueueTimeout ? 'b2c_queue_timeout' : 'status_queue_timeout',
  };
}

/** Failed TransactionStatus values (Daraja publishes only "Completed"; the others are read defensively). */
const FAILED_TRANSACTION_STATUSES = new Set(['failed', 'declined', 'cancelled', 'canceled', 'expired']);

/**
 * A Transaction Status result. Its top-level ids are the query's own; the payout is named by the
 * OriginatorConversationID among the ResultParameters, or, when M-Pesa found nothing, by the Occasion we
 * sent (echoed in ReferenceData). Anything short of a final status changes nothing: the next check asks again.
 */
function parseStatusResult(body: Record<string, unknown>): CallbackReport {
  const result = objectField(body, 'Result', 'status result');
  const code = resultCodeOf(result, 'status result');
  const parameters =
    result.ResultParameters === undefined
      ? new Map<string, unknown>()
      : keyValues(result.ResultParameters, 'ResultParameter', 'Key', 'status result');
  const referenceItem = (
    result.ReferenceData as { ReferenceItem?: { Key?: unknown; Value?: unknown } } | undefined
  )?.ReferenceItem;
  const occasion = referenceItem?.Key === 'Occasion' ? referenceItem.Value : undefined;
  const named = parameters.get('OriginatorConversationID') ?? occasion;
  if (code !== '0') return { kind: 'ignored', reason: `status_query_result_${code}` };
  if (typeof named !== 'string' || named === '') {
    throw new MalformedCallbackError('Status result names no OriginatorConversationID');
  }
  const status = parameters.get('TransactionStatus');
  if (typeof status !== 'string') throw new MalformedCallbackError('Status result has no TransactionStatus');
  const base = { kind: 'payout' as const, reference: named, idempotencyReference: named };
  if (status.toLowerCase() === 'completed') {
    const receipt = parameters.get('ReceiptNo');
    if (typeof receipt !== 'string' || receipt === '') {
      throw new MalformedCallbackError('Status result reports a completed payout without a ReceiptNo');
    }
    return {
      ...base,
      outcome: { kind: 'settled', reference: named },
      partnerTransactionId: receipt,
      amountMinor: amountMinorOf(parameters.get('Amount'), 'status result Amount'),
    };
  }
  if (FAILED_TRANSACTION_STATUSES.has(status.toLowerCase())) {
    // The status result carries no failure code; the B2C result (when it arrives) is the precise one.
    return {
      ...base,
      outcome: { kind: 'failed', failureCode: DARAJA_UNKNOWN_RESULT_FAILURE_CODE, reference: named },
    };
  }
  return { kind: 'ignored', reason: `transaction_status_${status.toLowerCase()}` };
}

function parseStkCallback(body: Record<string, unknown>): CallbackReport {
  const stk = objectField(objectField(body, 'Body', 'STK callback'), 'stkCallback', 'STK callback');
  const reference = requiredString(stk, 'CheckoutRequestID', 'STK callback');
  requiredString(stk, 'MerchantRequestID', 'STK callback');
  const code = resultCodeOf(stk, 'STK callback');
  if (code !== '0') {
    return {
      kind: 'collection',
      reference,
      outcome: { kind: 'failed', failureCode: collectionFailureCode(code), reference },
    };
  }
  const items = keyValues(stk.CallbackMetadata, 'Item', 'Name', 'STK callback');
  const receipt = items.get('MpesaReceiptNumber');
  if (typeof receipt !== 'string' || receipt === '') {
    throw new MalformedCallbackError('STK callback reports success without an MpesaReceiptNumber');
  }
  return {
    kind: 'collection',
    reference,
    outcome: { kind: 'settled', reference },
    partnerTransactionId: receipt,
    amountMinor: amountMinorOf(items.get('Amount'), 'STK callback Amount'),
  };
}

function payoutFailureCode(code: string): string {
  return DARAJA_PAYOUT_FAILURE_CODES[code] ?? DARAJA_UNKNOWN_RESULT_FAILURE_CODE;
}

function collectionFailureCode(code: string): string {
  return DARAJA_COLLECTION_FAILURE_CODES[code] ?? DARAJA_UNKNOWN_RESULT_FAILURE_CODE;
}

function objectField(parent: Record<string, unknown>, key: string, what: string): Record<string, unknown> {
  const value = parent[key];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new MalformedCallbackError(`${what} has no ${key} object`);
  }
  return value as Record<string, unknown>;
}

function requiredString(parent: Record<string, unknown>, key: string, what: string): string {
  const value = parent[key];
  if (typeof value !== 'string' || value === '') throw new MalformedCallbackError(`${what} has no ${key}`);
  return value;
}

/** ResultCode is a number in results (0, 2040) but may be a string ("0", "SFC_IC0003"). */
function resultCodeOf(parent: Record<string, unknown>, what: string): string {
  const value = parent.ResultCode;
  if (typeof value === 'number' && Number.isInteger(value)) return String(value);
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  throw new MalformedCallbackError(`${what} has no ResultCode`);
}

/** Daraja's lists of {Key|Name, Value} (a lone item may come as an object): a map of the values. */
function keyValues(
  container: unknown,
  listKey: string,
  nameKey: 'Key' | 'Name',
  what: string,
): Map<string, unknown> {
  const list = (container as Record<string, unknown> | undefined)?.[listKey];
  const items = Array.isArray(list) ? list : typeof list === 'object' && list !== null ? [list] : undefined;
  if (!items) throw new MalformedCallbackError(`${what} has no ${listKey} list`);
  const values = new Map<string, unknown>();
  for (const item of items) {
    const name = (item as Record<string, unknown> | null)?.[nameKey];
    if (typeof name !== 'string')
      throw new MalformedCallbackError(`${what} has a ${listKey} without a ${nameKey}`);
    values.set(name, (item as Record<string, unknown>).Value);
  }
  return values;
}

/** Daraja amounts are shillings (10, 10.00, "10.00"); in minor units, exactly, or malformed. */
function amountMinorOf(value: unknown, what: string): bigint {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!match?.[1]) throw new MalformedCallbackError(`${what} is not an amount`);
  return BigInt(match[1]) * KES_MINOR_PER_SHILLING + BigInt((match[2] ?? '').padEnd(2, '0'));
}

// --- Requests -------------------------------------------------------------------------------------------

/** Whole shillings in KES (the step src/domain/transfers.ts declares for M-Pesa), or null: Daraja moves nothing else. */
function wholeShillings(amountMinor: bigint, currency: Currency): number | null {
  if (
    currency !== 'KES' ||
    amountMinor <= 0n ||
    !fitsRailAmountStep('mobile_money', 'mpesa', currency, amountMinor)
  )
    return null;
  const shillings = amountMinor / KES_MINOR_PER_SHILLING;
  return shillings <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(shillings) : null;
}

function payoutRecipient(transfer: Transfer): { msisdn: string } | { failureCode: string } {
  const destination = transfer.destination;
  if (destination.type !== 'mobile_money') return { failureCode: 'invalid_phone' };
  if (destination.network !== 'mpesa') return { failureCode: 'network_not_supported' };
  if (!SAFARICOM_E164.test(destination.phone)) return { failureCode: 'invalid_phone' };
  return { msisdn: destination.phone.slice(1) };
}

function refusedFailureCode(answer: DarajaAnswer): string {
  const message = stringField(answer.body, 'errorMessage') ?? '';
  const field = /Invalid\s+(\w+)/i.exec(message)?.[1];
  return (
    (field !== undefined ? REFUSED_FIELD_FAILURE_CODES[field] : undefined) ??
    DARAJA_UNKNOWN_RESULT_FAILURE_CODE
  );
}

function isTokenRefusal(answer: DarajaAnswer): boolean {
  const errorCode = stringField(answer.body, 'errorCode');
  return answer.status === 401 || (errorCode !== undefined && TOKEN_ERROR_CODES.has(errorCode));
}

function matches(answer: DarajaAnswer, error: { errorCode: string; message: RegExp }): boolean {
  return (
    stringField(answer.body, 'errorCode') === error.errorCode &&
    error.message.test(stringField(answer.body, 'errorMessage') ?? '')
  );
}

function describeError(answer: DarajaAnswer): string {
  const errorCode = stringField(answer.body, 'errorCode');
  const errorMessage = stringField(answer.body, 'errorMessage');
  return errorCode || errorMessage ? `: ${errorCode ?? ''} ${errorMessage ?? ''}`.trimEnd() : '';
}

function stringField(body: Record<string, unknown> | null, key: string): string | undefined {
  const value = body?.[key];
  return typeof value === 'string' ? value : undefined;
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** Free text Daraja will take: printable ASCII, trimmed to its limit. */
function printable(text: string, maxChars: number): string {
  return text
    .replace(/[^\x20-\x7e]/g, '')
    .trim()
    .slice(0, maxChars);
}

/** YYYYMMDDHHmmss in Nairobi time, as STK passwords and timestamps expect. */
function nairobiTimestamp(at: Date): string {
  return new Date(at.getTime() + NAIROBI_OFFSET_MS).toISOString().replace(/\D/g, '').slice(0, 14);
}
