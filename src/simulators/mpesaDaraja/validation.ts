/**
 * How the Daraja simulator checks request fields as Daraja does: number and shortcode shapes, its published
 * limits on free text, whole-shilling amounts, and callback URLs.
 */

/** Safaricom numbers: 2547XXXXXXXX and 2541XXXXXXXX. */
export const SAFARICOM_MSISDN = /^254[17]\d{8}$/;
export const SHORTCODE = /^\d{5,7}$/;
export const STK_TIMESTAMP = /^\d{14}$/;
/** Daraja's published limits on free text (B2C Remarks/Occasion: 100; STK AccountReference: 12, TransactionDesc: 13). */
export const REMARKS_MAX_CHARS = 100;
/** B2C Remarks: the published page asks for 2 to 100 characters. */
export const B2C_REMARKS_MIN_CHARS = 2;
export const ACCOUNT_REFERENCE_MAX_CHARS = 12;
/** B2B AccountReference (the paybill account number): at most 13 characters. */
export const B2B_ACCOUNT_REFERENCE_MAX_CHARS = 13;
/** Identifier types (B2B SenderIdentifierType/RecieverIdentifierType): 4 an organization shortcode, 2 a till. */
export const SHORTCODE_IDENTIFIER_TYPE = '4';
export const TILL_IDENTIFIER_TYPE = '2';
export const TRANSACTION_DESC_MAX_CHARS = 13;

export function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

export function boundedText(value: unknown, maxChars: number, allowEmpty = false): boolean {
  return typeof value === 'string' && (allowEmpty || value.trim() !== '') && value.length <= maxChars;
}

/** Daraja amounts are whole shillings, sent as a number or a numeric string ("10"). */
export function wholeAmount(value: unknown): number | null {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : '';
  if (!/^\d+$/.test(text)) return null;
  const amount = Number(text);
  return amount >= 1 && Number.isSafeInteger(amount) ? amount : null;
}

/** B2C and Reversal Remarks: text of 2 to 100 characters. */
export function b2cRemarksValid(value: unknown): boolean {
  return boundedText(value, REMARKS_MAX_CHARS) && String(value).trim().length >= B2C_REMARKS_MIN_CHARS;
}

/** Absent, or text of at most `maxChars` (empty allowed): an optional free-text field such as Occasion. */
export function optionalText(value: unknown, maxChars: number): boolean {
  return value === undefined || boundedText(value, maxChars, true);
}

export function absoluteUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
