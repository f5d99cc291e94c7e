/**
 * MTN MoMo's token API, one per product (POST /{product}/token/): the API user and key (HTTP Basic) buy an
 * hour's access token, good for that product's calls only.
 */
import { randomBytes } from 'node:crypto';
import type { Answer, MomoProduct, MomoRoute, MomoState } from './state.ts';

export const TOKEN_ROUTE: MomoRoute = {
  pattern: /^\/(collection|disbursement)\/token\/?$/,
  method: 'POST',
  action: 'token',
};

/**
 * POST /{product}/token/. MTN's common-errors page: "Inputting a Body in an API that is not supported e.g.
 * /Token API" is a 400; whitespace alone is no body.
 */
export function issueToken(
  state: MomoState,
  product: MomoProduct,
  header: string | undefined,
  text: string,
): Answer {
  const { apiUser, apiKey } = state.credentials;
  const { tokenLifetimeSeconds } = state.config;
  const expected = `Basic ${Buffer.from(`${apiUser}:${apiKey}`).toString('base64')}`;
  if (header !== expected) return { status: 401, body: { error: 'login_failed' } };
  if (text.trim() !== '') {
    return { status: 400, body: { message: 'The token API takes no request body.' } };
  }
  const accessToken = randomBytes(24).toString('base64url');
  state.tokens.set(accessToken, { product, expiresAt: Date.now() + tokenLifetimeSeconds * 1000 });
  return {
    status: 200,
    body: { access_token: accessToken, token_type: 'access_token', expires_in: tokenLifetimeSeconds },
  };
}

/** Whether the Authorization header carries an unexpired token issued for this product. */
export function authorizeBearer(state: MomoState, product: MomoProduct, header: string | undefined): boolean {
  const token = header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
  const issued = token === undefined ? undefined : state.tokens.get(token);
  return issued !== undefined && issued.product === product && issued.expiresAt > Date.now();
}
