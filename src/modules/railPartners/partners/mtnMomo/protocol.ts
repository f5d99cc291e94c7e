/**
 * MTN MoMo Open API as the MTN MoMo adapter speaks it (rail.ts): its products and their paths, what its
 * reason codes mean to us, the currencies its wallets hold, the X-Reference-Id derived from an idempotency
 * reference, amounts both ways, and the pure helpers that write notes and read bodies.
 */

import { createHash } from 'node:crypto';
import { isRecord } from '../../../../domain/json.ts';
import { type Currency, exponentOf, minorUnitsOfDecimal } from '../../../../domain/money.ts';

export const MTN_MOMO_PARTNER = 'mtn_momo';

/** MTN refuses a payerMessage or payeeNote longer than this. */
export const MOMO_NOTE_MAX_CHARS = 160;

export type MomoProduct = 'collection' | 'disbursement';

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
 * A payout refused before it is made because MTN's account-holder check answers that the payee is not an
 * active MoMo account holder (not registered, or not active: the check does not say which).
 */
export const MOMO_PAYEE_NOT_ACTIVE_FAILURE_CODE = 'recipient_not_active';

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

export const PATHS: Record<MomoProduct, { token: string; resource: string; party: 'payer' | 'payee' }> = {
  collection: { token: '/collection/token/', resource: '/collection/v1_0/requesttopay', party: 'payer' },
  disbursement: { token: '/disbursement/token/', resource: '/disbursement/v1_0/transfer', party: 'payee' },
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
  return text.length > MOMO_AMOUNT_TEXT_MAX_CHARS ? undefined : minorUnitsOfDecimal(text, currency);
}

/** MTN refuses some characters (an apostrophe, for one) in notes: keep letters, digits and plain marks. */
export function momoNote(text: string): string {
  return text
    .replace(/[^A-Za-z0-9 .,:_-]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MOMO_NOTE_MAX_CHARS);
}

/** MTN's reason: a string on its live platform, an ErrorReason object ({code, message}) in its API reference. */
export function reasonCodeOf(reason: unknown): string | undefined {
  if (typeof reason === 'string' && reason !== '') return reason;
  if (isRecord(reason) && typeof reason.code === 'string' && reason.code !== '') return reason.code;
  return undefined;
}

export function failureCodeOfMomoReason(reason: string | undefined): string {
  return reason !== undefined && Object.hasOwn(MOMO_REASON_FAILURE_CODES, reason)
    ? (MOMO_REASON_FAILURE_CODES[reason] as string)
    : MOMO_UNKNOWN_REASON_FAILURE_CODE;
}

/** MTN's partyId is the MSISDN's digits, country code first, without `+`. */
export function msisdnOf(phone: string): string {
  return phone.startsWith('+') ? phone.slice(1) : phone;
}
