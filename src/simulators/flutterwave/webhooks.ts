/**
 * The Flutterwave simulator's webhooks: delivery with the headers Flutterwave sends (`verif-hash`, the dashboard's secret hash; and
 * `flutterwave-signature`, an HMAC-SHA256 of the body under that hash), retries for a receiver that does
 * not answer 200, and the check a receiver makes (`verifyFlutterwaveWebhook`).
 */
import { createHmac } from 'node:crypto';
import { sameText } from '../../domain/constantTime.ts';
import { schedule, sendCallback } from '../shared.ts';
import {
  FLUTTERWAVE_SIMULATOR_WEBHOOK_RETRY_INTERVAL_MS,
  FLUTTERWAVE_SIMULATOR_WEBHOOK_TIMEOUT_MS,
  type FlutterwaveState,
  type FlutterwaveWebhookDelivery,
} from './state.ts';

/** The `flutterwave-signature` of a body: base64 HMAC-SHA256 keyed by the secret hash. */
export function flutterwaveSignature(secretHash: string, rawBody: string): string {
  return createHmac('sha256', secretHash).update(rawBody, 'utf8').digest('base64');
}

/**
 * Whether a webhook is Flutterwave's: its `verif-hash` equals the secret hash, or its
 * `flutterwave-signature` is the body's HMAC under it. Headers are read lower-case, as Node gives them.
 */
export function verifyFlutterwaveWebhook(
  secretHash: string,
  headers: Record<string, string | undefined>,
  rawBody: string,
): boolean {
  const verifHash = headers['verif-hash'];
  if (verifHash !== undefined && sameText(verifHash, secretHash)) return true;
  const signature = headers['flutterwave-signature'];
  return signature !== undefined && sameText(signature, flutterwaveSignature(secretHash, rawBody));
}

export interface WebhookToSend {
  event: FlutterwaveWebhookDelivery['event'];
  id: number;
  url: string | undefined;
  payload: Record<string, unknown>;
}

/** Sends a webhook once now (and again, up to the retries, while the receiver does not answer 200). */
export async function sendWebhook(
  state: FlutterwaveState,
  webhook: WebhookToSend,
  attempt = 0,
): Promise<void> {
  if (webhook.url === undefined || state.closed) return;
  const body = JSON.stringify(webhook.payload);
  const headers = {
    'Content-Type': 'application/json',
    'verif-hash': state.credentials.secretHash,
    'flutterwave-signature': flutterwaveSignature(state.credentials.secretHash, body),
  };
  const delivery: FlutterwaveWebhookDelivery = {
    event: webhook.event,
    id: webhook.id,
    url: webhook.url,
    headers,
    body,
    attempt,
    at: Date.now(),
  };
  if (state.config.webhooksLost) {
    state.webhooks.push({ ...delivery, error: 'lost on the way (simulated)' });
    return;
  }
  Object.assign(
    delivery,
    await sendCallback(
      webhook.url,
      { method: 'POST', headers, body },
      FLUTTERWAVE_SIMULATOR_WEBHOOK_TIMEOUT_MS,
    ),
  );
  state.webhooks.push(delivery);
  if (delivery.status !== 200 && attempt < state.config.webhookRetries) {
    schedule(state, FLUTTERWAVE_SIMULATOR_WEBHOOK_RETRY_INTERVAL_MS, () =>
      sendWebhook(state, webhook, attempt + 1),
    );
  }
}
