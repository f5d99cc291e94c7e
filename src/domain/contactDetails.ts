/**
 * How a person is reached, as every capability takes it: an email (the key members are found by, an
 * organization's contacts, a customer's) and a phone number in international (E.164) format.
 */
import { validationError } from './errors.ts';

/** The longest email address a mailbox can have (RFC 5321's path limit less the brackets). */
export const EMAIL_CHARS_MAX = 254;
/** E.164: a plus, a country code that does not start with 0, at most 15 digits in all. */
export const PHONE_PATTERN = '^\\+[1-9][0-9]{6,14}$';

const EMAIL_PATTERN =
  /^[^\s@"(),:;<>[\\\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

/** An email as members are keyed by it: trimmed and lower-cased, or a 400 naming `param`. */
export function normaliseEmail(raw: string, param = 'email'): string {
  const email = raw.trim().toLowerCase();
  if (email.length === 0 || email.length > EMAIL_CHARS_MAX || !EMAIL_PATTERN.test(email)) {
    throw validationError(
      param,
      `${param} must be an email address such as ana@example.com`,
      'invalid_format',
    );
  }
  return email;
}
