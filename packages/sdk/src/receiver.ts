/**
 * A webhook endpoint that follows the interface's receiver rules (spec section 6):
 *
 * 1. verify the signature before anything else, and refuse unsigned, forged or stale deliveries;
 * 2. store event ids, and never process a delivery whose id is already stored;
 * 3. answer 2xx only after the event is stored: a failure answers 5xx, so Mkoba delivers it again.
 *
 * Delivery is at least once and in no guaranteed order: act on the event's resource state and
 * `created_at`, not on arrival order.
 */
import type { Event, PayloadFormat } from './generated.ts';
import {
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from './webhooks.ts';

/** Where processed event ids are kept: a database table with a unique id column is the usual choice. */
export interface ProcessedEventStore {
  /** Whether the event was processed and stored before. */
  has(eventId: string): Promise<boolean>;
  /** Records the event as processed. Resolve only once it is durably stored. */
  add(eventId: string): Promise<void>;
}

/** The endpoint's secret, or every secret active during a rotation. */
export type WebhookSecrets = string | readonly string[];

export interface WebhookReceiverOptions<T> {
  /**
   * The endpoint's secret(s), or a function that returns them when a delivery arrives: the secret exists
   * only once the subscription is created, so a receiver started before that (or that follows a rotation)
   * reads it from where you stored it. A function that fails or returns none answers 503, and the
   * delivery is retried.
   */
  secrets: WebhookSecrets | (() => WebhookSecrets | Promise<WebhookSecrets>);
  /** The spelling to hand `handle` the event in (see `verifyWebhook`). Default: as delivered. */
  payloadFormat?: PayloadFormat;
  store: ProcessedEventStore;
  /** Processes one event. A rejection answers 500, so the delivery is retried. */
  handle(event: T): Promise<void> | void;
  /** Default 300. */
  toleranceSeconds?: number;
  /** The clock, for tests. Default: the system clock. */
  now?: () => Date | number;
  /** Told about every refused or failed delivery, for your logs. */
  onError?(error: unknown, context: { stage: 'verify' | 'store' | 'handle'; eventId?: string }): void;
}

export type WebhookReceiverBody =
  | { received: true; event_id: string; duplicate: boolean }
  | {
      error: WebhookVerificationReason | 'store_failed' | 'handler_failed' | 'secret_unavailable';
      message: string;
    };

export interface WebhookReceiverResponse {
  /** 200 when processed (or already processed); 400/401 when refused; 500 or 503 when it should be retried. */
  status: number;
  body: WebhookReceiverBody;
}

/** 400 for a request that is not a well-formed signed delivery; 401 for one that fails authentication. */
const STATUS_BY_REASON: Record<WebhookVerificationReason, number> = {
  missing_header: 400,
  malformed_header: 400,
  invalid_payload: 400,
  no_matching_signature: 401,
  timestamp_outside_tolerance: 401,
};

/**
 * Returns `(rawBody, headers) => Promise<{status, body}>`: wire it to your HTTP framework's route with the
 * raw body, and send back the status and the JSON body.
 *
 * Concurrent deliveries of one event id in this process run one after another, so the second finds the
 * first's id stored. Across several processes, make `store.add` and the effects of `handle` one database
 * transaction, or make `handle` idempotent.
 */
export function createWebhookReceiver<T extends { id: string } = Event>(
  options: WebhookReceiverOptions<T>,
): (rawBody: string | Uint8Array, headers: WebhookHeaders) => Promise<WebhookReceiverResponse> {
  const { secrets: given } = options;
  const fixedSecrets = typeof given === 'function' ? undefined : usableSecrets(given);
  if (fixedSecrets === undefined && typeof given !== 'function') {
    throw new TypeError(
      'createWebhookReceiver needs your endpoint secret (whsec_…), a list of them, or a function that returns them.',
    );
  }
  async function currentSecrets(): Promise<string[] | undefined> {
    if (fixedSecrets !== undefined) return fixedSecrets;
    try {
      return usableSecrets(await (given as () => WebhookSecrets | Promise<WebhookSecrets>)());
    } catch (error) {
      report(error, { stage: 'verify' });
      return undefined;
    }
  }
  const inFlight = new Map<string, Promise<unknown>>();
  const report = options.onError ?? (() => {});

  async function processOnce(event: T): Promise<WebhookReceiverResponse> {
    let seen: boolean;
    try {
      seen = await options.store.has(event.id);
    } catch (error) {
      report(error, { stage: 'store', eventId: event.id });
      return failed('store_failed', 'The event store did not answer; the delivery will be retried.');
    }
    if (seen) return { status: 200, body: { received: true, event_id: event.id, duplicate: true } };
    try {
      await options.handle(event);
    } catch (error) {
      report(error, { stage: 'handle', eventId: event.id });
      return failed('handler_failed', 'The event could not be processed; the delivery will be retried.');
    }
    try {
      await options.store.add(event.id);
    } catch (error) {
      report(error, { stage: 'store', eventId: event.id });
      return failed('store_failed', 'The event could not be stored; the delivery will be retried.');
    }
    return { status: 200, body: { received: true, event_id: event.id, duplicate: false } };
  }

  return async (rawBody, headers) => {
    const secrets = await currentSecrets();
    if (secrets === undefined) {
      return {
        status: 503,
        body: {
          error: 'secret_unavailable',
          message: 'The endpoint has no signing secret yet; the delivery will be retried.',
        },
      };
    }
    let event: T;
    try {
      const verifyOptions: VerifyWebhookOptions = {};
      if (options.payloadFormat !== undefined) verifyOptions.payloadFormat = options.payloadFormat;
      if (options.toleranceSeconds !== undefined) verifyOptions.toleranceSeconds = options.toleranceSeconds;
      if (options.now) verifyOptions.now = options.now();
      event = verifyWebhook<T>(rawBody, headers, secrets, verifyOptions);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      report(error, { stage: 'verify' });
      return {
        status: STATUS_BY_REASON[error.reason],
        body: { error: error.reason, message: error.message },
      };
    }
    // One at a time per event id: wait for any delivery of the same id that is still being processed.
    const previous = inFlight.get(event.id) ?? Promise.resolve();
    const current = previous.catch(() => undefined).then(() => processOnce(event));
    inFlight.set(event.id, current);
    try {
      return await current;
    } finally {
      if (inFlight.get(event.id) === current) inFlight.delete(event.id);
    }
  };
}

/** The secrets as a non-empty list of non-empty strings, or undefined. */
function usableSecrets(secrets: WebhookSecrets | undefined): string[] | undefined {
  if (secrets === undefined) return undefined;
  const list = typeof secrets === 'string' ? [secrets] : [...secrets];
  const usable = list.length > 0 && list.every((secret) => typeof secret === 'string' && secret !== '');
  return usable ? list : undefined;
}

function failed(error: 'store_failed' | 'handler_failed', message: string): WebhookReceiverResponse {
  return { status: 500, body: { error, message } };
}
