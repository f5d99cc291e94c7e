/**
 * How the Fireblocks simulator authenticates a request, as Fireblocks' "Authenticate" page says: the
 * X-API-Key header names the API user, and `Authorization: Bearer <JWT>` carries a token signed RS256 with
 * that user's private key, whose claims are uri (the path and query), nonce (never used twice), iat, exp,
 * sub (the API key) and bodyHash (hex SHA-256 of the raw body). Each refusal answers 401 with the code
 * Fireblocks' error table gives it.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import type http from 'node:http';
import {
  type Answer,
  FIREBLOCKS_SIMULATOR_CLOCK_SKEW_SECONDS,
  FIREBLOCKS_SIMULATOR_MAX_TOKEN_LIFETIME_SECONDS,
  type FireblocksState,
  fireblocksError,
} from './state.ts';

/** Fireblocks' 401 codes (API responses and error codes page). */
export const FIREBLOCKS_AUTH_CODES = {
  invalidSignature: -1,
  missingApiKeyInJwt: -2,
  missingJwt: -3,
  wrongUri: -4,
  invalidTokenFormat: -5,
  wrongUser: -6,
  tokenNotAccepted: -7,
  expired: -10,
  futureIssuedAt: -12,
} as const;

interface Claims {
  uri?: unknown;
  nonce?: unknown;
  iat?: unknown;
  exp?: unknown;
  sub?: unknown;
  bodyHash?: unknown;
}

const refuse = (code: number, message: string): Answer => fireblocksError(401, code, message);

/** Undefined when the request is authentic, else the 401 answer. */
export function authenticate(
  state: FireblocksState,
  pathWithQuery: string,
  headers: http.IncomingHttpHeaders,
  rawBody: string,
  nowSeconds: number,
): Answer | undefined {
  const codes = FIREBLOCKS_AUTH_CODES;
  const authorization = headers.authorization;
  if (typeof authorization !== 'string' || !authorization.startsWith('Bearer ')) {
    return refuse(codes.missingJwt, 'Unauthorized: JWT is missing');
  }
  const token = authorization.slice('Bearer '.length).trim();
  const parts = token.split('.');
  const header = parts.length === 3 ? decodeJson(parts[0] ?? '') : undefined;
  const claims = parts.length === 3 ? (decodeJson(parts[1] ?? '') as Claims | undefined) : undefined;
  if (header === undefined || claims === undefined || (header as { alg?: unknown }).alg !== 'RS256') {
    return refuse(codes.invalidTokenFormat, 'Unauthorized: Invalid token format');
  }
  const apiKey = headers['x-api-key'];
  const publicKey = typeof apiKey === 'string' ? state.apiUsers.get(apiKey) : undefined;
  if (publicKey === undefined) return refuse(codes.tokenNotAccepted, 'Unauthorized: Token was not accepted');
  if (typeof claims.sub !== 'string' || claims.sub === '') {
    return refuse(codes.missingApiKeyInJwt, 'Missing API key in the JWT');
  }
  if (claims.sub !== apiKey) return refuse(codes.wrongUser, 'Wrong user in the JWT');
  const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
  const signature = Buffer.from(parts[2] ?? '', 'base64url');
  if (!verify('RSA-SHA256', signed, createPublicKey(publicKey), signature)) {
    return refuse(codes.invalidSignature, 'Invalid signature');
  }
  if (claims.uri !== pathWithQuery) return refuse(codes.wrongUri, 'Wrong URL in the JWT');
  const bodyHash = createHash('sha256').update(rawBody).digest('hex');
  if (claims.bodyHash !== bodyHash) return refuse(codes.invalidSignature, 'Invalid signature: body hash');
  return checkTimes(state, claims, nowSeconds);
}

/** The token's times and nonce: not expired, not issued in the future, not too long-lived, not replayed. */
function checkTimes(state: FireblocksState, claims: Claims, nowSeconds: number): Answer | undefined {
  const codes = FIREBLOCKS_AUTH_CODES;
  const { iat, exp, nonce } = claims;
  if (typeof iat !== 'number' || typeof exp !== 'number') {
    return refuse(codes.invalidTokenFormat, 'Unauthorized: Invalid token format');
  }
  if (exp <= nowSeconds) return refuse(codes.expired, 'The request has expired');
  if (iat > nowSeconds + FIREBLOCKS_SIMULATOR_CLOCK_SKEW_SECONDS) {
    return refuse(codes.futureIssuedAt, 'The request is with a future issuance timestamp (iat)');
  }
  if (exp - iat > FIREBLOCKS_SIMULATOR_MAX_TOKEN_LIFETIME_SECONDS) {
    return refuse(codes.expired, 'The request has expired: exp is too far after iat');
  }
  if ((typeof nonce !== 'string' && typeof nonce !== 'number') || state.nonces.has(String(nonce))) {
    return refuse(codes.tokenNotAccepted, 'Unauthorized: Token was not accepted (nonce)');
  }
  state.nonces.add(String(nonce));
  return undefined;
}

function decodeJson(segment: string): object | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}
