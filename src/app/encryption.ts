/**
 * Stored idempotent responses that carry a secret (a webhook subscription's, as created) are sealed
 * (src/domain/sealing.ts) with the keyring in Deps, for the one Idempotency-Key they answer, and opened to
 * replay. The start-up duties and the master-key rotation over every secret at rest are secretsAtRest.ts.
 */
import { open, seal } from '../domain/sealing.ts';
import type { Deps } from './deps.ts';

/** A stored response body that carries a secret, sealed for the one Idempotency-Key it answers. */
export interface SealedResponse {
  sealed_response: string;
}

const responseContext = (organizationId: string, key: string) =>
  `idempotent_response:${organizationId}:${key}`;

export function isSealedResponse(body: unknown): body is SealedResponse {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as Partial<SealedResponse>).sealed_response === 'string' &&
    Object.keys(body).length === 1
  );
}

/** The body to store for a response that carries a secret. */
export function sealResponseBody(
  deps: Deps,
  target: { organizationId: string; key: string },
  body: unknown,
): SealedResponse {
  return {
    sealed_response: seal(
      deps.keyring,
      JSON.stringify(body),
      responseContext(target.organizationId, target.key),
      deps.randomBytes,
    ),
  };
}

/** The text to store for a response that carries a secret: the exact text sent, sealed. */
export function sealResponseText(
  deps: Deps,
  target: { organizationId: string; key: string },
  text: string,
): string {
  const sealed: SealedResponse = {
    sealed_response: seal(
      deps.keyring,
      text,
      responseContext(target.organizationId, target.key),
      deps.randomBytes,
    ),
  };
  return JSON.stringify(sealed);
}

/** A stored response text as the client receives it again: a sealed one opened (byte for byte), any other as it is. */
export function openResponseText(
  deps: Deps,
  target: { organizationId: string; key: string },
  text: string,
): string {
  if (!text.startsWith('{"sealed_response":')) return text;
  const body: unknown = JSON.parse(text);
  if (!isSealedResponse(body)) return text;
  return open(deps.keyring, body.sealed_response, responseContext(target.organizationId, target.key));
}
