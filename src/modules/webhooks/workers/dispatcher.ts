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
import type { Deps } from '../../../app/deps.ts';
import { recordEvents } from '../../../app/events.ts';
import type { WebhookSettings } from '../../../config.ts';
import { renderEvent } from '../../../domain/events.ts';
import {
  signatureHeader,
  unixSeconds,
  WEBHOOK_EVENT_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_SIGNING_SECRETS_MAX,
} from '../../../domain/signing.ts';
import { nextAttempt, shouldDisable } from '../../../domain/webhooks.ts';
import type { WebhookDeliveryOutcome } from '../../../metrics.ts';
import { WEBHOOK_DELIVERIES_CHANNEL } from '../../../store/repositories/outbox.ts';
import type { Queryable } from '../../../store/store.ts';
import { type ClaimedDelivery, claimDueDeliveries } from '../repository/claims.ts';
import {
  type DeliveryToSend,
  deliveryAttemptKey,
  findDeliveriesToSend,
  finishDeliveries,
  insertAttempts,
  lockDeliveries,
  releaseDelivery,
} from '../repository/deliveries.ts';
import { openStoredSecret } from '../repository/secrets.ts';
import { findSubscription, type Subscription, saveSubscription } from '../repository/subscriptions.ts';
import type { SendResult, WebhookSender } from './httpSender.ts';

/** The poll of a store that cannot notify (one with notifications polls at settings.pollIntervalMs). */
export const WEBHOOK_DISPATCH_INTERVAL_MS = 100;
/** Deliveries one claim takes at most. */
export const WEBHOOK_DISPATCH_BATCH_ROWS = 128;
/** Extra lease beyond the send time-out, so a slow but live dispatcher keeps its claim. */
const LEASE_MARGIN_MS = 5_000;

export interface DispatcherOptions {
  settings: WebhookSettings;
  sender: WebhookSender;
  /** In [0, 1): drives retry jitter. */
  random?: () => number;
}

/** The exact bytes sent for a delivery: the event in the subscription's payload version and spelling. */
export function deliveryBody(delivery: ClaimedDelivery, deps: Deps): string {
  const event = {
    id: delivery.eventId,
    organizationId: delivery.organizationId,
    type: delivery.eventType,
    resourceId: null,
    data: delivery.eventData,
    createdAt: delivery.eventCreatedAt,
  };
  return JSON.stringify(renderEvent(event, deps.environment, delivery.apiVersion, delivery.payloadFormat));
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

/** Wait before reading a claim's deliveries again when the first read failed. */
const PRE_SEND_READ_RETRY_DELAY_MS = 100;

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
 * Sends what one claim took: one read of where they all stand now (after the claim committed), then each
 * attempt on its own. Resolves once every outcome is recorded.
 */
function sendClaimed(
  deps: Deps,
  options: DispatcherOptions,
  claimed: readonly ClaimedDelivery[],
  onError: (error: unknown) => void,
  record: OutcomeRecorder,
): Promise<void>[] {
  if (claimed.length === 0) return [];
  const ids = claimed.map((d) => d.id);
  // Tried twice: a read that fails would count a failed attempt against every delivery of the claim.
  const current = findDeliveriesToSend(deps.store, ids).catch(async (error: unknown) => {
    onError(error);
    await sleep(PRE_SEND_READ_RETRY_DELAY_MS);
    return findDeliveriesToSend(deps.store, ids);
  });
  // Each attempt turns a failed read into its own failed attempt; this only stops Node calling it unhandled.
  current.catch(() => {});
  return claimed.map((delivery) => sendOne(deps, options, delivery, current, onError, record));
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
  current: Promise<Map<string, DeliveryToSend>>,
  onError: (error: unknown) => void,
  record: OutcomeRecorder,
): Promise<void> {
  const startedAt = deps.now();
  let outcome: AttemptOutcome | undefined;
  try {
    outcome = await attempt(deps, options, delivery, (await current).get(delivery.id), startedAt);
  } catch (error) {
    onError(error);
    outcome = mkobaFailure('internal', 'Mkoba could not prepare or send this attempt', startedAt, deps.now());
  }
  if (!outcome) return;
  const random = (options.random ?? Math.random)();
  const recorded = async (o: AttemptOutcome) => {
    // What the committed outcome did to the delivery, counted once the transaction has committed.
    let effect: WebhookDeliveryOutcome | undefined;
    const committed = await retried(async () => {
      effect = await record({ delivery, outcome: o, random });
    }, onError);
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

/** An attempt's outcome waiting to be recorded, with the draw that sets its retry jitter. */
interface PendingOutcome {
  delivery: ClaimedDelivery;
  outcome: AttemptOutcome;
  random: number;
}

/** Records one outcome, alone or in one transaction with others that finished at the same time. */
type OutcomeRecorder = (pending: PendingOutcome) => Promise<WebhookDeliveryOutcome | undefined>;

/** Outcomes committed together at most. */
export const WEBHOOK_OUTCOME_BATCH_ROWS_MAX = 128;

/**
 * Outcomes that finish while another batch commits wait and go in the next transaction, so a busy
 * dispatcher pays one commit (and one WAL flush) for many, and a handful of statements for the whole batch.
 * One outcome that cannot be recorded never holds back the others (below).
 */
function batchedRecorder(deps: Deps, options: DispatcherOptions): OutcomeRecorder {
  type Item = {
    pending: PendingOutcome;
    resolve: (effect: WebhookDeliveryOutcome | undefined) => void;
    reject: (error: unknown) => void;
  };
  let queue: Item[] = [];
  let flushing = false;
  const inOneTransaction = (items: readonly Item[]) =>
    deps.store.transaction((tx) =>
      recordOutcomes(
        tx,
        deps,
        options,
        items.map((item) => item.pending),
      ),
    );
  // A batch that fails is split in halves, each tried on its own, down to single outcomes, which are
  // rejected (and retried by their sender): one outcome that cannot be recorded costs a few transactions,
  // one after another, never a transaction per outcome at once on the shared pool.
  const record = async (items: readonly Item[]): Promise<void> => {
    try {
      const effects = await inOneTransaction(items);
      items.forEach((item, i) => {
        item.resolve(effects[i]);
      });
    } catch (error) {
      if (items.length === 1) {
        (items[0] as Item).reject(error);
        return;
      }
      const half = Math.ceil(items.length / 2);
      await record(items.slice(0, half));
      await record(items.slice(half));
    }
  };
  const flush = async () => {
    while (queue.length > 0) {
      const batch = queue.slice(0, WEBHOOK_OUTCOME_BATCH_ROWS_MAX);
      queue = queue.slice(batch.length);
      // The attempts' foreign-key locks follow the batch's order: the order every batch takes its locks in.
      batch.sort(
        (a, b) =>
          compare(a.pending.delivery.subscriptionId, b.pending.delivery.subscriptionId) ||
          compare(a.pending.delivery.id, b.pending.delivery.id),
      );
      await record(batch);
    }
    flushing = false;
  };
  return (pending) =>
    new Promise((resolve, reject) => {
      queue.push({ pending, resolve, reject });
      if (flushing) return;
      flushing = true;
      // After the continuations already queued: outcomes that finished in the same turn share the first batch.
      setImmediate(() => void flush());
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
  current: DeliveryToSend | undefined,
  startedAt: Date,
): Promise<AttemptOutcome | undefined> {
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
  const target = {
    ...delivery,
    url: current.url,
    payloadFormat: current.payloadFormat,
    apiVersion: current.apiVersion,
  };
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

/**
 * Logs the attempts and, for each whose lease this dispatcher still holds, moves its delivery on its
 * schedule; returns what each outcome did (undefined where the lease was lost). Statements are per batch,
 * not per outcome. Locks are taken subscriptions first, then deliveries, each in id order: the order
 * recover takes them in, so the two cannot deadlock.
 */
async function recordOutcomes(
  tx: Queryable,
  deps: Deps,
  options: DispatcherOptions,
  batch: readonly PendingOutcome[],
): Promise<(WebhookDeliveryOutcome | undefined)[]> {
  const attempts = batch.map(({ delivery, outcome, random }) => ({
    ...outcome,
    delivery,
    random,
    success: isSuccess(outcome.result),
    statusCode: outcome.result.kind === 'response' ? outcome.result.statusCode : null,
  }));
  await insertAttempts(
    tx,
    attempts.map((a) => ({
      deliveryId: a.delivery.id,
      attempt: a.delivery.attempts,
      startedAt: a.startedAt,
      durationMs: a.finishedAt.getTime() - a.startedAt.getTime(),
      statusCode: a.statusCode,
      errorClass: a.result.kind === 'error' ? a.result.errorClass : null,
      responseBody: a.result.kind === 'response' ? a.result.body : a.result.message,
    })),
  );
  // A success leaves a subscription whose failure window was closed at the claim alone: locking its row
  // would commit every outcome of a subscription one after another. (A failure recorded meanwhile keeps its
  // window open until the next success closes it.)
  const touching = (a: (typeof attempts)[number]) =>
    a.fromEndpoint && (!a.success || a.delivery.subscriptionFailing);
  const subscriptions = new Map<string, Subscription>();
  const subscriptionOwners = new Map(
    attempts.filter(touching).map((a) => [a.delivery.subscriptionId, a.delivery.organizationId]),
  );
  for (const id of [...subscriptionOwners.keys()].sort(compare)) {
    const found = await findSubscription(tx, subscriptionOwners.get(id) as string, id, { forUpdate: true });
    if (found) subscriptions.set(id, found);
  }
  const states = await lockDeliveries(
    tx,
    attempts.map((a) => a.delivery.id),
  );
  const planned = attempts.map((a) => {
    const state = states.get(a.delivery.id);
    // The lease ran out and another dispatcher took the delivery: the attempt is logged, its outcome is theirs.
    if (state?.status !== 'delivering' || state.attempts !== a.delivery.attempts) return undefined;
    const next = nextAttempt(
      state.attempts - state.attemptsBeforeRequeue,
      a.success
        ? { kind: 'success' }
        : {
            kind: 'failure',
            statusCode: a.statusCode ?? undefined,
            retryAfterSeconds: a.result.kind === 'response' ? a.result.retryAfterSeconds : undefined,
          },
      options.settings.retryScheduleSeconds,
      a.finishedAt,
      a.random,
    );
    return { ...a, next };
  });
  const recorded = await finishDeliveries(
    tx,
    planned
      .filter((p) => p !== undefined)
      .map((p) => ({
        deliveryId: p.delivery.id,
        attempt: p.delivery.attempts,
        status: DELIVERY_STATUS_AFTER[p.next.kind],
        nextAttemptAt: p.next.kind === 'retry' ? p.next.at : p.finishedAt,
        statusCode: p.statusCode,
        error: p.result.kind === 'error' ? `${p.result.errorClass}: ${p.result.message}` : null,
        finishedAt: p.finishedAt,
      })),
  );
  const effects = planned.map((p) =>
    p && recorded.has(deliveryAttemptKey(p.delivery.id, p.delivery.attempts)) ? p : undefined,
  );
  for (const subscription of subscriptions.values()) {
    await recordEndpointHealth(
      tx,
      deps,
      options,
      subscription,
      effects.filter(
        (e): e is NonNullable<typeof e> =>
          e !== undefined && e.delivery.subscriptionId === subscription.id && touching(e),
      ),
    );
  }
  return effects.map((e) => e && OUTCOME_AFTER[e.next.kind]);
}

/** The delivery's status after an attempt, by what comes next. */
const DELIVERY_STATUS_AFTER = { done: 'succeeded', retry: 'pending', exhausted: 'exhausted' } as const;
/** The same, as /metrics counts it. */
const OUTCOME_AFTER = { done: 'succeeded', retry: 'retrying', exhausted: 'exhausted' } as const;

const isSuccess = (result: AttemptOutcome['result']) =>
  result.kind === 'response' && result.statusCode >= 200 && result.statusCode < 300;

/**
 * Applies a subscription's recorded outcomes in turn: a success closes the endpoint's failure window; a
 * failure opens it, and 410 or a long one disables it. The row is written once, with where they left it.
 */
async function recordEndpointHealth(
  tx: Queryable,
  deps: Deps,
  options: DispatcherOptions,
  subscription: Subscription,
  outcomes: readonly { success: boolean; statusCode: number | null; finishedAt: Date }[],
): Promise<void> {
  let health = subscription;
  let disabledBy: { reason: 'endpoint_gone' | 'failing_too_long'; failingSince: Date; at: Date } | undefined;
  for (const { success, statusCode, finishedAt } of outcomes) {
    if (success) {
      if (health.failingSince !== null) health = { ...health, failingSince: null, updatedAt: finishedAt };
      continue;
    }
    const failingSince = health.failingSince ?? finishedAt;
    const gone = statusCode === 410;
    const disable =
      health.status === 'enabled' &&
      (gone || shouldDisable(failingSince, finishedAt, options.settings.disableAfterFailingMs));
    health = { ...health, failingSince, updatedAt: finishedAt };
    if (disable) {
      disabledBy = { reason: gone ? 'endpoint_gone' : 'failing_too_long', failingSince, at: finishedAt };
      health = { ...health, status: 'disabled', disabledReason: disabledBy.reason };
    }
  }
  if (health === subscription) return;
  await saveSubscription(tx, health);
  if (disabledBy) {
    await recordEvents(tx, deps, [
      {
        id: deps.newId('event'),
        organizationId: subscription.organizationId,
        type: 'webhook_subscription.disabled',
        resourceId: subscription.id,
        data: {
          subscription_id: subscription.id,
          url: subscription.url,
          reason: disabledBy.reason,
          failing_since: disabledBy.failingSince.toISOString(),
        },
        createdAt: disabledBy.at,
      },
    ]);
  }
}

/** Sends in flight in one process at most; a tick claims only as many as there are free slots. */
export const WEBHOOK_DISPATCH_CONCURRENCY_MAX = 256;

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
  await Promise.all(sendClaimed(deps, options, claimed, onError, batchedRecorder(deps, options)));
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
  const record = batchedRecorder(deps, options);
  let claiming: Promise<void> | undefined;
  let stopped = false;
  // While the last claim found work, or found none only because every slot was taken (sends still in flight
  // hold them), there is likely a backlog: a freed slot is refilled at once instead of
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
        backlog = claimed.length > 0 || inFlight.size > 0;
        for (const sending of sendClaimed(deps, options, claimed, onError, record)) {
          const send: Promise<void> = sending.catch(onError).finally(() => {
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
        .then((unlisten) => {
          // A commit between the first claim and the LISTEN taking effect notified nobody: look once more.
          void tick();
          return unlisten;
        })
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
