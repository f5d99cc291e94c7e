/** API key format, environments and scopes. Keys are high-entropy, so a SHA-256 digest is a safe at-rest form. */
import { createHash } from 'node:crypto';

/**
 * A deployment serves one environment. `pilot` behaves as production (real rails, no simulation, no seed)
 * with volume caps per organization (src/domain/decisions/pilotCaps.ts): a first launch with bounded exposure.
 */
export const ENVIRONMENTS = ['sandbox', 'pilot', 'production'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export const API_KEY_PREFIX_BY_ENVIRONMENT: Record<Environment, string> = {
  sandbox: 'sk_sandbox_',
  pilot: 'sk_pilot_',
  production: 'sk_live_',
};

/** Pilot and production: real money, keys issued only past the launch gates (docs/GOING-LIVE.md). */
export function isLiveEnvironment(environment: Environment): boolean {
  return environment !== 'sandbox';
}

export const API_KEY_SECRET_CHARS = 32;
export const API_KEY_SECRET_CHARS_MIN = 16;
export const API_KEY_SECRET_CHARS_MAX = 128;
/** Characters of a key kept in clear for display ("sk_sandbox_Ab3d…"). */
export const API_KEY_DISPLAY_CHARS = 15;

/**
 * `read` and `write` are an integrator's; `compliance` is an operator's (reviews, alerts, freezes, risk
 * overrides, AML rules, evidence), so that an integrator's ordinary key cannot clear its own case; `admin`
 * manages the organization's members and policies.
 */
export const SCOPES = ['read', 'write', 'compliance', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];
/** What a key gets when no scopes are named: an integrator's. Operator scopes are only granted by name. */
export const DEFAULT_SCOPES: readonly Scope[] = ['read', 'write'];

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Builds a key from caller-supplied random bytes (one byte per character; modulo bias is negligible here). */
export function formatApiKey(environment: Environment, random: Uint8Array): string {
  let secret = '';
  for (let i = 0; i < API_KEY_SECRET_CHARS; i++) secret += BASE62.charAt((random[i] ?? 0) % BASE62.length);
  return API_KEY_PREFIX_BY_ENVIRONMENT[environment] + secret;
}

/** What is wrong with a malformed key: a stable code and a sentence that never quotes the key. */
export interface ApiKeyFormatFault {
  code: 'key_prefix' | 'key_length' | 'key_characters';
  message: string;
}

export type ParsedApiKey = { ok: true; environment: Environment } | { ok: false; fault: ApiKeyFormatFault };

const API_KEY_SECRET_ALPHABET = /^[A-Za-z0-9_-]*$/;

/** A key's environment (by its prefix) when it has an API key's shape; else precisely what is wrong. */
export function parseApiKey(key: string): ParsedApiKey {
  const environment = ENVIRONMENTS.find((e) => key.startsWith(API_KEY_PREFIX_BY_ENVIRONMENT[e]));
  if (environment === undefined) {
    const prefixes = ENVIRONMENTS.map((e) => API_KEY_PREFIX_BY_ENVIRONMENT[e]).join(', ');
    return fault('key_prefix', `An API key starts with ${prefixes}; the key sent starts with none of them.`);
  }
  const prefix = API_KEY_PREFIX_BY_ENVIRONMENT[environment];
  const secret = key.slice(prefix.length);
  if (secret.length < API_KEY_SECRET_CHARS_MIN || secret.length > API_KEY_SECRET_CHARS_MAX) {
    return fault(
      'key_length',
      `After '${prefix}' an API key has ${API_KEY_SECRET_CHARS_MIN} to ${API_KEY_SECRET_CHARS_MAX} characters; the key sent has ${secret.length}.`,
    );
  }
  if (!API_KEY_SECRET_ALPHABET.test(secret)) {
    return fault(
      'key_characters',
      `After '${prefix}' an API key has only the characters A-Z, a-z, 0-9, '_' and '-'; the key sent has others.`,
    );
  }
  return { ok: true, environment };
}

function fault(code: ApiKeyFormatFault['code'], message: string): ParsedApiKey {
  return { ok: false, fault: { code, message } };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function displayPrefix(key: string): string {
  return key.slice(0, API_KEY_DISPLAY_CHARS);
}

/** `write`, `compliance` and `admin` imply `read`: a key that may change or judge a resource may also see it. */
export function grantsScope(granted: readonly string[], needed: Scope): boolean {
  return (
    granted.includes(needed) ||
    (needed === 'read' &&
      (granted.includes('write') || granted.includes('compliance') || granted.includes('admin')))
  );
}
