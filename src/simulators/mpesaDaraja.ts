/**
 * A Safaricom Daraja (M-Pesa) partner simulator: a real HTTP server that speaks the OAuth, B2C, M-Pesa
 * Express (STK push and its query) and Transaction Status APIs with Daraja's field names, result codes and
 * error bodies, and POSTs the asynchronous results to the callback URLs a request names.
 *
 * Outcomes are chosen by the payee's (B2C PartyB) or payer's (STK PhoneNumber) number:
 * DARAJA_SIMULATOR_PHONE_BEHAVIOURS. The sandbox's magic numbers (SANDBOX_PHONE_BEHAVIOURS) give the same
 * outcomes here, so the sandbox can later run through the Daraja adapter.
 *
 * Where Daraja's behaviour is documented, this follows it, including where it is inconvenient:
 *  - A repeated B2C OriginatorConversationID is refused (HTTP 500, `500.002.1001` "Duplicate
 *    OriginatorConversationID") and makes no second payment; Daraja does not replay the first answer.
 *  - M-Pesa Express has no idempotency key: every accepted push is a new CheckoutRequestID and a new prompt.
 *    The only guard is M-Pesa's own: a push to a phone that already has a prompt open is refused (HTTP 500,
 *    `500.001.1001` "Unable to lock subscriber, ...").
 * Where it is not documented (marked "assumed" below), the choice is the one the adapter must survive.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SANDBOX_DELAYED_SETTLEMENT_MS } from '../rails/sandbox.ts';

export const DARAJA_SIMULATOR_DEFAULT_CREDENTIALS = {
  consumerKey: 'sim-consumer-key',
  consumerSecret: 'sim-consumer-secret',
  /** The B2C (bulk disbursement) shortcode: B2C PartyA and Transaction Status PartyA. */
  shortCode: '600996',
  /** The Lipa na M-Pesa (paybill) shortcode: STK BusinessShortCode. */
  stkShortCode: '174379',
  initiatorName: 'testapi',
  securityCredential: 'sim-security-credential',
  passkey: 'sim-passkey',
} as const;

/** Daraja's tokens live an hour; it answers `expires_in: "3599"`. */
export const DARAJA_TOKEN_LIFETIME_SECONDS = 3599;
/** A settling payment's result is POSTed this long after the request was accepted, unless told otherwise. */
export const DARAJA_SIMULATOR_CALLBACK_DELAY_MS = 0;
/** How late the "late callback" number's result arrives, unless told otherwise. */
export const DARAJA_SIMULATOR_LATE_CALLBACK_DELAY_MS = 30_000;
/** The simulator gives up POSTing a callback after this long; it does not retry (Daraja's retries are undocumented). */
export const DARAJA_SIMULATOR_CALLBACK_TIMEOUT_MS = 10_000;
/** Larger request bodies are refused as an invalid payload. */
export const DARAJA_SIMULATOR_MAX_BODY_BYTES = 64 * 1024;

/** What one API does for one number. */
export type DarajaSimulatedOutcome =
  /** The money moves. `callback` says how the result reaches the callback URL. */
  | { kind: 'complete'; callback: 'once' | 'twice' | 'late' | 'malformed'; afterDelayedSettlement?: boolean }
  /** M-Pesa processes the request and declines it with this ResultCode (in the result callback). */
  | { kind: 'decline'; resultCode: number | string; resultDesc: string }
  /** Accepted, then nothing: no callback ever; queries say it is still being processed. */
  | { kind: 'never_complete' }
  /** The API refuses the request synchronously with this HTTP status and Daraja error body. */
  | { kind: 'refuse'; status: number; errorCode: string; errorMessage: string }
  /** The request is carried out but the API never answers (the client times out). */
  | { kind: 'hang' }
  /** B2C: the request times out in Daraja's queue: a notice to QueueTimeOutURL, no result, never paid. */
  | { kind: 'queue_timeout' };

export interface DarajaPhoneBehaviour {
  /** B2C payments to this number. */
  payout: DarajaSimulatedOutcome;
  /** STK pushes to this number. */
  collection: DarajaSimulatedOutcome;
}

const COMPLETE: DarajaSimulatedOutcome = { kind: 'complete', callback: 'once' };
const INSUFFICIENT_BALANCE: DarajaSimulatedOutcome = {
  kind: 'decline',
  resultCode: 1,
  resultDesc: 'The balance is insufficient for the transaction.',
};
const DAILY_LIMIT: DarajaSimulatedOutcome = {
  kind: 'decline',
  resultCode: 4,
  resultDesc: 'Declined due to limit rule: would exceed daily transfer limit.',
};
const both = (outcome: DarajaSimulatedOutcome): DarajaPhoneBehaviour => ({
  payout: outcome,
  collection: outcome,
});

/**
 * Magic numbers (E.164, as our transfers carry them; Daraja sees them without the `+`). Any other valid
 * Safaricom number completes. The first six are SANDBOX_PHONE_BEHAVIOURS' numbers with Daraja's codes.
 */
export const DARAJA_SIMULATOR_PHONE_BEHAVIOURS: Record<string, DarajaPhoneBehaviour> = {
  // sandbox: settles
  '+254700000000': both(COMPLETE),
  // sandbox: recipient_not_registered. An STK push to a number M-Pesa does not know is refused outright.
  '+254700000001': {
    payout: {
      kind: 'decline',
      resultCode: 2040,
      resultDesc:
        "Credit Party customer type (Unregistered or Registered Customer) can't be supported by the service.",
    },
    collection: {
      kind: 'refuse',
      status: 400,
      errorCode: '400.002.02',
      errorMessage: 'Bad Request - Invalid PhoneNumber',
    },
  },
  // sandbox: insufficient_funds
  '+254700000002': both(INSUFFICIENT_BALANCE),
  // sandbox: time-out (no result ever; queries say it is still being processed)
  '+254700000003': both({ kind: 'never_complete' }),
  // sandbox: settles after SANDBOX_DELAYED_SETTLEMENT_MS (the simulator's delayedSettlementMs)
  '+254700000004': both({ kind: 'complete', callback: 'once', afterDelayedSettlement: true }),
  // sandbox: limit_exceeded
  '+254700000005': both(DAILY_LIMIT),
  // the result callback is POSTed twice, byte for byte
  '+254700000010': both({ kind: 'complete', callback: 'twice' }),
  // the money moves at once; its callback arrives lateCallbackDelayMs later
  '+254700000011': both({ kind: 'complete', callback: 'late' }),
  // the money moves; its callback body is cut short (not JSON)
  '+254700000012': both({ kind: 'complete', callback: 'malformed' }),
  // the API answers 500 and does nothing
  '+254700000013': both({
    kind: 'refuse',
    status: 500,
    errorCode: '500.003.1001',
    errorMessage: 'Internal Server Error',
  }),
  // the API answers 503 and does nothing (status assumed; the body is Daraja's "system is busy")
  '+254700000014': both({
    kind: 'refuse',
    status: 503,
    errorCode: '500.003.02',
    errorMessage: 'System is busy. Please try again in few minutes.',
  }),
  // the request goes through but the API never answers
  '+254700000015': both({ kind: 'hang' }),
  // B2C: the request times out in Daraja's queue (notice to QueueTimeOutURL, never paid)
  '+254700000016': { payout: { kind: 'queue_timeout' }, collection: COMPLETE },
  // STK: the payer cancels the prompt
  '+254700000020': {
    payout: COMPLETE,
    collection: { kind: 'decline', resultCode: 1032, resultDesc: 'Request cancelled by user' },
  },
  // STK: the payer's phone cannot be reached
  '+254700000021': {
    payout: COMPLETE,
    collection: { kind: 'decline', resultCode: 1037, resultDesc: 'DS timeout user cannot be reached' },
  },
};

export interface DarajaSimulatorOptions {
  port?: number;
  host?: string;
  consumerKey?: string;
  consumerSecret?: string;
  shortCode?: string;
  stkShortCode?: string;
  initiatorName?: string;
  securityCredential?: string;
  passkey?: string;
  tokenLifetimeSeconds?: number;
  callbackDelayMs?: number;
  lateCallbackDelayMs?: number;
  /** How long the delayed-settlement number takes; the sandbox's SANDBOX_DELAYED_SETTLEMENT_MS by default. */
  delayedSettlementMs?: number;
  /** Added before every answer (OAuth included). */
  latencyMs?: number;
}

export interface DarajaReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  /** The JSON body, when it parsed. */
  body: unknown;
  at: Date;
}

export interface DarajaCallbackDelivery {
  url: string;
  body: string;
  /** The receiver's HTTP status, or undefined when the POST failed (see `error`). */
  status?: number;
  error?: string;
  at: Date;
}

export interface DarajaSimulatedPayment {
  originatorConversationId: string;
  conversationId: string;
  receipt: string;
  partyB: string;
  amount: number;
  outcome: DarajaSimulatedOutcome;
  acceptedAt: Date;
  /** When M-Pesa finished with it; undefined while it is still being processed (or never will be). */
  completedAt?: Date;
}

export interface DarajaSimulatedPush {
  merchantRequestId: string;
  checkoutRequestId: string;
  receipt: string;
  phoneNumber: string;
  amount: number;
  accountReference: string;
  outcome: DarajaSimulatedOutcome;
  acceptedAt: Date;
  completedAt?: Date;
}

export interface DarajaSimulator {
  /** The base URL, without a trailing slash: the adapter's `baseUrl`. */
  url: string;
  /** Every request received, OAuth included, in arrival order. */
  requests: DarajaReceivedRequest[];
  /** Every callback POSTed, with the receiver's answer. */
  deliveries: DarajaCallbackDelivery[];
  /** B2C requests M-Pesa accepted for processing (one per OriginatorConversationID). */
  payments: DarajaSimulatedPayment[];
  /** STK pushes sent to payers' phones. */
  pushes: DarajaSimulatedPush[];
  /** Makes every token issued so far invalid, as an hour passing would. */
  expireTokens(): void;
  /** The next `count` calls to the M-Pesa APIs (not OAuth) answer `status` with Daraja's error body. */
  failNext(count: number, status: number): void;
  /** Delay before every answer from now on. */
  setLatency(ms: number): void;
  /** POSTs every scheduled callback now (late and delayed ones too) and waits for all deliveries to finish. */
  deliverPendingCallbacks(): Promise<void>;
  /** Waits for callbacks already being POSTed (not those scheduled for later). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

const B2C_PATHS = new Set(['/mpesa/b2c/v1/paymentrequest', '/mpesa/b2c/v3/paymentrequest']);
const OAUTH_PATH = '/oauth/v1/generate';
const STK_PUSH_PATH = '/mpesa/stkpush/v1/processrequest';
const STK_QUERY_PATH = '/mpesa/stkpushquery/v1/query';
const TRANSACTION_STATUS_PATH = '/mpesa/transactionstatus/v1/query';

const B2C_COMMAND_IDS = new Set(['BusinessPayment', 'SalaryPayment', 'PromotionPayment']);
const STK_TRANSACTION_TYPES = new Set(['CustomerPayBillOnline', 'CustomerBuyGoodsOnline']);
/** Safaricom numbers: 2547XXXXXXXX and 2541XXXXXXXX. */
const SAFARICOM_MSISDN = /^254[17]\d{8}$/;
const SHORTCODE = /^\d{5,7}$/;
const STK_TIMESTAMP = /^\d{14}$/;
/** Daraja's published limits on free text (B2C Remarks/Occasion: 100; STK AccountReference: 12, TransactionDesc: 13). */
const REMARKS_MAX_CHARS = 100;
const ACCOUNT_REFERENCE_MAX_CHARS = 12;
const TRANSACTION_DESC_MAX_CHARS = 13;
/** Kenya keeps East Africa Time all year: UTC+3. */
const NAIROBI_OFFSET_MS = 3 * 60 * 60 * 1000;

const SUCCESS_DESC = 'The service request is processed successfully.';
const ACCEPTED_DESC = 'Accept the service request successfully.';

interface ScheduledCallback {
  url: string;
  /** Built when sent, so a body can name the moment the money moved. */
  body: () => string;
  timer: NodeJS.Timeout;
  /** Runs as the callback is sent: delivering a delayed result early completes its payment early. */
  onSend?: () => void;
}

class ApiAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

export async function startDarajaSimulator(options: DarajaSimulatorOptions = {}): Promise<DarajaSimulator> {
  const config = {
    ...DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
    tokenLifetimeSeconds: DARAJA_TOKEN_LIFETIME_SECONDS,
    callbackDelayMs: DARAJA_SIMULATOR_CALLBACK_DELAY_MS,
    lateCallbackDelayMs: DARAJA_SIMULATOR_LATE_CALLBACK_DELAY_MS,
    delayedSettlementMs: SANDBOX_DELAYED_SETTLEMENT_MS,
    latencyMs: 0,
    ...withoutUndefined(options),
  };
  const tokens = new Map<string, number>(); // token → expiry (epoch ms)
  const scheduled = new Set<ScheduledCallback>();
  const inFlight = new Set<Promise<void>>();
  const hanging = new Set<http.ServerResponse>();
  const paymentsByOriginator = new Map<string, DarajaSimulatedPayment>();
  const pushesByCheckout = new Map<string, DarajaSimulatedPush>();
  let failures: { remaining: number; status: number } = { remaining: 0, status: 500 };
  let closed = false;

  const simulator: DarajaSimulator = {
    url: '',
    requests: [],
    deliveries: [],
    payments: [],
    pushes: [],
    expireTokens() {
      tokens.clear();
    },
    failNext(count, status) {
      failures = { remaining: count, status };
    },
    setLatency(ms) {
      config.latencyMs = ms;
    },
    async deliverPendingCallbacks() {
      for (const callback of [...scheduled]) {
        clearTimeout(callback.timer);
        send(callback);
      }
      await simulator.idle();
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    close: async () => {},
  };

  function schedule(url: string, body: () => string, delayMs: number, onSend?: () => void): void {
    if (closed) return;
    const callback: ScheduledCallback = {
      url,
      body,
      onSend,
      timer: setTimeout(() => send(callback), delayMs),
    };
    callback.timer.unref();
    scheduled.add(callback);
  }

  function send(callback: ScheduledCallback): void {
    if (!scheduled.delete(callback)) return;
    callback.onSend?.();
    const delivery: DarajaCallbackDelivery = { url: callback.url, body: callback.body(), at: new Date() };
    const attempt = (async () => {
      try {
        const response = await fetch(callback.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: delivery.body,
          signal: AbortSignal.timeout(DARAJA_SIMULATOR_CALLBACK_TIMEOUT_MS),
        });
        await response.arrayBuffer();
        delivery.status = response.status;
      } catch (error) {
        delivery.error = error instanceof Error ? error.message : String(error);
      }
      simulator.deliveries.push(delivery);
    })();
    inFlight.add(attempt);
    void attempt.finally(() => inFlight.delete(attempt));
  }

  /** Schedules the callback(s) an outcome calls for; `complete` marks the money moved. */
  function scheduleResult(
    outcome: DarajaSimulatedOutcome,
    url: string,
    body: () => unknown,
    complete: () => void,
  ): void {
    const json = () => JSON.stringify(body());
    switch (outcome.kind) {
      case 'complete':
        if (outcome.afterDelayedSettlement) {
          // Still being processed until the delay is over (or the callback is delivered early).
          schedule(url, json, config.delayedSettlementMs, complete);
          return;
        }
        complete();
        switch (outcome.callback) {
          case 'once':
            schedule(url, json, config.callbackDelayMs);
            return;
          case 'twice': {
            const text = json();
            schedule(url, () => text, config.callbackDelayMs);
            schedule(url, () => text, config.callbackDelayMs);
            return;
          }
          case 'late':
            schedule(url, json, config.lateCallbackDelayMs);
            return;
          case 'malformed': {
            const text = json();
            schedule(url, () => text.slice(0, Math.floor(text.length / 2)), config.callbackDelayMs);
            return;
          }
        }
        return;
      case 'decline':
      case 'hang':
        complete();
        schedule(url, json, config.callbackDelayMs);
        return;
      case 'never_complete':
      case 'queue_timeout':
      case 'refuse':
        return;
    }
  }

  // --- OAuth -------------------------------------------------------------------------------------------

  function generateToken(request: http.IncomingMessage, query: URLSearchParams): ApiAnswer {
    if (query.get('grant_type') !== 'client_credentials') {
      return new ApiAnswer(400, errorBody('400.008.02', 'Invalid grant type passed'));
    }
    const header = request.headers.authorization ?? '';
    const match = /^Basic\s+(\S+)$/i.exec(header);
    if (!match?.[1]) return new ApiAnswer(400, errorBody('400.008.01', 'Invalid authentication type passed'));
    const decoded = Buffer.from(match[1], 'base64').toString('utf8');
    const separator = decoded.indexOf(':');
    const key = decoded.slice(0, separator);
    const secret = decoded.slice(separator + 1);
    if (separator < 0 || key !== config.consumerKey || secret !== config.consumerSecret) {
      // Assumed: Daraja's documented tables list no code for a wrong key or secret; it answers 400.
      return new ApiAnswer(400, errorBody('400.008.01', 'Invalid Authentication passed'));
    }
    const token = randomBytes(21).toString('base64url');
    tokens.set(token, Date.now() + config.tokenLifetimeSeconds * 1000);
    return new ApiAnswer(200, { access_token: token, expires_in: String(config.tokenLifetimeSeconds) });
  }

  /** The token error Daraja gives each API family: B2C and Transaction Status, or M-Pesa Express. */
  function tokenRefusal(request: http.IncomingMessage, family: 'result_apis' | 'express'): ApiAnswer | null {
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    const token = match?.[1];
    const expiresAt = token === undefined ? undefined : tokens.get(token);
    if (expiresAt !== undefined && expiresAt > Date.now()) return null;
    if (token !== undefined) tokens.delete(token);
    return family === 'express'
      ? new ApiAnswer(401, errorBody('404.001.03', 'Invalid Access Token'))
      : new ApiAnswer(401, errorBody('401.002.01', `Error Occurred - Invalid Access Token - ${token ?? ''}`));
  }

  // --- B2C -----------------------------------------------------------------------------------------------

  function b2cPaymentRequest(path: string, body: Record<string, unknown>): ApiAnswer | 'hang' {
    const version3 = path.includes('/v3/');
    const invalid = (field: string) =>
      new ApiAnswer(400, errorBody('400.002.02', `Bad Request - Invalid ${field}`));
    const originator = body.OriginatorConversationID;
    if (version3 && !nonEmptyString(originator)) return invalid('OriginatorConversationID');
    if (originator !== undefined && !nonEmptyString(originator)) return invalid('OriginatorConversationID');
    if (!nonEmptyString(body.InitiatorName)) return invalid('InitiatorName');
    if (!nonEmptyString(body.SecurityCredential)) return invalid('SecurityCredential');
    if (!B2C_COMMAND_IDS.has(String(body.CommandID))) return invalid('CommandID');
    const amount = wholeAmount(body.Amount);
    if (amount === null) return invalid('Amount');
    if (!SHORTCODE.test(String(body.PartyA ?? ''))) return invalid('PartyA');
    const partyB = String(body.PartyB ?? '');
    if (!SAFARICOM_MSISDN.test(partyB)) return invalid('PartyB');
    if (!boundedText(body.Remarks, REMARKS_MAX_CHARS)) return invalid('Remarks');
    if (!absoluteUrl(body.QueueTimeOutURL)) return invalid('QueueTimeOutURL');
    if (!absoluteUrl(body.ResultURL)) return invalid('ResultURL');
    // Daraja's sample spells it "Occassion"; both spellings are accepted, neither is required.
    const occasion = body.Occassion ?? body.Occasion;
    if (occasion !== undefined && !boundedText(occasion, REMARKS_MAX_CHARS, true)) return invalid('Occasion');

    const originatorConversationId = nonEmptyString(originator) ? originator : requestIdLike();
    if (paymentsByOriginator.has(originatorConversationId)) {
      return new ApiAnswer(500, errorBody('500.002.1001', 'Duplicate OriginatorConversationID'));
    }
    const behaviour = behaviourOf(partyB).payout;
    if (behaviour.kind === 'refuse') {
      return new ApiAnswer(behaviour.status, errorBody(behaviour.errorCode, behaviour.errorMessage));
    }
    const credentialsValid =
      body.InitiatorName === config.initiatorName && body.SecurityCredential === config.securityCredential;
    const outcome: DarajaSimulatedOutcome = credentialsValid
      ? behaviour
      : { kind: 'decline', resultCode: 2001, resultDesc: 'The initiator information is invalid.' };
    const payment: DarajaSimulatedPayment = {
      originatorConversationId,
      conversationId: conversationId(),
      receipt: receiptNumber(),
      partyB,
      amount,
      outcome,
      acceptedAt: new Date(),
    };
    paymentsByOriginator.set(originatorConversationId, payment);
    simulator.payments.push(payment);
    if (outcome.kind === 'queue_timeout') {
      const notice = JSON.stringify(queueTimeoutBody(payment));
      schedule(String(body.QueueTimeOutURL), () => notice, config.callbackDelayMs);
    } else {
      scheduleResult(
        outcome,
        String(body.ResultURL),
        () => b2cResultBody(payment),
        () => {
          payment.completedAt ??= new Date();
        },
      );
    }
    if (outcome.kind === 'hang') return 'hang';
    return new ApiAnswer(200, {
      ConversationID: payment.conversationId,
      OriginatorConversationID: originatorConversationId,
      ResponseCode: '0',
      ResponseDescription: ACCEPTED_DESC,
    });
  }

  function b2cResultBody(payment: DarajaSimulatedPayment): unknown {
    const referenceData = {
      ReferenceItem: {
        Key: 'QueueTimeoutURL',
        Value: 'https://internalsandbox.safaricom.co.ke/mpesa/b2cresults/v1/submit',
      },
    };
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

  // --- Transaction Status --------------------------------------------------------------------------------

  function transactionStatusQuery(body: Record<string, unknown>): ApiAnswer {
    const invalid = (field: string) =>
      new ApiAnswer(400, errorBody('400.002.02', `Bad Request - Invalid ${field}`));
    if (!nonEmptyString(body.Initiator)) return invalid('Initiator');
    if (!nonEmptyString(body.SecurityCredential)) return invalid('SecurityCredential');
    if (body.CommandID !== 'TransactionStatusQuery') return invalid('CommandID');
    const transactionId = nonEmptyString(body.TransactionID) ? body.TransactionID : undefined;
    const originator = nonEmptyString(body.OriginatorConversationID)
      ? body.OriginatorConversationID
      : undefined;
    if (transactionId === undefined && originator === undefined) return invalid('TransactionID');
    if (!SHORTCODE.test(String(body.PartyA ?? ''))) return invalid('PartyA');
    if (!['1', '2', '4'].includes(String(body.IdentifierType))) return invalid('IdentifierType');
    if (!absoluteUrl(body.ResultURL)) return invalid('ResultURL');
    if (body.QueueTimeOutURL !== undefined && !absoluteUrl(body.QueueTimeOutURL))
      return invalid('QueueTimeOutURL');
    if (!boundedText(body.Remarks, REMARKS_MAX_CHARS)) return invalid('Remarks');
    const occasion = body.Occasion ?? body.Occassion;
    if (occasion !== undefined && !boundedText(occasion, REMARKS_MAX_CHARS, true)) return invalid('Occasion');

    const query = { originatorConversationId: requestIdLike(), conversationId: conversationId() };
    const credentialsValid =
      body.Initiator === config.initiatorName && body.SecurityCredential === config.securityCredential;
    const payment =
      (originator !== undefined ? paymentsByOriginator.get(originator) : undefined) ??
      simulator.payments.find((p) => transactionId !== undefined && p.receipt === transactionId);
    // Built when sent: it reports the payment as it stands then.
    schedule(
      String(body.ResultURL),
      () =>
        JSON.stringify(
          statusResultBody(
            query,
            credentialsValid,
            payment,
            typeof occasion === 'string' ? occasion : undefined,
          ),
        ),
      config.callbackDelayMs,
    );
    return new ApiAnswer(200, {
      OriginatorConversationID: query.originatorConversationId,
      ConversationID: query.conversationId,
      ResponseCode: '0',
      ResponseDescription: ACCEPTED_DESC,
    });
  }

  function statusResultBody(
    query: { originatorConversationId: string; conversationId: string },
    credentialsValid: boolean,
    payment: DarajaSimulatedPayment | undefined,
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
      return { Result: envelope(2001, 'The initiator information is invalid.', 'NLJ0000000') };
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
    // Assumed: Daraja does not publish the TransactionStatus values; "Completed" is in its sample.
    const status =
      payment.completedAt === undefined
        ? 'Pending'
        : payment.outcome.kind === 'decline'
          ? 'Failed'
          : 'Completed';
    const completed = status === 'Completed';
    const transactionId = completed ? payment.receipt : placeholderTransactionId(payment.receipt);
    const reason = payment.outcome.kind === 'decline' ? payment.outcome.resultDesc : undefined;
    return {
      Result: {
        ...envelope(0, SUCCESS_DESC, transactionId),
        ResultParameters: {
          ResultParameter: [
            { Key: 'DebitPartyName', Value: `${config.shortCode} - Simulated Business` },
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
          ],
        },
      },
    };
  }

  // --- M-Pesa Express (STK push) ---------------------------------------------------------------------------

  function stkCredentialsRefusal(body: Record<string, unknown>): ApiAnswer | null {
    const invalid = (field: string) =>
      new ApiAnswer(400, errorBody('400.002.02', `Bad Request - Invalid ${field}`));
    const shortCode = String(body.BusinessShortCode ?? '');
    if (!SHORTCODE.test(shortCode)) return invalid('BusinessShortCode');
    const timestamp = String(body.Timestamp ?? '');
    if (!STK_TIMESTAMP.test(timestamp)) return invalid('Timestamp');
    if (!nonEmptyString(body.Password)) return invalid('Password');
    if (shortCode !== config.stkShortCode) {
      return new ApiAnswer(500, errorBody('500.001.1001', 'Merchant does not exist'));
    }
    const expected = Buffer.from(`${shortCode}${config.passkey}${timestamp}`, 'utf8').toString('base64');
    if (body.Password !== expected) return new ApiAnswer(500, errorBody('500.001.1001', 'Wrong credentials'));
    return null;
  }

  function stkPush(body: Record<string, unknown>): ApiAnswer | 'hang' {
    const invalid = (field: string) =>
      new ApiAnswer(400, errorBody('400.002.02', `Bad Request - Invalid ${field}`));
    const refusal = stkCredentialsRefusal(body);
    if (refusal) return refusal;
    if (!STK_TRANSACTION_TYPES.has(String(body.TransactionType))) return invalid('TransactionType');
    const amount = wholeAmount(body.Amount);
    if (amount === null) return invalid('Amount');
    const phoneNumber = String(body.PhoneNumber ?? '');
    if (!SAFARICOM_MSISDN.test(phoneNumber)) return invalid('PhoneNumber');
    if (!SAFARICOM_MSISDN.test(String(body.PartyA ?? ''))) return invalid('PartyA');
    if (!SHORTCODE.test(String(body.PartyB ?? ''))) return invalid('PartyB');
    if (!absoluteUrl(body.CallBackURL)) return invalid('CallBackURL');
    if (!boundedText(body.AccountReference, ACCOUNT_REFERENCE_MAX_CHARS)) return invalid('AccountReference');
    if (!boundedText(body.TransactionDesc, TRANSACTION_DESC_MAX_CHARS)) return invalid('TransactionDesc');

    const behaviour = behaviourOf(phoneNumber).collection;
    if (behaviour.kind === 'refuse') {
      return new ApiAnswer(behaviour.status, errorBody(behaviour.errorCode, behaviour.errorMessage));
    }
    // M-Pesa's one guard against a second prompt: the payer's phone is locked while one is open.
    if (simulator.pushes.some((p) => p.phoneNumber === phoneNumber && p.completedAt === undefined)) {
      return new ApiAnswer(
        500,
        errorBody(
          '500.001.1001',
          'Unable to lock subscriber, a transaction is already in process for the current subscriber',
        ),
      );
    }
    const push: DarajaSimulatedPush = {
      merchantRequestId: requestIdLike(),
      checkoutRequestId: checkoutRequestId(),
      receipt: receiptNumber(),
      phoneNumber,
      amount,
      accountReference: String(body.AccountReference),
      outcome: behaviour,
      acceptedAt: new Date(),
    };
    pushesByCheckout.set(push.checkoutRequestId, push);
    simulator.pushes.push(push);
    scheduleResult(
      behaviour,
      String(body.CallBackURL),
      () => stkCallbackBody(push),
      () => {
        push.completedAt ??= new Date();
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
              { Name: 'TransactionDate', Value: compactDateTime(push.completedAt ?? new Date()) },
              { Name: 'PhoneNumber', Value: Number(push.phoneNumber) },
            ],
          },
        },
      },
    };
  }

  function stkQuery(body: Record<string, unknown>): ApiAnswer {
    const refusal = stkCredentialsRefusal(body);
    if (refusal) return refusal;
    const push = pushesByCheckout.get(String(body.CheckoutRequestID ?? ''));
    if (!push) return new ApiAnswer(400, errorBody('400.002.02', 'Bad Request - Invalid CheckoutRequestID'));
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

  // --- HTTP -------------------------------------------------------------------------------------------

  async function route(request: http.IncomingMessage, rawBody: string): Promise<ApiAnswer | 'hang'> {
    const url = new URL(request.url ?? '/', 'http://simulator');
    const path = url.pathname;
    const method = request.method ?? 'GET';
    if (path === OAUTH_PATH) {
      if (method !== 'GET') return new ApiAnswer(405, errorBody('405.001', `${method} Method Not Allowed`));
      return generateToken(request, url.searchParams);
    }
    const express = path === STK_PUSH_PATH || path === STK_QUERY_PATH;
    if (!express && !B2C_PATHS.has(path) && path !== TRANSACTION_STATUS_PATH) {
      return new ApiAnswer(404, errorBody('404.001.01', 'Resource not found'));
    }
    if (method !== 'POST') return new ApiAnswer(405, errorBody('405.001', `${method} Method Not Allowed`));
    if (failures.remaining > 0) {
      failures.remaining -= 1;
      return new ApiAnswer(failures.status, errorBody('500.003.1001', 'Internal Server Error'));
    }
    const tokenProblem = tokenRefusal(request, express ? 'express' : 'result_apis');
    if (tokenProblem) return tokenProblem;
    const body = parseObject(rawBody);
    if (!body) return new ApiAnswer(400, errorBody('400.002.05', 'Invalid Request Payload'));
    if (B2C_PATHS.has(path)) return b2cPaymentRequest(path, body);
    if (path === TRANSACTION_STATUS_PATH) return transactionStatusQuery(body);
    if (path === STK_PUSH_PATH) return stkPush(body);
    return stkQuery(body);
  }

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= DARAJA_SIMULATOR_MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => {
      const rawBody = size > DARAJA_SIMULATOR_MAX_BODY_BYTES ? '' : Buffer.concat(chunks).toString('utf8');
      const url = new URL(request.url ?? '/', 'http://simulator');
      simulator.requests.push({
        method: request.method ?? 'GET',
        path: url.pathname,
        headers: request.headers,
        rawBody,
        body: parseObject(rawBody) ?? undefined,
        at: new Date(),
      });
      void (async () => {
        if (config.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, config.latencyMs));
        const answer =
          size > DARAJA_SIMULATOR_MAX_BODY_BYTES
            ? new ApiAnswer(400, errorBody('400.002.05', 'Invalid Request Payload'))
            : await route(request, rawBody);
        if (answer === 'hang') {
          hanging.add(response);
          response.on('close', () => hanging.delete(response));
          return;
        }
        const text = JSON.stringify(answer.body);
        response.writeHead(answer.status, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
        });
        response.end(text);
      })().catch((error: unknown) => {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify(errorBody('500.003.1001', String(error))));
      });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  simulator.url = `http://${host}:${address.port}`;
  simulator.close = async () => {
    closed = true;
    for (const callback of scheduled) clearTimeout(callback.timer);
    scheduled.clear();
    for (const response of hanging) response.destroy();
    await simulator.idle();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return simulator;
}

/** The behaviour for a Daraja MSISDN (no `+`); any number not in the table completes. */
function behaviourOf(msisdn: string): DarajaPhoneBehaviour {
  return DARAJA_SIMULATOR_PHONE_BEHAVIOURS[`+${msisdn}`] ?? both(COMPLETE);
}

function errorBody(errorCode: string, errorMessage: string) {
  return { requestId: requestIdLike(), errorCode, errorMessage };
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

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function boundedText(value: unknown, maxChars: number, allowEmpty = false): boolean {
  return typeof value === 'string' && (allowEmpty || value.trim() !== '') && value.length <= maxChars;
}

/** Daraja amounts are whole shillings, sent as a number or a numeric string ("10"). */
function wholeAmount(value: unknown): number | null {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : '';
  if (!/^\d+$/.test(text)) return null;
  const amount = Number(text);
  return amount >= 1 && Number.isSafeInteger(amount) ? amount : null;
}

function absoluteUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const RECEIPT_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** An M-Pesa receipt: ten upper-case letters and digits, starting with a letter (e.g. NLJ41HAY6Q). */
function receiptNumber(): string {
  let receipt = RECEIPT_ALPHABET[randomInt(26)] ?? 'S';
  while (receipt.length < 10) receipt += RECEIPT_ALPHABET[randomInt(RECEIPT_ALPHABET.length)];
  return receipt;
}

/** A failed transaction's TransactionID: the receipt's first three characters and zeros (NLJ0000000). */
function placeholderTransactionId(receipt: string): string {
  return `${receipt.slice(0, 3)}0000000`;
}

/** Like Daraja's requestId and generated OriginatorConversationIDs: 29115-34620561-1. */
function requestIdLike(): string {
  return `${randomInt(10_000, 99_999)}-${randomInt(10_000_000, 99_999_999)}-1`;
}

/** Like AG_20191219_00005797af5d7d75f652. */
function conversationId(): string {
  return `AG_${compactDateTime(new Date()).toString().slice(0, 8)}_${randomBytes(10).toString('hex')}`;
}

/** Like ws_CO_191220191020363925. */
function checkoutRequestId(): string {
  const digest = createHash('sha256').update(randomBytes(16)).digest('hex').slice(0, 6);
  return `ws_CO_${compactDateTime(new Date())}${digest}`;
}

function nairobiParts(at: Date): string[] {
  const local = new Date(at.getTime() + NAIROBI_OFFSET_MS).toISOString();
  return [
    local.slice(0, 4),
    local.slice(5, 7),
    local.slice(8, 10),
    local.slice(11, 13),
    local.slice(14, 16),
    local.slice(17, 19),
  ];
}

/** Nairobi time as the number YYYYMMDDHHmmss (STK TransactionDate, status InitiatedTime). */
function compactDateTime(at: Date): number {
  return Number(nairobiParts(at).join(''));
}

/** Nairobi time as DD.MM.YYYY HH:mm:ss (B2C TransactionCompletedDateTime). */
function dottedDateTime(at: Date): string {
  const [year, month, day, hour, minute, second] = nairobiParts(at);
  return `${day}.${month}.${year} ${hour}:${minute}:${second}`;
}
