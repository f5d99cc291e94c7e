/**
 * API keys' format: each environment's prefix, the secret's characters, parsing, and the digest kept at rest
 * (keys are high-entropy, so a SHA-256 digest is a safe at-rest form). Environments and scopes: access.ts.
 */
import { createHash } from 'node:crypto';
import { ENVIRONMENTS, type Environment } from './access.ts';

export const API_KEY_PREFIX_BY_ENVIRONMENT: Record<Environment, string> = {
  sandbox: 'sk_sandbox_',
  pilot: 'sk_pilot_',
  production: 'sk_live_',
};

export const API_KEY_SECRET_CHARS = 32;
export const API_KEY_SECRET_CHARS_MIN = 16;
export const API_KEY_SECRET_CHARS_MAX = 128;
/** Characters of a key kept in clear for display ("sk_sandbox_Ab3d…"). */
export const API_KEY_DISPLAY_CHARS = 15;

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
