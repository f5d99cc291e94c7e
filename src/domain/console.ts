/**
 * The operator console's sign-in rules, pure: token formats and digests, the CSRF token a session's forms
 * carry, password rules, and when a session has expired. Time and random bytes are arguments.
 */
import { createHash, createHmac } from 'node:crypto';
import { sameText } from './constantTime.ts';
import { validationError } from './errors.ts';

/** A session ends after this long without a request (OWASP's guidance for sensitive applications). */
export const CONSOLE_SESSION_IDLE_MINUTES = 30;
/** A session ends this long after sign-in, however busy: the member signs in again. */
export const CONSOLE_SESSION_LIFETIME_HOURS = 12;
/**
 * A session's last-seen time is written at most this often, so browsing is not a write per page; idle
 * expiry is therefore exact to within this interval.
 */
export const CONSOLE_SESSION_TOUCH_INTERVAL_SECONDS = 60;
/** How long a sign-in link printed by `mkoba console-link` stays usable (once). */
export const CONSOLE_SIGN_IN_LINK_TTL_MINUTES = 15;
/** Random bytes in a session token or a sign-in link token (256 bits). */
export const CONSOLE_TOKEN_BYTES = 32;
/** NIST SP 800-63B: at least 8 characters for a chosen secret; the console asks for 12. */
export const CONSOLE_PASSWORD_CHARS_MIN = 12;
/** A bound on what is hashed, so a huge password cannot make hashing a denial of service. */
export const CONSOLE_PASSWORD_CHARS_MAX = 256;

/** The session cookie: `__Host-` binds it to this host, path / and Secure, where the console runs on HTTPS. */
export const CONSOLE_SESSION_COOKIE_SECURE = '__Host-mkoba_console';
/** The same cookie on plain-http localhost, where a browser refuses both `Secure` and the `__Host-` prefix. */
export const CONSOLE_SESSION_COOKIE_PLAIN = 'mkoba_console';

export const CONSOLE_SIGN_IN_METHODS = ['password', 'link'] as const;
export type ConsoleSignInMethod = (typeof CONSOLE_SIGN_IN_METHODS)[number];

export const CONSOLE_SESSION_END_REASONS = ['signed_out', 'idle', 'lifetime', 'member_removed'] as const;
export type ConsoleSessionEndReason = (typeof CONSOLE_SESSION_END_REASONS)[number];

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** A token as sent to the browser: base64url of CONSOLE_TOKEN_BYTES random bytes. */
export function formatConsoleToken(random: Uint8Array): string {
  if (random.length < CONSOLE_TOKEN_BYTES) throw new Error('a console token needs 32 random bytes');
  return Buffer.from(random.subarray(0, CONSOLE_TOKEN_BYTES)).toString('base64url');
}

export function isConsoleToken(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}

/** Tokens are 256 random bits, so a SHA-256 digest is a safe stored form (as for API keys). */
export function hashConsoleToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The CSRF token of a session's forms: an HMAC of a fixed label under the session token. Only someone
 * holding the (HTTP-only) session cookie can compute it, and nothing more needs storing.
 */
export function csrfTokenOf(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('mkoba console csrf v1').digest('base64url');
}

/** Compares a submitted CSRF token with the session's in constant time. */
export function csrfTokenMatches(sessionToken: string, submitted: unknown): boolean {
  if (typeof submitted !== 'string') return false;
  return sameText(submitted, csrfTokenOf(sessionToken));
}

export interface SessionTimes {
  createdAt: Date;
  lastSeenAt: Date;
}

/** Why a live session must end now, or null while it may go on. */
export function sessionExpiry(session: SessionTimes, now: Date): 'idle' | 'lifetime' | null {
  if (now.getTime() - session.createdAt.getTime() >= CONSOLE_SESSION_LIFETIME_HOURS * 3_600_000) {
    return 'lifetime';
  }
  if (now.getTime() - session.lastSeenAt.getTime() >= CONSOLE_SESSION_IDLE_MINUTES * 60_000) return 'idle';
  return null;
}

/** Whether a request should move the session's last-seen time (see CONSOLE_SESSION_TOUCH_INTERVAL_SECONDS). */
export function sessionNeedsTouch(session: SessionTimes, now: Date): boolean {
  return now.getTime() - session.lastSeenAt.getTime() >= CONSOLE_SESSION_TOUCH_INTERVAL_SECONDS * 1000;
}

/** A new password: long enough, not absurdly long. Anything else (spaces, any script) is the member's choice. */
export function checkNewPassword(password: string, param = 'password'): string {
  const length = [...password].length;
  if (length < CONSOLE_PASSWORD_CHARS_MIN || length > CONSOLE_PASSWORD_CHARS_MAX) {
    throw validationError(
      param,
      `The password must be ${CONSOLE_PASSWORD_CHARS_MIN} to ${CONSOLE_PASSWORD_CHARS_MAX} characters.`,
      'out_of_range',
    );
  }
  return password;
}
