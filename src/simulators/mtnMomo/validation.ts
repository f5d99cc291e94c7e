/**
 * How the MoMo simulator checks a create request (request-to-pay or transfer) as MTN does: the X-Reference-Id,
 * the X-Callback-Url, and the body's amount, currency, externalId, notes and party, each refused with MTN's
 * status and body, in that order.
 */
import type http from 'node:http';
import { isRecord } from '../../domain/json.ts';
import type { Answer, MomoConfig, MomoProductApi, MomoResource } from './state.ts';

/** MTN refuses a payerMessage or payeeNote longer than this. */
export const MOMO_NOTE_MAX_CHARS = 160;
/**
 * The characters MTN's common-errors page names as refused in a request body: "unsupported special
 * characters ... for example an apostrophe". The apostrophe is the only one it names, so the only one refused.
 */
export const MOMO_REFUSED_NOTE_CHARACTERS = /'/;

export const UUID_V4_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MSISDN_PATTERN = /^\d{8,15}$/;
/** An email address as the reference's EMAIL party carries it: one @, no spaces, a dotted domain. */
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** The longest EMAIL partyId read (RFC 5321's path limit). */
const EMAIL_MAX_CHARS = 254;

/**
 * The party id types MTN's reference lists for a payer or payee (Party.partyIdType), each with the form its
 * partyId takes: an MSISDN with its country code, an email address, or a party code (a UUID, as the sandbox's
 * party codes are).
 */
export const MOMO_PARTY_ID_TYPES: Readonly<Record<string, (partyId: string) => boolean>> = {
  MSISDN: (partyId) => MSISDN_PATTERN.test(partyId),
  EMAIL: (partyId) => partyId.length <= EMAIL_MAX_CHARS && EMAIL_PATTERN.test(partyId),
  PARTY_CODE: (partyId) => UUID_PATTERN.test(partyId),
};
const AMOUNT_PATTERN = /^\d+(?:\.\d+)?$/;
const CURRENCY_PATTERN = /^[A-Z]{3}$/;

/** A valid create request, ready to store. */
export interface CheckedCreate {
  referenceId: string;
  resource: MomoResource;
  callbackUrl?: string;
}

/** A check's refusal, or what it found. */
type Checked<T> = { refusal: Answer } | T;

/** Checks a create request's headers and body as MTN does; returns a refusal, or the request to store. */
export function validateCreate(
  config: MomoConfig,
  api: MomoProductApi,
  headers: http.IncomingHttpHeaders,
  text: string,
  callbackHost: string | undefined,
): Answer | CheckedCreate {
  const referenceId = headers['x-reference-id'];
  if (typeof referenceId !== 'string' || !UUID_V4_PATTERN.test(referenceId)) {
    return { status: 400, body: { message: 'X-Reference-Id must be a UUID version 4.' } };
  }
  const callback = checkCallbackUrl(callbackHost, headers['x-callback-url']);
  if ('refusal' in callback) return callback.refusal;
  const parsed = parseBody(text);
  if ('refusal' in parsed) return parsed.refusal;
  const fields = checkFields(config, parsed.body);
  if ('refusal' in fields) return fields.refusal;
  const party = checkParty(api, parsed.body);
  if ('refusal' in party) return party.refusal;
  const { amount, currency, externalId, payerMessage, payeeNote } = fields;
  const resource: MomoResource = {
    amount,
    currency,
    externalId,
    [api.partyKey]: { partyIdType: party.partyIdType, partyId: party.partyId },
    ...(typeof payerMessage === 'string' ? { payerMessage } : {}),
    ...(typeof payeeNote === 'string' ? { payeeNote } : {}),
    status: 'PENDING',
  };
  const { callbackUrl } = callback;
  return { referenceId, resource, ...(callbackUrl === undefined ? {} : { callbackUrl }) };
}

/**
 * The host a providerCallbackHost names: MTN's pages ask for a host name, and its sandbox also takes a URL
 * (its own examples register `http://localhost:8000/callback`), whose host is then the one.
 */
export function callbackHostOf(providerCallbackHost: string): string {
  try {
    return new URL(providerCallbackHost).hostname.toLowerCase();
  } catch {
    return providerCallbackHost.trim().toLowerCase();
  }
}

/** An absent X-Callback-Url is no callback; a present one must be absolute http(s), on the registered host. */
function checkCallbackUrl(
  callbackHost: string | undefined,
  callbackHeader: string | string[] | undefined,
): Checked<{ callbackUrl: string | undefined }> {
  if (callbackHeader === undefined) return { callbackUrl: undefined };
  const value = Array.isArray(callbackHeader) ? callbackHeader[0] : callbackHeader;
  let parsed: URL | undefined;
  try {
    parsed = value ? new URL(value) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || !/^https?:$/.test(parsed.protocol)) {
    return { refusal: { status: 400, body: { message: 'X-Callback-Url is not an absolute http(s) URL.' } } };
  }
  if (callbackHost !== undefined && parsed.hostname.toLowerCase() !== callbackHost) {
    return {
      refusal: {
        status: 500,
        body: {
          code: 'INVALID_CALLBACK_URL_HOST',
          message: 'Callback URL with different host name than configured for the API user.',
        },
      },
    };
  }
  return { callbackUrl: parsed.toString() };
}

function parseBody(text: string): Checked<{ body: Record<string, unknown> }> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { refusal: { status: 400, body: { message: 'The request body is not JSON.' } } };
  }
  if (!isRecord(body))
    return { refusal: { status: 400, body: { message: 'The request body is not an object.' } } };
  return { body };
}

/** The amount, currency, externalId and notes every create request carries. */
function checkFields(
  config: MomoConfig,
  body: Record<string, unknown>,
): Checked<{
  amount: string;
  currency: string;
  externalId: string;
  payerMessage: unknown;
  payeeNote: unknown;
}> {
  const { amount, currency, externalId, payerMessage, payeeNote } = body;
  if (typeof amount !== 'string' || !AMOUNT_PATTERN.test(amount) || !/[1-9]/.test(amount)) {
    return { refusal: { status: 400, body: { message: 'amount must be a positive decimal string.' } } };
  }
  if (typeof currency !== 'string' || !CURRENCY_PATTERN.test(currency)) {
    return { refusal: { status: 400, body: { message: 'currency must be an ISO 4217 code.' } } };
  }
  if (config.currencies !== undefined && !config.currencies.includes(currency)) {
    return {
      refusal: {
        status: 500,
        body: { code: 'INVALID_CURRENCY', message: 'Currency not supported on the requested account.' },
      },
    };
  }
  if (typeof externalId !== 'string' || externalId === '') {
    return { refusal: { status: 400, body: { message: 'externalId is required.' } } };
  }
  for (const [name, value] of [
    ['payerMessage', payerMessage],
    ['payeeNote', payeeNote],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value.length > MOMO_NOTE_MAX_CHARS)) {
      return {
        refusal: {
          status: 400,
          body: { message: `${name} must be a string of at most ${MOMO_NOTE_MAX_CHARS} characters.` },
        },
      };
    }
    if (typeof value === 'string' && MOMO_REFUSED_NOTE_CHARACTERS.test(value)) {
      return { refusal: { status: 400, body: { message: `${name} has a character MTN does not support.` } } };
    }
  }
  return { amount, currency, externalId, payerMessage, payeeNote };
}

/** The payer (request-to-pay) or payee (transfer): a party of a type MTN lists, its id in that type's form. */
function checkParty(
  api: MomoProductApi,
  body: Record<string, unknown>,
): Checked<{ partyIdType: string; partyId: string }> {
  const party = body[api.partyKey];
  const types = Object.keys(MOMO_PARTY_ID_TYPES).join(', ');
  const partyIdType = isRecord(party) ? party.partyIdType : undefined;
  if (
    !isRecord(party) ||
    typeof partyIdType !== 'string' ||
    !Object.hasOwn(MOMO_PARTY_ID_TYPES, partyIdType) ||
    typeof party.partyId !== 'string'
  ) {
    return {
      refusal: {
        status: 400,
        body: { message: `${api.partyKey} must be {"partyIdType": one of ${types}, "partyId"}.` },
      },
    };
  }
  if (!MOMO_PARTY_ID_TYPES[partyIdType]?.(party.partyId)) {
    // MTN names this case under the not-found reasons: "MSISDN format must include country code".
    const message =
      partyIdType === 'MSISDN' ? 'MSISDN format must include country code.' : `Not a valid ${partyIdType}.`;
    return { refusal: { status: 400, body: { code: api.partyNotFound, message } } };
  }
  return { partyIdType, partyId: party.partyId };
}
