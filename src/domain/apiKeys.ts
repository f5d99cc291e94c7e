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

const KEY_PATTERN = new RegExp(
  `^sk_(sandbox|pilot|live)_[A-Za-z0-9_-]{${API_KEY_SECRET_CHARS_MIN},${API_KEY_SECRET_CHARS_MAX}}$`,
);
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Builds a key from caller-supplied random bytes (one byte per character; modulo bias is negligible here). */
export function formatApiKey(environment: Environment, random: Uint8Array): string {
  let secret = '';
  for (let i = 0; i < API_KEY_SECRET_CHARS; i++) secret += BASE62.charAt((random[i] ?? 0) % BASE62.length);
  return API_KEY_PREFIX_BY_ENVIRONMENT[environment] + secret;
}

export type ParsedApiKey = { ok: true; environment: Environment } | { ok: false };

export function parseApiKey(key: string): ParsedApiKey {
  const match = KEY_PATTERN.exec(key);
  if (!match) return { ok: false };
  return {
    ok: true,
    environment: match[1] === 'live' ? 'production' : match[1] === 'pilot' ? 'pilot' : 'sandbox',
  };
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
