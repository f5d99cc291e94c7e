/**
 * Delivers outbox events to subscribers, at least once. Each tick claims due deliveries with
 * FOR UPDATE SKIP LOCKED (bounded per subscription, so one slow endpoint cannot take every slot), leases
 * them, commits, then sends them concurrently with no transaction open, each signed afresh. Every attempt
 * is logged; failures are rescheduled with backoff and jitter; an endpoint that answers 410 Gone, or keeps
 * failing past the disable period, is disabled and an event says so. A dispatcher killed mid-send leaves
 * leases that expire, and another dispatcher (or the same one restarted) sends again: receivers dedupe on
 * the event id.
 */
import type { Deps } from '../app/deps.ts';
import { recordEvents } from '../app/events.ts';
import type { WebhookSettings } from '../config.ts';
import type { SendResult, WebhookSender } from '../delivery/httpSender.ts';
import { eventEnvelope } from '../domain/events.ts';
import { signatureHeader, WEBHOOK_EVENT_ID_HEADER, WEBHOOK_SIGNATURE_HEADER } from '../domain/signing.ts';
import {
  nextAttempt,
  shouldDisable,
  toCamelCase,
  WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX,
} from '../domain/webhooks.ts';
import {
  activeSecrets,
  type ClaimedDelivery,
  claimDueDeliveries,
  findSubscription,
  finishDelivery,
  insertAttempt,
  lockDelivery,
  saveSubscription,
} from '../store/repositories/webhooks.ts';

export const WEBHOOK_DISPATCH_INTERVAL_MS = 100;
export const WEBHOOK_DISPATCH_BATCH_ROWS = 50;
/** Extra lease beyond the send time-out, so a slow but live dispatcher keeps its claim. */
const LEASE_MARGIN_MS = 5_000;

export interface DispatcherOptions {
  settings: WebhookSettings;
  sender: WebhookSender;
  /** In [0, 1): drives retry jitter. */
  random?: () => number;
}

/** The exact bytes sent for a delivery: the event envelope in the subscription's spelling. */
export function deliveryBody(delivery: ClaimedDelivery, deps: Deps): string {
  const envelope = eventEnvelope(
    {
      id: delivery.eventId,
      organizationId: delivery.organizationId,
      type: delivery.eventType,
      resourceId: null,
      data: delivery.eventData,
      createdAt: delivery.eventCreatedAt,
    },
    deps.environment,
  );
  return JSON.stringify(delivery.payloadFormat === 'camel_case' ? toCamelCase(envelope) : envelope);
}

async function sendOne(deps: Deps, options: DispatcherOptions, delivery: ClaimedDelivery): Promise<void> {
  const body = deliveryBody(delivery, deps);
  const startedAt = deps.now();
  const secrets = await activeSecrets(deps.store, deps.keyring, delivery.subscriptionId, startedAt);
  let result: SendResult;
  if (secrets.length === 0) {
    result = { kind: 'error', errorClass: 'other', message: 'the subscription has no active secret' };
  } else {
    result = await options.sender(delivery.url, body, {
      'content-type': 'application/json',
      'user-agent': 'Mkoba-Webhooks/1',
      [WEBHOOK_EVENT_ID_HEADER.toLowerCase()]: delivery.eventId,
      [WEBHOOK_SIGNATURE_HEADER.toLowerCase()]: signatureHeader(
        body,
        secrets,
        Math.floor(startedAt.getTime() / 1000),
      ),
    });
  }
  const finishedAt = deps.now();
  const success = result.kind === 'response' && result.statusCode >= 200 && result.statusCode < 300;
  const statusCode = result.kind === 'response' ? result.statusCode : null;
  const random = (options.random ?? Math.random)();

  await deps.store.transaction(async (tx) => {
    await insertAttempt(tx, {
      deliveryId: delivery.id,
      attempt: delivery.attempts,
      startedAt,
      durationMs: finishedAt.getTime() - startedAt.getTime(),
      statusCode,
      errorClass: result.kind === 'error' ? result.errorClass : null,
      responseBody: result.kind === 'response' ? result.body : result.message,
    });
    // Subscription first, then the delivery: the order recover takes them in, so the two cannot deadlock.
    const subscription = await findSubscription(tx, delivery.organizationId, delivery.subscriptionId, {
      forUpdate: true,
    });
    const state = await lockDelivery(tx, delivery.id);
    // The lease ran out and another dispatcher took the delivery: the attempt is logged, its outcome is theirs.
    if (state?.status !== 'delivering' || state.attempts !== delivery.attempts) return;
    const next = nextAttempt(
      state.attempts - state.attemptsBeforeRequeue,
      success
        ? { kind: 'success' }
        : {
            kind: 'failure',
            statusCode: statusCode ?? undefined,
            retryAfterSeconds: result.kind === 'response' ? result.retryAfterSeconds : undefined,
          },
      options.settings.retryScheduleSeconds,
      finishedAt,
      random,
    );
    const recorded = await finishDelivery(
      tx,
      delivery.id,
      delivery.attempts,
      {
        status: next.kind === 'done' ? 'succeeded' : next.kind === 'retry' ? 'pending' : 'exhausted',
        nextAttemptAt: next.kind === 'retry' ? next.at : finishedAt,
        statusCode,
        error: result.kind === 'error' ? `${result.errorClass}: ${result.message}` : null,
      },
      finishedAt,
    );
    if (!recorded || !subscription) return;
    if (success) {
      if (subscription.failingSince !== null) {
        await saveSubscription(tx, { ...subscription, failingSince: null, updatedAt: finishedAt });
      }
      return;
    }
    const failingSince = subscription.failingSince ?? finishedAt;
    const gone = statusCode === 410;
    const disable =
      subscription.status === 'enabled' &&
      (gone || shouldDisable(failingSince, finishedAt, options.settings.disableAfterFailingMs));
    await saveSubscription(tx, {
      ...subscription,
      failingSince,
      ...(disable
        ? { status: 'disabled' as const, disabledReason: gone ? 'endpoint_gone' : 'failing_too_long' }
        : {}),
      updatedAt: finishedAt,
    });
    if (disable) {
      await recordEvents(tx, deps, [
        {
          id: deps.newId('event'),
          organizationId: subscription.organizationId,
          type: 'webhook_subscription.disabled',
          resourceId: subscription.id,
          data: {
            subscription_id: subscription.id,
            url: subscription.url,
            reason: gone ? 'endpoint_gone' : 'failing_too_long',
            failing_since: failingSince.toISOString(),
          },
          createdAt: finishedAt,
        },
      ]);
    }
  });
}

/** Sends in flight in one process at most; a tick claims only as many as there are free slots. */
export const WEBHOOK_DISPATCH_CONCURRENCY_MAX = 64;

async function claim(deps: Deps, options: DispatcherOptions, rowsMax: number): Promise<ClaimedDelivery[]> {
  const now = deps.now();
  return deps.store.transaction((tx) =>
    claimDueDeliveries(
      tx,
      now,
      new Date(now.getTime() + options.settings.timeoutMs + LEASE_MARGIN_MS),
      rowsMax,
      WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX,
    ),
  );
}

/** One pass that waits for its sends: claim, send concurrently, record. Returns how many it attempted. */
export async function dispatchWebhooksOnce(deps: Deps, options: DispatcherOptions): Promise<number> {
  const claimed = await claim(deps, options, WEBHOOK_DISPATCH_BATCH_ROWS);
  await Promise.all(claimed.map((delivery) => sendOne(deps, options, delivery)));
  return claimed.length;
}

export interface RunningDispatcher {
  stop(): Promise<void>;
}

/**
 * The long-running dispatcher: ticks never wait for sends, so an endpoint that takes the whole time-out
 * holds only its own slots while every other subscription keeps flowing.
 */
export function startWebhookDispatcher(
  deps: Deps,
  options: DispatcherOptions,
  onError: (error: unknown) => void,
): RunningDispatcher {
  const inFlight = new Set<Promise<void>>();
  let claiming: Promise<void> | undefined;
  let stopped = false;
  // While the last claim found work there is likely a backlog: a freed slot is refilled at once instead of
  // at the next tick, so one fast subscription is not held to (in-flight limit × ticks per second).
  let backlog = false;
  const tick = async () => {
    const free = Math.min(WEBHOOK_DISPATCH_BATCH_ROWS, WEBHOOK_DISPATCH_CONCURRENCY_MAX - inFlight.size);
    if (claiming || stopped || free <= 0) return;
    claiming = (async () => {
      try {
        // Rows claimed are leased: they are sent even if stop() came meanwhile, and stop() waits for them.
        const claimed = await claim(deps, options, free);
        backlog = claimed.length > 0;
        for (const delivery of claimed) {
          const send: Promise<void> = sendOne(deps, options, delivery)
            .catch(onError)
            .finally(() => {
              inFlight.delete(send);
              if (backlog && !stopped) void tick();
            });
          inFlight.add(send);
        }
      } catch (error) {
        onError(error);
      }
    })();
    await claiming;
    claiming = undefined;
  };
  const timer = setInterval(() => void tick(), WEBHOOK_DISPATCH_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await claiming;
      await Promise.all([...inFlight]);
    },
  };
}
