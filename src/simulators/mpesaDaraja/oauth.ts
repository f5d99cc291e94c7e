/**
 * Daraja's OAuth API: a consumer key and secret (HTTP Basic) buy an hour's access token, and each M-Pesa API
 * refuses a missing, unknown or expired token with its own error body. A new token invalidates the app's
 * previous one (Daraja's authorization FAQ), so clients sharing one app's keys must share its token.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { ApiAnswer, type DarajaState, errorBody } from './state.ts';

export const OAUTH_PATH = '/oauth/v1/generate';

/** GET /oauth/v1/generate?grant_type=client_credentials */
export function generateToken(
  state: DarajaState,
  request: http.IncomingMessage,
  query: URLSearchParams,
): ApiAnswer {
  const { config } = state;
  if (query.get('grant_type') !== 'client_credentials') {
    return new ApiAnswer(400, errorBody('400.008.02', 'Invalid grant type passed'));
  }
  const header = request.headers.authorization ?? '';
  const match = /^Basic\s+(\S+)$/i.exec(header);
  if (!match?.[1]) return new ApiAnswer(400, errorBody('400.008.01', 'Invalid authentication type passed'));
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const separator = decoded.indexOf(':');
  const key = decoded.slice(0, separator);
  const secret = decoded.slice(separator + 1);
  if (separator < 0 || key !== config.consumerKey || secret !== config.consumerSecret) {
    // Assumed: Daraja's documented tables list no code for a wrong key or secret; it answers 400.
    return new ApiAnswer(400, errorBody('400.008.01', 'Invalid Authentication passed'));
  }
  const token = randomBytes(21).toString('base64url');
  // One app (one key and secret) per simulator: its new token replaces every earlier one.
  state.tokens.clear();
  state.tokens.set(token, state.now().getTime() + config.tokenLifetimeSeconds * 1000);
  return new ApiAnswer(200, { access_token: token, expires_in: String(config.tokenLifetimeSeconds) });
}

/** The token error Daraja gives each API family: B2C and Transaction Status, or M-Pesa Express. */
export function tokenRefusal(
  state: DarajaState,
  request: http.IncomingMessage,
  family: 'result_apis' | 'express',
): ApiAnswer | null {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
  const token = match?.[1];
  const expiresAt = token === undefined ? undefined : state.tokens.get(token);
  if (expiresAt !== undefined && expiresAt > state.now().getTime()) return null;
  if (token !== undefined) state.tokens.delete(token);
  // Each family's published code, with the HTTP status the code begins with, as Daraja's codes do.
  return family === 'express'
    ? new ApiAnswer(404, errorBody('404.001.03', 'Invalid Access Token'))
    : new ApiAnswer(401, errorBody('401.002.01', `Error Occurred - Invalid Access Token - ${token ?? ''}`));
}
