/**
 * One M-Pesa adapter's connection to Daraja (rail.ts): its configuration, the errors a call throws, the
 * OAuth access token it caches, and the requests every operation sends through the outbound address guard.
 */

import { constants, publicEncrypt, X509Certificate } from 'node:crypto';
import type { OutboundFetch, OutboundRequestInit } from '../../../../outbound/guard.ts';
import type { CallbackTarget } from '../../../../rails/partner.ts';
import { exchangeWithin } from '../exchangeWithin.ts';
import {
  type DarajaAnswer,
  describeError,
  isTokenRefusal,
  PATHS,
  parseObject,
  stringField,
} from './protocol.ts';

/** How long one HTTP request to Daraja may take before it is abandoned (and the call throws). */
export const DARAJA_REQUEST_TIMEOUT_MS = 30_000;
/** A cached token is replaced this long before Daraja says it expires, so none expires in flight. */
export const DARAJA_TOKEN_REFRESH_MARGIN_MS = 60_000;

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
  /**
   * The initiator's password encrypted with Safaricom's public certificate, base64: the pre-encrypted
   * credential. Not needed when `initiatorPassword` and `certificate` are given (they take precedence).
   */
  securityCredential?: string;
  /** The initiator's password, to be encrypted here with `certificate`. */
  initiatorPassword?: string;
  /** Safaricom's public certificate (PEM, X.509) for the environment `baseUrl` names. */
  certificate?: string;
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

/** What one adapter instance holds: its settings, where its callbacks go, and the token it caches. */
export interface DarajaConnection {
  config: MpesaDarajaConfig;
  /** Daraja's base URL without a trailing slash. */
  baseUrl: string;
  /** The organization's callback base URL without a trailing slash. */
  callbackBase: string;
  timeoutMs: number;
  /** The STK BusinessShortCode: the configured one, or the B2C shortcode. */
  stkShortCode: string;
  token: { value: string; refreshAt: number } | undefined;
  /** The token request under way, so that calls at once share one token. */
  tokenRequest: Promise<string> | undefined;
  /** The SecurityCredential, once made (encrypting once is enough: any valid encryption is accepted). */
  securityCredential: string | undefined;
}

export function darajaConnection(config: MpesaDarajaConfig, callbacks: CallbackTarget): DarajaConnection {
  return {
    config,
    baseUrl: config.baseUrl.replace(/\/+$/, ''),
    callbackBase: callbacks.baseUrl.replace(/\/+$/, ''),
    timeoutMs: config.requestTimeoutMs ?? DARAJA_REQUEST_TIMEOUT_MS,
    stkShortCode: config.stkShortCode ?? config.shortCode,
    token: undefined,
    tokenRequest: undefined,
    securityCredential: undefined,
  };
}

/**
 * The request's SecurityCredential: the initiator's password encrypted with the configured certificate
 * (RSA, PKCS #1 v1.5 padding, base64, as Safaricom documents), or else the pre-encrypted one.
 */
export function securityCredential(connection: DarajaConnection): string {
  if (connection.securityCredential !== undefined) return connection.securityCredential;
  const { initiatorPassword, certificate, securityCredential: preEncrypted } = connection.config;
  let credential = preEncrypted ?? '';
  if (initiatorPassword && certificate) {
    let key: X509Certificate['publicKey'];
    try {
      key = new X509Certificate(certificate).publicKey;
    } catch {
      throw new DarajaAuthError('The configured Daraja certificate is not a PEM X.509 certificate');
    }
    const encrypted = publicEncrypt(
      { key, padding: constants.RSA_PKCS1_PADDING },
      Buffer.from(initiatorPassword, 'utf8'),
    );
    credential = encrypted.toString('base64');
  }
  connection.securityCredential = credential;
  return credential;
}

async function send(
  connection: DarajaConnection,
  path: string,
  init: OutboundRequestInit,
): Promise<DarajaAnswer> {
  const { status, text } = await exchangeWithin(
    connection.config.fetch,
    `${connection.baseUrl}${path}`,
    init,
    connection.timeoutMs,
    (timedOut, error) =>
      timedOut
        ? new DarajaTimeoutError(`Daraja did not answer ${path} within ${connection.timeoutMs} ms`)
        : new DarajaUnavailableError(`Daraja could not be reached for ${path}: ${String(error)}`),
  );
  return { status, body: parseObject(text) };
}

async function fetchToken(connection: DarajaConnection): Promise<string> {
  const basic = Buffer.from(
    `${connection.config.consumerKey}:${connection.config.consumerSecret}`,
    'utf8',
  ).toString('base64');
  const answer = await send(connection, PATHS.oauth, {
    method: 'GET',
    headers: { authorization: `Basic ${basic}` },
  });
  const accessToken = answer.body?.access_token;
  const expiresInSeconds = Number(answer.body?.expires_in);
  if (answer.status === 200 && typeof accessToken === 'string' && Number.isFinite(expiresInSeconds)) {
    connection.token = {
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
async function accessToken(connection: DarajaConnection): Promise<string> {
  const token = connection.token;
  if (token && Date.now() < token.refreshAt) return token.value;
  connection.tokenRequest ??= fetchToken(connection).finally(() => {
    connection.tokenRequest = undefined;
  });
  return connection.tokenRequest;
}

/** Makes sure a token is at hand before a request that must not be sent twice (b2b.ts). */
export async function prepareToken(connection: DarajaConnection): Promise<void> {
  await accessToken(connection);
}

/** POSTs with a bearer token; a refused token is replaced and the request sent once more. */
export async function post(
  connection: DarajaConnection,
  path: string,
  payload: Record<string, unknown>,
): Promise<DarajaAnswer> {
  for (let attempt = 1; ; attempt++) {
    const bearer = await accessToken(connection);
    const answer = await send(connection, path, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify(payload),
    });
    if (!isTokenRefusal(answer)) return answer;
    if (connection.token?.value === bearer) connection.token = undefined;
    if (attempt === 2)
      throw new DarajaAuthError(`Daraja refused a fresh access token${describeError(answer)}`);
  }
}

/** Throws for what a retry may fix (5xx) and for what this adapter cannot read. */
export function unexpected(path: string, answer: DarajaAnswer): never {
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
