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
  const { tokenLifetimeSeconds } = state.config;
  const apiUser = apiUserOf(state, header);
  if (apiUser === undefined) return { status: 401, body: { error: 'login_failed' } };
  if (text.trim() !== '') {
    return { status: 400, body: { message: 'The token API takes no request body.' } };
  }
  const accessToken = randomBytes(24).toString('base64url');
  state.tokens.set(accessToken, { product, apiUser, expiresAt: Date.now() + tokenLifetimeSeconds * 1000 });
  return {
    status: 200,
    body: { access_token: accessToken, token_type: 'access_token', expires_in: tokenLifetimeSeconds },
  };
}

/** The API user whose id and key the Basic header carries: the simulator's own, or one provisioned with a key. */
function apiUserOf(state: MomoState, header: string | undefined): string | undefined {
  const encoded = header?.startsWith('Basic ') ? header.slice('Basic '.length) : undefined;
  if (encoded === undefined) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const [user, key] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
  if (user === state.credentials.apiUser && key === state.credentials.apiKey) return user;
  const provisioned = state.apiUsers.get(user);
  return provisioned?.apiKey !== undefined && provisioned.apiKey === key ? user : undefined;
}

/** The API user of the unexpired token for this product the Authorization header carries, if it carries one. */
export function authorizeBearer(
  state: MomoState,
  product: MomoProduct,
  header: string | undefined,
): string | undefined {
  const token = header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
  const issued = token === undefined ? undefined : state.tokens.get(token);
  const valid = issued !== undefined && issued.product === product && issued.expiresAt > Date.now();
  return valid ? issued.apiUser : undefined;
}
