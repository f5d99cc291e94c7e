/**
 * How the Fireblocks simulator signs its webhooks: v1's `Fireblocks-Signature` (base64 RSA-SHA512 of the
 * body with webhookKey.ts's key), v2's `Fireblocks-Webhook-Signature` (a detached JWS, RS512, `kid` in its
 * header, over `<header>.<base64url(body)>`), or both, as Fireblocks sends both during its migration
 * ("Validating webhooks"). v2's keys are made at start and published as a JWKS at
 * `/.well-known/jwks.json` on the simulator's origin (Fireblocks publishes its own at
 * `https://keys.fireblocks.io/.well-known/jwks.json`), with Fireblocks' caching headers. A rotation adds a
 * key and signs with it; the earlier ones stay published. The body follows the signatures (webhookEvent).
 */
import { createSign, generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';
import { FIREBLOCKS_SIMULATOR_WEBHOOK_PRIVATE_KEY } from './webhookKey.ts';

/** Which signatures the simulator's webhooks carry. */
export type FireblocksSimulatorWebhookSignatures = 'v1' | 'v2' | 'both';

/** Where the simulator publishes its JWKS, on its origin (Fireblocks' path). */
export const FIREBLOCKS_SIMULATOR_JWKS_PATH = '/.well-known/jwks.json';
/** Fireblocks' published caching headers of its JWKS. */
const JWKS_HEADERS = {
  'Cache-Control': 'public, max-age=3600, s-maxage=3600',
  'Access-Control-Allow-Origin': '*',
};

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export interface WebhookSigning {
  signatures: FireblocksSimulatorWebhookSignatures;
  keys: SigningKey[];
  /** Whether GET /.well-known/jwks.json answers (false: 503, as an outage would). */
  jwksAvailable: boolean;
  /** How many times the JWKS was asked for. */
  jwksRequests: number;
}

function newSigningKey(index: number): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid: `fireblocks-simulator-webhook-${index}`, privateKey, publicKey };
}

export function newWebhookSigning(signatures: FireblocksSimulatorWebhookSignatures = 'both'): WebhookSigning {
  return { signatures, keys: [newSigningKey(1)], jwksAvailable: true, jwksRequests: 0 };
}

/** Adds a key and signs with it from now on; returns its kid. */
export function rotateWebhookKey(signing: WebhookSigning): string {
  const key = newSigningKey(signing.keys.length + 1);
  signing.keys.push(key);
  return key.kid;
}

/** v2's event types ("Transaction webhooks v2") for v1's. */
const V2_EVENT_TYPES = {
  TRANSACTION_CREATED: 'transaction.created',
  TRANSACTION_STATUS_UPDATED: 'transaction.status.updated',
} as const;

/**
 * A webhook's body: v1's `{type, tenantId, timestamp, data}` ("Transaction Webhooks"), unless only v2 is
 * signed: then v2's `{id, eventType, eventVersion, resourceId, data, createdAt, workspaceId}` ("Transaction
 * webhooks v2", "Webhook notification structure"; `createdAt` in milliseconds as its examples show, though
 * its table says seconds). With both signatures the body is v1's.
 */
export function webhookEvent(
  state: { signing: WebhookSigning; config: { tenantId: string } },
  type: keyof typeof V2_EVENT_TYPES,
  transaction: { id: string },
): Record<string, unknown> {
  if (state.signing.signatures !== 'v2') {
    return { type, tenantId: state.config.tenantId, timestamp: Date.now(), data: transaction };
  }
  return {
    id: randomUUID(),
    eventType: V2_EVENT_TYPES[type],
    eventVersion: 1,
    resourceId: transaction.id,
    data: transaction,
    createdAt: Date.now(),
    workspaceId: state.config.tenantId,
  };
}

/** Base64(RSA-SHA512(private key, body)): the Fireblocks-Signature header. */
export function signWebhookBody(body: string, privateKey = FIREBLOCKS_SIMULATOR_WEBHOOK_PRIVATE_KEY): string {
  const signer = createSign('RSA-SHA512');
  signer.update(body);
  return signer.sign(privateKey, 'base64');
}

/** The detached JWS of a body, RS512, by the given key. */
export function webhookJws(body: string, privateKey: KeyObject, kid: string): string {
  const header = Buffer.from(JSON.stringify({ alg: 'RS512', kid })).toString('base64url');
  const payload = Buffer.from(body, 'utf8').toString('base64url');
  const signature = sign('sha512', Buffer.from(`${header}.${payload}`), privateKey).toString('base64url');
  return `${header}..${signature}`;
}

/** The signature headers of a webhook body, as the simulator is set to send them. */
export function webhookSignatureHeaders(signing: WebhookSigning, body: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (signing.signatures !== 'v2') headers['Fireblocks-Signature'] = signWebhookBody(body);
  const current = signing.keys.at(-1);
  if (signing.signatures !== 'v1' && current) {
    headers['Fireblocks-Webhook-Signature'] = webhookJws(body, current.privateKey, current.kid);
  }
  return headers;
}

/** GET /.well-known/jwks.json: every key, as a JWK of RS512 for signatures. */
export function jwksAnswer(signing: WebhookSigning): {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
} {
  signing.jwksRequests += 1;
  if (!signing.jwksAvailable) return { status: 503, body: { message: 'Service unavailable', code: 503 } };
  const keys = signing.keys.map(({ kid, publicKey }) => {
    const { n, e } = publicKey.export({ format: 'jwk' });
    return { kty: 'RSA', kid, use: 'sig', alg: 'RS512', n, e };
  });
  return { status: 200, body: { keys }, headers: JWKS_HEADERS };
}
