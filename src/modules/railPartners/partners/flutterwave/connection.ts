/**
 * One Flutterwave adapter's connection (rail.ts): its configuration, the error a call throws, the v3 calls
 * it makes through the outbound address guard, and the conversions between Mkoba's integer minor units and
 * Flutterwave's major-unit JSON numbers (done on the text, never through a float).
 */

import { isRecord, parseJson } from '../../../../domain/json.ts';
import { type Currency, minorUnitsOfDecimal } from '../../../../domain/money.ts';
import type { OutboundFetch } from '../../../../outbound/guard.ts';
import { exchangeWithin } from '../exchangeWithin.ts';

export const FLUTTERWAVE_PARTNER = 'flutterwave';
/**
 * One HTTP request's time limit. A payout makes at most three requests (resolve, POST, and a GET by reference
 * after a refused repeat), so it ends within the rail worker's 20-second RAIL_CALL_TIMEOUT_MS.
 */
export const FLUTTERWAVE_REQUEST_TIMEOUT_MS = 5_000;
/** Characters of an amount's text at most, before it is read (a longer one is no amount of ours). */
const AMOUNT_TEXT_MAX_CHARS = 32;

export interface FlutterwaveConfig {
  /** The outbound address guard's fetch (src/outbound/guard.ts). */
  fetch: OutboundFetch;
  /** `https://api.flutterwave.com` in production, or a simulator's URL (without `/v3`). */
  baseUrl: string;
  /** The secret key: `Authorization: Bearer …` on every call. */
  secretKey: string;
  /** The secret hash set on Flutterwave's dashboard: what verifies a webhook. */
  secretHash: string;
  /** FLUTTERWAVE_REQUEST_TIMEOUT_MS unless given. */
  requestTimeoutMs?: number;
  /** The sender an M-Pesa Kenya transfer names in its `meta` (Flutterwave requires it there). */
  sender?: { name: string; country: string; mobileNumber: string };
}

/** A call to Flutterwave that did not give a usable answer: the worker retries, the message says why. */
export class FlutterwaveError extends Error {
  override name = 'FlutterwaveError';
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Flutterwave's answer: the HTTP status and its `{status, message, data}` envelope, as far as it has one. */
export interface FlutterwaveAnswer {
  status: number;
  ok: boolean;
  message: string;
  data: unknown;
  /** The envelope's `meta`, where a list has one. */
  meta: unknown;
}

/** One v3 call; throws FlutterwaveError when nothing readable comes back in time. */
export async function flutterwaveCall(
  config: FlutterwaveConfig,
  method: 'GET' | 'POST',
  path: string,
  body?: string,
): Promise<FlutterwaveAnswer> {
  const timeoutMs = config.requestTimeoutMs ?? FLUTTERWAVE_REQUEST_TIMEOUT_MS;
  const { status, text } = await exchangeWithin(
    config.fetch,
    `${config.baseUrl.replace(/\/+$/, '')}${path}`,
    {
      method,
      headers: {
        Authorization: `Bearer ${config.secretKey}`,
        Accept: 'application/json',
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body }),
    },
    timeoutMs,
    (timedOut, error) =>
      new FlutterwaveError(
        timedOut
          ? `Flutterwave did not answer ${method} ${path} within ${timeoutMs} ms`
          : `Flutterwave could not be reached for ${method} ${path}: ${error instanceof Error ? error.message : String(error)}`,
      ),
  );
  const parsed = parseJson(text);
  const envelope = isRecord(parsed) ? parsed : {};
  return {
    status,
    ok: status >= 200 && status < 300 && envelope.status === 'success',
    message: typeof envelope.message === 'string' ? envelope.message : '',
    data: envelope.data,
    meta: envelope.meta,
  };
}

/** Flutterwave's amount (a JSON number or a decimal string) in minor units; undefined when it is not one. */
export function minorUnitsOfFlutterwaveAmount(value: unknown, currency: Currency): bigint | undefined {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : undefined;
  if (text === undefined || text.length > AMOUNT_TEXT_MAX_CHARS) return undefined;
  return minorUnitsOfDecimal(text, currency);
}
