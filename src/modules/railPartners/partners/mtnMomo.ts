/**
 * MTN MoMo Open API as a partner rail: payouts through the disbursement product's transfer, collections
 * through the collection product's request-to-pay, both asynchronous (202, then a callback and GET).
 *
 * Idempotency: MTN identifies a request by the X-Reference-Id (a UUID) the caller chooses, and answers a
 * second POST with the same one 409 RESOURCE_ALREADY_EXIST. The adapter derives that UUID from the
 * idempotency reference alone (momoReferenceId), so a repeated submit, from any worker or after a restart,
 * names the same request; its 409 is read as "already made" and answered with the same reference after a
 * GET, never with a second payment. The same derivation lets a callback, which carries only our externalId,
 * name the reference it is about.
 *
 * Callbacks: MTN does not sign them. What guards the endpoint is the organization's unguessable path token
 * (CallbackTarget.baseUrl), and nothing a callback says is final on its own word alone: the rail worker's
 * poller confirms every outcome with GET. parseCallback only reads the body.
 */

import { createHash } from 'node:crypto';
import { type Currency, exponentOf, isCurrency } from '../../../domain/money.ts';
import type { Transfer } from '../../../domain/transferRecord.ts';
import type { OutboundFetch } from '../../../outbound/guard.ts';
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

export const MTN_MOMO_PARTNER = 'mtn_momo';

/**
 * One HTTP request's time limit. A call makes at most five requests (token, POST, a fresh token and the
 * POST again after a 401, GET after a 409), so a whole call ends within the rail worker's 20-second
 * RAIL_CALL_TIMEOUT_MS.
 */
export const MOMO_REQUEST_TIMEOUT_MS = 4_000;
/** MTN's guidance: refresh an access token 10 minutes before it expires (they live 60 minutes). */
export const MOMO_TOKEN_REFRESH_MARGIN_MS = 10 * 60_000;
/** How long until a request still PENDING (or just accepted) is looked at again with GET. */
export const MOMO_STATUS_POLL_INTERVAL_MS = 30_000;
/** MTN refuses a payerMessage or payeeNote longer than this. */
export const MOMO_NOTE_MAX_CHARS = 160;

export type MomoProduct = 'collection' | 'disbursement';

export interface MtnMomoConfig {
  /**
   * How the adapter calls out: the outbound address guard's fetch (src/outbound/guard.ts), which checks the
   * URL and every address it connects to under the deployment's policy.
   */
  fetch: OutboundFetch;
  /** `https://proxy.momoapi.mtn.com` in production (some markets have their own host), or the sandbox's. */
  baseUrl: string;
  /** X-Target-Environment: `sandbox`, or the market MTN names at onboarding, such as `mtnuganda`. */
  targetEnvironment: string;
  /** The API user's id (a UUID) and its API key: the Basic credentials of POST /{product}/token/. */
  apiUser: string;
  apiKey: string;
  /** Ocp-Apim-Subscription-Key: each product has its own. */
  collectionSubscriptionKey: string;
  disbursementSubscriptionKey: string;
  /** MOMO_REQUEST_TIMEOUT_MS unless given. */
  requestTimeoutMs?: number;
}

/** A call to MTN that did not give a usable answer: the rail worker retries, the message says why. */
export class MtnMomoError extends Error {
  override name = 'MtnMomoError';
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

/**
 * MTN's reason codes (in a FAILED request's `reason`, or an error body's `code`) → our failure codes. A
 * reason not listed fails with `partner_rejected`.
 */
export const MOMO_REASON_FAILURE_CODES: Readonly<Record<string, string>> = {
  PAYEE_NOT_FOUND: 'recipient_not_registered',
  PAYER_NOT_FOUND: 'payer_not_registered',
  NOT_ENOUGH_FUNDS: 'insufficient_funds',
  PAYER_LIMIT_REACHED: 'limit_exceeded',
  PAYEE_NOT_ALLOWED_TO_RECEIVE: 'recipient_not_allowed',
  APPROVAL_REJECTED: 'payer_declined',
  PAYMENT_NOT_APPROVED: 'payer_declined',
  EXPIRED: 'payer_approval_expired',
  // MTN: "predominantly ... a delay to approve a transaction within the given time frame (5 minutes)".
  COULD_NOT_PERFORM_TRANSACTION: 'payer_approval_expired',
  TRANSACTION_CANCELED: 'partner_canceled',
  INVALID_CURRENCY: 'currency_not_supported',
  NOT_ALLOWED: 'partner_not_allowed',
  NOT_ALLOWED_TARGET_ENVIRONMENT: 'partner_configuration_error',
  INVALID_CALLBACK_URL_HOST: 'partner_configuration_error',
  INTERNAL_PROCESSING_ERROR: 'partner_error',
  SERVICE_UNAVAILABLE: 'partner_unavailable',
};
export const MOMO_UNKNOWN_REASON_FAILURE_CODE = 'partner_rejected';

/**
 * Reasons MTN's error table lists as answers to the POST itself (HTTP 500) that say the request can never
 * succeed as sent. Such an answer is believed only once GET confirms nothing was created; any other 5xx
 * is a partner error to retry.
 */
export const MOMO_SYNCHRONOUS_REFUSAL_REASONS: ReadonlySet<string> = new Set([
  'PAYEE_NOT_FOUND',
  'PAYER_NOT_FOUND',
  'NOT_ENOUGH_FUNDS',
  'PAYER_LIMIT_REACHED',
  'PAYEE_NOT_ALLOWED_TO_RECEIVE',
  'INVALID_CURRENCY',
]);

/** The currencies MTN MoMo wallets hold in the markets MTN serves (EUR: the sandbox's only currency). */
export const MOMO_CURRENCIES: ReadonlySet<Currency> = new Set<Currency>([
  'UGX',
  'RWF',
  'GHS',
  'XOF',
  'XAF',
  'ZMW',
  'ZAR',
  'NGN',
  'EUR',
]);

const PATHS: Record<MomoProduct, { token: string; resource: string; party: 'payer' | 'payee' }> = {
  collection: { token: '/collection/token/', resource: '/collection/v1_0/requesttopay', party: 'payer' },
  disbursement: { token: '/disbursement/token/', resource: '/disbursement/v1_0/transfer', party: 'payee' },
};

/** Where each product's callbacks arrive, after the organization's callback base URL. */
const CALLBACK_PATH_PRODUCTS: Readonly<Record<string, MomoProduct>> = {
  disbursement: 'disbursement',
  collection: 'collection',
};

/**
 * The X-Reference-Id for an idempotency reference: a function of the reference (and product) alone. MTN
 * accepts only UUID version 4, so the SHA-256 digest's first 16 bytes get version 4's and RFC 4122's
 * variant bits; the other 122 bits are as unpredictable as a random UUID's, and the same every time.
 */
export function momoReferenceId(idempotencyReference: string, product: MomoProduct): string {
  const bytes = createHash('sha256')
    .update(`mkoba:mtn_momo:${product}:${idempotencyReference}`, 'utf8')
    .digest();
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Minor units → MoMo's amount, a decimal string in major units at the currency's exponent, trailing
 * fractional zeros dropped: 150075n GHS → "1500.75", 1500n UGX → "1500". Undefined for an amount that is
 * not positive.
 */
export function momoAmountOf(amountMinor: bigint, currency: Currency): string | undefined {
  if (amountMinor <= 0n) return undefined;
  const exponent = exponentOf(currency);
  const digits = amountMinor.toString().padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = digits.slice(digits.length - exponent).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

/** The longest amount text read (digits and point): far beyond any real amount, short of a huge BigInt. */
const MOMO_AMOUNT_TEXT_MAX_CHARS = 40;

/**
 * MoMo's amount → minor units, exactly: "1500.75" GHS → 150075n. Undefined for text that is not a plain
 * decimal, or that the currency cannot carry ("1.50" UGX: UGX has no minor unit).
 */
export function minorUnitsOfMomoAmount(text: string, currency: Currency): bigint | undefined {
  if (text.length > MOMO_AMOUNT_TEXT_MAX_CHARS) return undefined;
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return undefined;
  const exponent = exponentOf(currency);
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > exponent) return undefined;
  return BigInt(`${match[1]}${fraction.padEnd(exponent, '0')}`);
}

/** MTN refuses some characters (an apostrophe, for one) in notes: keep letters, digits and plain marks. */
function momoNote(text: string): string {
  return text
    .replace(/[^A-Za-z0-9 .,:_-]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MOMO_NOTE_MAX_CHARS);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** MTN's reason: a string on its live platform, an ErrorReason object ({code, message}) in its API reference. */
function reasonCodeOf(reason: unknown): string | undefined {
  if (typeof reason === 'string' && reason !== '') return reason;
  if (isRecord(reason) && typeof reason.code === 'string' && reason.code !== '') return reason.code;
  return undefined;
}

export function failureCodeOfMomoReason(reason: string | undefined): string {
  return reason !== undefined && Object.hasOwn(MOMO_REASON_FAILURE_CODES, reason)
    ? (MOMO_REASON_FAILURE_CODES[reason] as string)
    : MOMO_UNKNOWN_REASON_FAILURE_CODE;
}

/** A JSON value MTN may send as a string or a number (its examples show both). */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  return undefined;
}

/** MTN's partyId is the MSISDN's digits, country code first, without `+`. */
function msisdnOf(phone: string): string {
  return phone.startsWith('+') ? phone.slice(1) : phone;
}

interface MomoAnswer {
  status: number;
  body: unknown;
  /** The error body's code, where it has one. */
  code: string | undefined;
}

interface CachedToken {
  accessToken: string;
  /** When to stop using it (its expiry less the refresh margin), epoch ms. */
  refreshAt: number;
}

export function mtnMomoRail(config: MtnMomoConfig, callbacks: CallbackTarget): PartnerRail {
  const baseUrl = config.baseUrl.replace(/\/+$/, '');
  const requestTimeoutMs = config.requestTimeoutMs ?? MOMO_REQUEST_TIMEOUT_MS;
  const subscriptionKeys: Record<MomoProduct, string> = {
    collection: config.collectionSubscriptionKey,
    disbursement: config.disbursementSubscriptionKey,
  };
  const tokens = new Map<MomoProduct, CachedToken>();
  /** Token requests under way, so that calls at once share one token. */
  const tokenRequests = new Map<MomoProduct, Promise<CachedToken>>();

  /** One HTTP exchange; throws MtnMomoError when there is no answer in time. */
  async function exchange(
    method: 'GET' | 'POST',
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<MomoAnswer> {
    let text: string;
    let status: number;
    try {
      const response = await config.fetch(`${baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        signal: AbortSignal.timeout(requestTimeoutMs),
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      const timedOut =
        error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      throw new MtnMomoError(
        timedOut
          ? `MTN MoMo did not answer ${method} ${path} within ${requestTimeoutMs} ms`
          : `MTN MoMo ${method} ${path} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const parsed = text === '' ? undefined : parseJson(text);
    const code = isRecord(parsed) && typeof parsed.code === 'string' ? parsed.code : undefined;
    return { status, body: parsed, code };
  }

  /** What an error answer says, for a message: MTN's code, or its gateway's message. */
  function describe(answer: MomoAnswer): string {
    const body = answer.body;
    const detail =
      answer.code ??
      (isRecord(body) && typeof body.error === 'string' ? body.error : undefined) ??
      (isRecord(body) && typeof body.message === 'string' ? body.message : undefined);
    return detail === undefined ? `HTTP ${answer.status}` : `HTTP ${answer.status}: ${detail}`;
  }

  async function requestToken(product: MomoProduct): Promise<CachedToken> {
    const basic = Buffer.from(`${config.apiUser}:${config.apiKey}`, 'utf8').toString('base64');
    const answer = await exchange('POST', PATHS[product].token, {
      Authorization: `Basic ${basic}`,
      'Ocp-Apim-Subscription-Key': subscriptionKeys[product],
    });
    if (answer.status === 401) {
      throw new MtnMomoError(
        `MTN MoMo refused the ${product} credentials (the API user and key, or the product's subscription key): ${describe(answer)}`,
        answer.status,
        answer.code,
      );
    }
    const body = answer.body;
    if (
      answer.status !== 200 ||
      !isRecord(body) ||
      typeof body.access_token !== 'string' ||
      typeof body.expires_in !== 'number'
    ) {
      throw new MtnMomoError(`MTN MoMo gave no ${product} access token: ${describe(answer)}`, answer.status);
    }
    const lifetimeMs = body.expires_in * 1000;
    // A token shorter-lived than the margin is still used for half its life rather than never.
    const margin = Math.min(MOMO_TOKEN_REFRESH_MARGIN_MS, lifetimeMs / 2);
    return { accessToken: body.access_token, refreshAt: Date.now() + lifetimeMs - margin };
  }

  async function tokenFor(product: MomoProduct): Promise<CachedToken> {
    const cached = tokens.get(product);
    if (cached && cached.refreshAt > Date.now()) return cached;
    let pending = tokenRequests.get(product);
    if (!pending) {
      pending = requestToken(product).finally(() => tokenRequests.delete(product));
      tokenRequests.set(product, pending);
    }
    const token = await pending;
    tokens.set(product, token);
    return token;
  }

  /** An API call with the product's bearer token; a 401 gets a fresh token and one more try. */
  async function authorized(
    product: MomoProduct,
    method: 'GET' | 'POST',
    path: string,
    extraHeaders: Record<string, string> = {},
    body?: string,
  ): Promise<MomoAnswer> {
    for (let attempt = 1; ; attempt += 1) {
      const token = await tokenFor(product);
      const answer = await exchange(
        method,
        path,
        {
          Authorization: `Bearer ${token.accessToken}`,
          'X-Target-Environment': config.targetEnvironment,
          'Ocp-Apim-Subscription-Key': subscriptionKeys[product],
          ...extraHeaders,
        },
        body,
      );
      if (answer.status !== 401) return answer;
      if (tokens.get(product) === token) tokens.delete(product);
      if (attempt === 2) {
        throw new MtnMomoError(
          `MTN MoMo refused a fresh ${product} access token: ${describe(answer)}`,
          answer.status,
          answer.code,
        );
      }
    }
  }

  /** GET a request by its X-Reference-Id: its body, or undefined when MTN does not know it (404). */
  async function fetchResource(
    product: MomoProduct,
    referenceId: string,
  ): Promise<Record<string, unknown> | undefined> {
    const path = `${PATHS[product].resource}/${encodeURIComponent(referenceId)}`;
    const answer = await authorized(product, 'GET', path);
    if (answer.status === 404) return undefined;
    if (answer.status !== 200 || !isRecord(answer.body)) {
      throw new MtnMomoError(
        `MTN MoMo answered GET ${path} with ${describe(answer)}`,
        answer.status,
        answer.code,
      );
    }
    return answer.body;
  }

  /** Refuses to take another request's answer as ours: the externalId must be our idempotency reference. */
  function checkBelongs(
    resource: Record<string, unknown>,
    referenceId: string,
    idempotencyReference: string,
  ) {
    if (resource.externalId !== idempotencyReference) {
      throw new MtnMomoError(
        `MTN MoMo request ${referenceId} carries externalId ${String(resource.externalId)}, not ${idempotencyReference}`,
      );
    }
  }

  function outcomeOf(resource: Record<string, unknown>, referenceId: string, now: Date): RailOutcome {
    switch (resource.status) {
      case 'SUCCESSFUL':
        return { kind: 'settled' };
      case 'FAILED':
        return { kind: 'failed', failureCode: failureCodeOfMomoReason(reasonCodeOf(resource.reason)) };
      case 'PENDING':
        return { kind: 'processing', checkAt: new Date(now.getTime() + MOMO_STATUS_POLL_INTERVAL_MS) };
      default:
        throw new MtnMomoError(
          `MTN MoMo request ${referenceId} has an unknown status ${String(resource.status)}`,
        );
    }
  }

  /**
   * POSTs a transfer or request-to-pay under its derived X-Reference-Id and reads MTN's answer: 202 is
   * accepted, 409 is the same request made before, a 400 or a confirmed refusal is a failure code, anything
   * else throws so the worker asks again (safe: the same X-Reference-Id cannot make a second request).
   */
  async function create(
    product: MomoProduct,
    idempotencyReference: string,
    body: Record<string, unknown>,
    now: Date,
  ): Promise<SubmitResult> {
    const referenceId = momoReferenceId(idempotencyReference, product);
    const accepted = (): SubmitResult => ({
      accepted: true,
      reference: referenceId,
      checkAt: new Date(now.getTime() + MOMO_STATUS_POLL_INTERVAL_MS),
    });
    const answer = await authorized(
      product,
      'POST',
      PATHS[product].resource,
      {
        'X-Reference-Id': referenceId,
        'X-Callback-Url': `${callbacks.baseUrl}/${product}`,
        'Content-Type': 'application/json',
      },
      JSON.stringify(body),
    );
    if (answer.status === 202) return accepted();
    if (answer.status === 409 && answer.code === 'RESOURCE_ALREADY_EXIST') {
      const existing = await fetchResource(product, referenceId);
      if (!existing) {
        throw new MtnMomoError(
          `MTN MoMo answered 409 for ${referenceId} but does not know it`,
          409,
          answer.code,
        );
      }
      checkBelongs(existing, referenceId, idempotencyReference);
      return accepted();
    }
    if (answer.status === 400) {
      return { accepted: false, failureCode: failureCodeOfMomoReason(answer.code) };
    }
    if (
      answer.status >= 500 &&
      answer.code !== undefined &&
      MOMO_SYNCHRONOUS_REFUSAL_REASONS.has(answer.code)
    ) {
      const existing = await fetchResource(product, referenceId);
      if (!existing) return { accepted: false, failureCode: failureCodeOfMomoReason(answer.code) };
      checkBelongs(existing, referenceId, idempotencyReference);
      return accepted();
    }
    throw new MtnMomoError(
      `MTN MoMo answered POST ${PATHS[product].resource} with ${describe(answer)}`,
      answer.status,
      answer.code,
    );
  }

  async function status(
    product: MomoProduct,
    referenceId: string,
    idempotencyReference: string,
    now: Date,
  ): Promise<RailOutcome> {
    const resource = await fetchResource(product, referenceId);
    if (!resource) {
      // Only asked about a reference MTN accepted: say so on the transfer and look again later.
      return {
        kind: 'processing',
        reason: 'partner_reference_not_found',
        checkAt: new Date(now.getTime() + MOMO_STATUS_POLL_INTERVAL_MS),
      };
    }
    checkBelongs(resource, referenceId, idempotencyReference);
    return outcomeOf(resource, referenceId, now);
  }

  return {
    partner: MTN_MOMO_PARTNER,

    async submit({ idempotencyReference, transfer }: SubmitRequest, now: Date): Promise<SubmitResult> {
      const destination = transfer.destination;
      if (destination.type !== 'mobile_money' || destination.network !== 'mtn') {
        return { accepted: false, failureCode: 'destination_not_supported' };
      }
      if (!MOMO_CURRENCIES.has(transfer.currency)) {
        return { accepted: false, failureCode: 'currency_not_supported' };
      }
      const amount = momoAmountOf(transfer.amountMinor, transfer.currency);
      if (amount === undefined) return { accepted: false, failureCode: 'amount_not_supported' };
      return create(
        'disbursement',
        idempotencyReference,
        {
          amount,
          currency: transfer.currency,
          externalId: idempotencyReference,
          payee: { partyIdType: 'MSISDN', partyId: msisdnOf(destination.phone) },
          payerMessage: momoNote(idempotencyReference),
          payeeNote: momoNote(idempotencyReference),
        },
        now,
      );
    },

    async check(transfer: Transfer, now: Date): Promise<RailOutcome> {
      if (transfer.railReference === null) {
        throw new MtnMomoError(`transfer ${transfer.id} has no MTN MoMo reference to check`);
      }
      return status('disbursement', transfer.railReference, transfer.id, now);
    },

    async collect(request: CollectionRequest, now: Date): Promise<CollectResult> {
      if (!MOMO_CURRENCIES.has(request.currency)) {
        return { accepted: false, failureCode: 'currency_not_supported' };
      }
      const amount = momoAmountOf(request.amountMinor, request.currency);
      if (amount === undefined) return { accepted: false, failureCode: 'amount_not_supported' };
      return create(
        'collection',
        request.idempotencyReference,
        {
          amount,
          currency: request.currency,
          externalId: request.idempotencyReference,
          payer: { partyIdType: 'MSISDN', partyId: msisdnOf(request.payerPhone) },
          // The payer reads payerMessage on their phone and in their history; payeeNote is ours.
          payerMessage: momoNote(request.description),
          payeeNote: momoNote(request.reference),
        },
        now,
      );
    },

    async checkCollection(reference: string, idempotencyReference: string, now: Date): Promise<RailOutcome> {
      return status('collection', reference, idempotencyReference, now);
    },

    parseCallback(callback: ArrivedCallback): CallbackReport {
      const path = callback.path.replace(/^\/+|\/+$/g, '');
      const product = Object.hasOwn(CALLBACK_PATH_PRODUCTS, path) ? CALLBACK_PATH_PRODUCTS[path] : undefined;
      if (product === undefined) {
        throw new MalformedCallbackError(
          `MTN MoMo callbacks arrive at disbursement or collection, not '${path}'`,
        );
      }
      const body = parseJson(callback.rawBody);
      if (!isRecord(body))
        throw new MalformedCallbackError('The MTN MoMo callback body is not a JSON object');
      const externalId = body.externalId;
      if (typeof externalId !== 'string' || externalId === '') {
        throw new MalformedCallbackError('The MTN MoMo callback has no externalId');
      }
      const currency = body.currency;
      if (typeof currency !== 'string' || !isCurrency(currency)) {
        throw new MalformedCallbackError(
          `The MTN MoMo callback's currency ${String(currency)} is not one we know`,
        );
      }
      const amountText = textOf(body.amount);
      const amountMinor = amountText === undefined ? undefined : minorUnitsOfMomoAmount(amountText, currency);
      if (amountMinor === undefined) {
        throw new MalformedCallbackError(
          `The MTN MoMo callback's amount ${String(body.amount)} is not a ${currency} amount`,
        );
      }
      const partnerTransactionId = textOf(body.financialTransactionId);
      const report = {
        kind: product === 'disbursement' ? ('payout' as const) : ('collection' as const),
        reference: momoReferenceId(externalId, product),
        idempotencyReference: externalId,
        ...(partnerTransactionId === undefined ? {} : { partnerTransactionId }),
        amountMinor,
      };
      switch (body.status) {
        case 'SUCCESSFUL':
          return { ...report, outcome: { kind: 'settled' } };
        case 'FAILED':
          return {
            ...report,
            outcome: { kind: 'failed', failureCode: failureCodeOfMomoReason(reasonCodeOf(body.reason)) },
          };
        case 'PENDING':
          // MTN sends callbacks once final; a PENDING one changes nothing the poller does not already know.
          return { kind: 'ignored', reason: `MTN MoMo reported ${externalId} still PENDING` };
        default:
          throw new MalformedCallbackError(
            `The MTN MoMo callback's status ${String(body.status)} is not MTN's`,
          );
      }
    },
  };
}
