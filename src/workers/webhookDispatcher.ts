/**
 * Delivers outbox events to subscribers, at least once. Each tick claims due deliveries with
 * FOR UPDATE SKIP LOCKED (bounded per subscription, so one slow endpoint cannot take every slot), leases
 * them, commits, then sends them concurrently with no transaction open, each signed afresh. Every attempt
 * is logged; failures are rescheduled with backoff and jitter; an endpoint that answers 410 Gone, or keeps
 * failing past the disable period, is disabled and an event says so. No delivery can loop: an attempt that
 * fails inside Mkoba, or whose outcome cannot be recorded, is a failed attempt like any other. A dispatcher
 * killed mid-send leaves leases that expire, and another dispatcher (or the same one restarted) sends
 * again: receivers dedupe on the event id.
 */
import type { Deps } from '../app/deps.ts';
import { recordEvents } from '../app/events.ts';
import type { WebhookSettings } from '../config.ts';
import type { SendResult, WebhookSender } from '../delivery/httpSender.ts';
import { eventEnvelope } from '../domain/events.ts';
import {
  signatureHeader,
  unixSeconds,
  WEBHOOK_EVENT_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_SIGNING_SECRETS_MAX,
} from '../domain/signing.ts';
import { nextAttempt, shouldDisable, toCamelCase } from '../domain/webhooks.ts';
import type { WebhookDeliveryOutcome } from '../metrics.ts';
import {
  type ClaimedDelivery,
  claimDueDeliveries,
  findDeliveryToSend,
  findSubscription,
  finishDelivery,
  insertAttempt,
  lockDelivery,
  openStoredSecret,
  releaseDelivery,
  type Subscription,
  saveSubscription,
  WEBHOOK_DELIVERIES_CHANNEL,
} from '../store/repositories/webhooks.ts';
import type { Queryable } from '../store/store.ts';

/** The poll of a store that cannot notify (one with notifications polls at settings.pollIntervalMs). */
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

/** Why an attempt failed when the fault is Mkoba's, not the endpoint's (the `error_class` of the log). */
type DispatchErrorClass = 'internal' | 'outcome_unrecordable' | 'schedule_spent';

/** What one attempt came to, ready to record. */
interface AttemptOutcome {
  startedAt: Date;
  finishedAt: Date;
  result: SendResult | { kind: 'error'; errorClass: DispatchErrorClass; message: string };
  /** False when Mkoba is why it failed: the endpoint's failure window and auto-disable are left alone. */
  fromEndpoint: boolean;
}

/** Waits before trying again to record an outcome (a dropped connection, a database failing over). */
const OUTCOME_RECORD_RETRY_DELAYS_MS: readonly number[] = [100, 1_000];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function mkobaFailure(
  errorClass: DispatchErrorClass,
  message: string,
  startedAt: Date,
  finishedAt: Date,
): AttemptOutcome {
  return { startedAt, finishedAt, result: { kind: 'error', errorClass, message }, fromEndpoint: false };
}

/**
 * One attempt, from the claim to its recorded outcome. Never throws: whatever fails in between (the event
 * cannot be rendered, signing, the sender itself) is a failed attempt with `error_class: internal`, and an
 * outcome that cannot be recorded is retried, then recorded bare; so the retry schedule and exhaustion
 * apply to every delivery, and the lease running out is only the way out of a dispatcher that died.
 */
async function sendOne(
  deps: Deps,
  options: DispatcherOptions,
  delivery: ClaimedDelivery,
  onError: (error: unknown) => void,
  record: OutcomeRecorder,
): Promise<void> {
  const startedAt = deps.now();
  let outcome: AttemptOutcome | undefined;
  try {
    outcome = await attempt(deps, options, delivery, startedAt);
  } catch (error) {
    onError(error);
    outcome = mkobaFailure('internal', 'Mkoba could not prepare or send this attempt', startedAt, deps.now());
  }
  if (!outcome) return;
  const random = (options.random ?? Math.random)();
  // What the committed outcome did to the delivery, counted once the transaction has committed.
  let effect: WebhookDeliveryOutcome | undefined;
  const recorded = async (o: AttemptOutcome) => {
    const committed = await retried(
      () =>
        record(delivery, async (tx) => {
          effect = await recordOutcome(tx, deps, options, delivery, o, random);
        }),
      onError,
    );
    if (committed && effect) deps.metrics?.observeWebhookDelivery(effect);
    return committed;
  };
  if (await recorded(outcome)) return;
  // The full outcome would not commit (whatever the reason): record just a failed attempt, which touches
  // nothing but the attempt and the delivery. If even that fails, the lease runs out and the claim is retried.
  const what =
    outcome.result.kind === 'response'
      ? `the answer (HTTP ${outcome.result.statusCode})`
      : `the failure (${outcome.result.errorClass})`;
  await recorded(
    mkobaFailure(
      'outcome_unrecordable',
      `${what} could not be recorded; counted as a failed attempt`,
      outcome.startedAt,
      outcome.finishedAt,
    ),
  );
}

/** Records one outcome: alone, or in one transaction with others that finished at the same time. */
type OutcomeRecorder = (delivery: ClaimedDelivery, fn: (tx: Queryable) => Promise<void>) => Promise<void>;

/** Outcomes committed together at most. */
export const WEBHOOK_OUTCOME_BATCH_ROWS_MAX = 64;

/**
 * Outcomes that finish while another batch commits wait and go in the next transaction, so a busy
 * dispatcher pays one commit (and one WAL flush) for many. Each batch takes its locks in (subscription,
 * delivery) order, the order every batch and recover take them in. A batch that fails is recorded one
 * outcome per transaction, so one outcome that cannot be recorded never holds back the others.
 */
function batchedRecorder(deps: Deps): OutcomeRecorder {
  type Item = {
    delivery: ClaimedDelivery;
    fn: (tx: Queryable) => Promise<void>;
    resolve: () => void;
    reject: (error: unknown) => void;
  };
  let queue: Item[] = [];
  let flushing = false;
  const alone = (item: Item) => deps.store.transaction(item.fn).then(item.resolve, item.reject);
  const flush = async () => {
    flushing = true;
    while (queue.length > 0) {
      const batch = queue.slice(0, WEBHOOK_OUTCOME_BATCH_ROWS_MAX);
      queue = queue.slice(batch.length);
      if (batch.length === 1) {
        await alone(batch[0] as Item);
        continue;
      }
      batch.sort(
        (a, b) =>
          compare(a.delivery.subscriptionId, b.delivery.subscriptionId) ||
          compare(a.delivery.id, b.delivery.id),
      );
      try {
        await deps.store.transaction(async (tx) => {
          for (const item of batch) await item.fn(tx);
        });
        for (const item of batch) item.resolve();
      } catch {
        await Promise.all(batch.map(alone));
      }
    }
    flushing = false;
  };
  return (delivery, fn) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ delivery, fn, resolve, reject });
      if (!flushing) void flush();
    });
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Runs fn, again after each delay while it throws; true once it succeeds. Errors go to onError. */
async function retried(fn: () => Promise<unknown>, onError: (error: unknown) => void): Promise<boolean> {
  for (let i = 0; ; i++) {
    try {
      await fn();
      return true;
    } catch (error) {
      onError(error);
    }
    const delay = OUTCOME_RECORD_RETRY_DELAYS_MS[i];
    if (delay === undefined) return false;
    await sleep(delay);
  }
}

/** Sends a claimed delivery, or says why not; undefined when there is nothing to record. */
async function attempt(
  deps: Deps,
  options: DispatcherOptions,
  delivery: ClaimedDelivery,
  startedAt: Date,
): Promise<AttemptOutcome | undefined> {
  const current = await findDeliveryToSend(deps.store, delivery.id);
  // Another dispatcher took it over already: the attempt is theirs.
  if (current?.status !== 'delivering' || current.attempts !== delivery.attempts) return undefined;
  // Disabled or deleted since the claim: not sent, and the claim does not count as an attempt.
  if (!current.subscriptionLive) {
    await releaseDelivery(deps.store, delivery.id, delivery.attempts);
    return undefined;
  }
  // Each claim counts an attempt, recorded or not; past the schedule's end no further one is made.
  if (current.attempts - current.attemptsBeforeRequeue > options.settings.retryScheduleSeconds.length + 1) {
    return mkobaFailure(
      'schedule_spent',
      'not sent: attempts whose outcome was never recorded (their dispatcher stopped) spent the retry schedule',
      startedAt,
      deps.now(),
    );
  }
  const target = { ...delivery, url: current.url, payloadFormat: current.payloadFormat };
  const body = deliveryBody(target, deps);
  // Newest first: should more secrets be live than a header carries, the newest sign.
  const secrets = delivery.secrets
    .map((secret) => openStoredSecret(deps.keyring, secret))
    .filter((secret) => secret.length > 0)
    .slice(0, WEBHOOK_SIGNING_SECRETS_MAX);
  const result: SendResult =
    secrets.length === 0
      ? { kind: 'error', errorClass: 'other', message: 'the subscription has no active secret' }
      : await options.sender(target.url, body, {
          'content-type': 'application/json',
          'user-agent': 'Mkoba-Webhooks/1',
          [WEBHOOK_EVENT_ID_HEADER.toLowerCase()]: delivery.eventId,
          [WEBHOOK_SIGNATURE_HEADER.toLowerCase()]: signatureHeader(body, secrets, unixSeconds(startedAt)),
        });
  return { startedAt, finishedAt: deps.now(), result, fromEndpoint: true };
}

/** Logs the attempt and, if this dispatcher still holds the lease, moves the delivery on its schedule. */
async function recordOutcome(
  tx: Queryable,
  deps: Deps,
  options: DispatcherOptions,
  delivery: ClaimedDelivery,
  outcome: AttemptOutcome,
  random: number,
): Promise<WebhookDeliveryOutcome | undefined> {
  const { result, startedAt, finishedAt } = outcome;
  const success = result.kind === 'response' && result.statusCode >= 200 && result.statusCode < 300;
  const statusCode = result.kind === 'response' ? result.statusCode : null;
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
  // A success leaves a subscription whose failure window was closed at the claim alone: locking its row
  // would commit every outcome of a subscription one after another. (A failure recorded meanwhile keeps its
  // window open until the next success closes it.)
  const touchesSubscription = outcome.fromEndpoint && (!success || delivery.subscriptionFailing);
  const subscription = touchesSubscription
    ? await findSubscription(tx, delivery.organizationId, delivery.subscriptionId, { forUpdate: true })
    : undefined;
  const state = await lockDelivery(tx, delivery.id);
  // The lease ran out and another dispatcher took the delivery: the attempt is logged, its outcome is theirs.
  if (state?.status !== 'delivering' || state.attempts !== delivery.attempts) return undefined;
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
  if (recorded && subscription) {
    await recordEndpointHealth(tx, deps, options, subscription, success, statusCode, finishedAt);
  }
  if (!recorded) return undefined;
  return next.kind === 'done' ? 'succeeded' : next.kind === 'retry' ? 'retrying' : 'exhausted';
}

/** A success closes the endpoint's failure window; a failure opens it, and 410 or a long one disables it. */
async function recordEndpointHealth(
  tx: Queryable,
  deps: Deps,
  options: DispatcherOptions,
  subscription: Subscription,
  success: boolean,
  statusCode: number | null,
  finishedAt: Date,
): Promise<void> {
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
      options.settings.subscriptionConcurrency,
    ),
  );
}

/**
 * One pass that waits for its sends: claim, send concurrently, record. Returns how many it claimed.
 * Errors met on the way (each already counted as a failed attempt) go to onError.
 */
export async function dispatchWebhooksOnce(
  deps: Deps,
  options: DispatcherOptions,
  onError: (error: unknown) => void = () => {},
): Promise<number> {
  const claimed = await claim(deps, options, WEBHOOK_DISPATCH_BATCH_ROWS);
  const record = batchedRecorder(deps);
  await Promise.all(claimed.map((delivery) => sendOne(deps, options, delivery, onError, record)));
  return claimed.length;
}

export interface RunningDispatcher {
  stop(): Promise<void>;
}

/**
 * The long-running dispatcher: ticks never wait for sends, so an endpoint that takes the whole time-out
 * holds only its own slots while every other subscription keeps flowing. A commit that queues deliveries
 * wakes it (LISTEN/NOTIFY); the poll is the fallback for retries coming due and lost notifications.
 */
export function startWebhookDispatcher(
  deps: Deps,
  options: DispatcherOptions,
  onError: (error: unknown) => void,
): RunningDispatcher {
  const inFlight = new Set<Promise<void>>();
  const record = batchedRecorder(deps);
  let claiming: Promise<void> | undefined;
  let stopped = false;
  // While the last claim found work there is likely a backlog: a freed slot is refilled at once instead of
  // at the next tick, so one fast subscription is not held to (in-flight limit × ticks per second).
  let backlog = false;
  // A wake-up that came while a claim ran: that claim may have read before the commit, so claim again.
  let wokenWhileClaiming = false;
  const tick = async () => {
    const free = Math.min(WEBHOOK_DISPATCH_BATCH_ROWS, WEBHOOK_DISPATCH_CONCURRENCY_MAX - inFlight.size);
    if (stopped || free <= 0) return;
    if (claiming) {
      wokenWhileClaiming = true;
      return;
    }
    wokenWhileClaiming = false;
    claiming = (async () => {
      try {
        // Rows claimed are leased: they are sent even if stop() came meanwhile, and stop() waits for them.
        const claimed = await claim(deps, options, free);
        backlog = claimed.length > 0;
        for (const delivery of claimed) {
          const send: Promise<void> = sendOne(deps, options, delivery, onError, record)
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
    if (wokenWhileClaiming) void tick();
  };
  const listening = deps.store.listen
    ? deps.store
        .listen(WEBHOOK_DELIVERIES_CHANNEL, () => void tick())
        .catch((error: unknown) => {
          // Without notifications the poll still finds every delivery, later.
          onError(error);
          return undefined;
        })
    : undefined;
  const timer = setInterval(
    () => void tick(),
    deps.store.listen ? options.settings.pollIntervalMs : WEBHOOK_DISPATCH_INTERVAL_MS,
  );
  timer.unref();
  void tick();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await (await listening)?.();
      await claiming;
      await Promise.all([...inFlight]);
    },
  };
}
