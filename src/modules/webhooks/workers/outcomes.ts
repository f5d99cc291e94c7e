/**
 * Recording attempts' outcomes: batched into few transactions, each attempt logged, each delivery moved on
 * its retry schedule, and each endpoint's failure window opened, closed, or ended by disabling it.
 */
import type { Deps } from '../../../app/deps.ts';
import { recordEvent } from '../../../app/events.ts';
import { type NextStep, nextAttempt, shouldDisable } from '../../../domain/webhooks.ts';
import type { WebhookDeliveryOutcome } from '../../../metrics.ts';
import { QueryPipeline } from '../../../store/queryPipeline.ts';
import type { Queryable } from '../../../store/store.ts';
import type { ClaimedDelivery } from '../repository/claims.ts';
import {
  type DeliveryState,
  deliveryAttemptKey,
  finishDeliveries,
  insertAttempts,
  lockDeliveries,
} from '../repository/deliveries.ts';
import { findSubscription, type Subscription, saveSubscription } from '../repository/subscriptions.ts';
import {
  type AttemptOutcome,
  type DispatcherOptions,
  isSuccess,
  type OutcomeRecorder,
  type PendingOutcome,
} from './attempts.ts';

/** Outcomes committed together at most. */
export const WEBHOOK_OUTCOME_BATCH_ROWS_MAX = 128;

/**
 * Outcomes that finish while another batch commits wait and go in the next transaction, so a busy
 * dispatcher pays one commit (and one WAL flush) for many, and a handful of statements for the whole batch.
 * One outcome that cannot be recorded never holds back the others (below).
 */
export function batchedRecorder(deps: Deps, options: DispatcherOptions): OutcomeRecorder {
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

/** An attempt as a batch records it: its outcome, with its success and HTTP status worked out once. */
interface AttemptToRecord extends AttemptOutcome {
  delivery: ClaimedDelivery;
  random: number;
  success: boolean;
  statusCode: number | null;
}

/** An attempt whose delivery this dispatcher still holds, with the step the delivery's schedule takes next. */
interface PlannedAttempt extends AttemptToRecord {
  next: NextStep;
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
  const deliveryIds = attempts.map((a) => a.delivery.id);
  let subscriptions = new Map<string, Subscription>();
  let states: Map<string, DeliveryState>;
  if (attempts.some(touchesSubscription)) {
    await logAttempts(tx, attempts);
    subscriptions = await lockTouchedSubscriptions(tx, attempts);
    states = await lockDeliveries(tx, deliveryIds);
  } else {
    // No subscription row to lock first: the log and the delivery locks go in one round trip (with BEGIN).
    const pipeline = new QueryPipeline(tx);
    [, states] = await Promise.all([logAttempts(pipeline, attempts), lockDeliveries(pipeline, deliveryIds)]);
  }
  const planned = attempts.map((a) => planNext(a, states.get(a.delivery.id), options));
  const effects = await finishPlanned(tx, planned);
  for (const subscription of subscriptions.values()) {
    await recordEndpointHealth(
      tx,
      deps,
      options,
      subscription,
      effects.filter(
        (e): e is PlannedAttempt =>
          e !== undefined && e.delivery.subscriptionId === subscription.id && touchesSubscription(e),
      ),
    );
  }
  return effects.map((e) => e && OUTCOME_AFTER[e.next.kind]);
}

/** Logs every attempt of the batch, whoever holds its delivery now. */
async function logAttempts(tx: Queryable, attempts: readonly AttemptToRecord[]): Promise<void> {
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
}

/**
 * Whether an attempt changes its subscription's failure window. A success leaves a subscription whose failure
 * window was closed at the claim alone: locking its row would commit every outcome of a subscription one
 * after another. (A failure recorded meanwhile keeps its window open until the next success closes it.)
 */
const touchesSubscription = (a: AttemptToRecord) =>
  a.fromEndpoint && (!a.success || a.delivery.subscriptionFailing);

/** Locks, in id order, the subscriptions whose failure window the batch changes; by id. */
async function lockTouchedSubscriptions(
  tx: Queryable,
  attempts: readonly AttemptToRecord[],
): Promise<Map<string, Subscription>> {
  const subscriptions = new Map<string, Subscription>();
  const subscriptionOwners = new Map(
    attempts.filter(touchesSubscription).map((a) => [a.delivery.subscriptionId, a.delivery.organizationId]),
  );
  for (const id of [...subscriptionOwners.keys()].sort(compare)) {
    const found = await findSubscription(tx, subscriptionOwners.get(id) as string, id, { forUpdate: true });
    if (found) subscriptions.set(id, found);
  }
  return subscriptions;
}

/** The step an attempt's delivery takes next, or undefined when its lease is no longer this dispatcher's. */
function planNext(
  a: AttemptToRecord,
  state: DeliveryState | undefined,
  options: DispatcherOptions,
): PlannedAttempt | undefined {
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
}

/** Moves each planned delivery on, one statement for all; the plans recorded, undefined where the lease was lost. */
async function finishPlanned(
  tx: Queryable,
  planned: readonly (PlannedAttempt | undefined)[],
): Promise<(PlannedAttempt | undefined)[]> {
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
  return planned.map((p) =>
    p && recorded.has(deliveryAttemptKey(p.delivery.id, p.delivery.attempts)) ? p : undefined,
  );
}

/** The delivery's status after an attempt, by what comes next. */
const DELIVERY_STATUS_AFTER = { done: 'succeeded', retry: 'pending', exhausted: 'exhausted' } as const;
/** The same, as /metrics counts it. */
const OUTCOME_AFTER = { done: 'succeeded', retry: 'retrying', exhausted: 'exhausted' } as const;

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
    await recordEvent(tx, deps, disabledBy.at, {
      organizationId: subscription.organizationId,
      type: 'webhook_subscription.disabled',
      resourceId: subscription.id,
      data: {
        subscription_id: subscription.id,
        url: subscription.url,
        reason: disabledBy.reason,
        failing_since: disabledBy.failingSince.toISOString(),
      },
    });
  }
}
