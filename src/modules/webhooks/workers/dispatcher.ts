/**
 * Delivers outbox events to subscribers, at least once. Each tick claims due deliveries with
 * FOR UPDATE SKIP LOCKED, leases them, commits, then sends them with no transaction open, each signed
 * afresh, at most the subscription's in-flight limit at once (so one slow endpoint cannot take every slot).
 * The long-running dispatcher holds up to WEBHOOK_SUBSCRIPTION_QUEUE_ROUNDS rounds of a subscription's
 * deliveries, so a freed slot is refilled from its queue at once instead of after an outcome commit and a
 * claim; no other dispatcher claims that subscription's rows meanwhile, so the limit holds across them. Every attempt
 * is logged; failures are rescheduled with backoff and jitter; an endpoint that answers 410 Gone, or keeps
 * failing past the disable period, is disabled and an event says so. No delivery can loop: an attempt that
 * fails inside Mkoba, or whose outcome cannot be recorded, is a failed attempt like any other. A dispatcher
 * killed mid-send leaves leases that expire, and another dispatcher (or the same one restarted) sends
 * again: receivers dedupe on the event id. One that is stopped lets its sends finish for
 * WORKER_HAND_BACK_AFTER_MS, then releases the deliveries still unanswered, due again at once; those still
 * queued are released at once.
 */
import { randomUUID } from 'node:crypto';
import type { Deps } from '../../../app/deps.ts';
import { WORKER_HAND_BACK_AFTER_MS } from '../../../config.ts';
import { WEBHOOK_DELIVERIES_CHANNEL } from '../../../store/repositories/outbox.ts';
import { type ClaimedDelivery, type ClaimQueue, claimDueDeliveries } from '../repository/claims.ts';
import type { DispatcherOptions } from './attempts.ts';
import { batchedRecorder } from './outcomes.ts';
import { sendClaimed } from './sending.ts';
import { SendSlots } from './sendSlots.ts';

// The options' type, for the dispatcher's callers.
export type { DispatcherOptions } from './attempts.ts';

/** The poll of a store that cannot notify (one with notifications polls at settings.pollIntervalMs). */
export const WEBHOOK_DISPATCH_INTERVAL_MS = 100;
/** Deliveries one claim takes at most. */
export const WEBHOOK_DISPATCH_BATCH_ROWS = 128;
/** Extra lease beyond the send time-out, so a slow but live dispatcher keeps its claim. */
const LEASE_MARGIN_MS = 5_000;

/** Sends in flight in one process at most. */
export const WEBHOOK_DISPATCH_CONCURRENCY_MAX = 256;

/**
 * Rounds of a subscription's sends (its in-flight limit each) the long-running dispatcher holds leased: a
 * backlog drains at the receiver's pace, not at one outcome commit and one claim per slot.
 */
export const WEBHOOK_SUBSCRIPTION_QUEUE_ROUNDS = 8;

/** Deliveries one process holds leased at most, sending or queued; a tick claims only up to it. */
export const WEBHOOK_DISPATCH_HELD_MAX = 4_096;

async function claim(
  deps: Deps,
  options: DispatcherOptions,
  rowsMax: number,
  perSubscriptionMax: number,
  queue?: ClaimQueue,
): Promise<ClaimedDelivery[]> {
  const now = deps.now();
  return deps.store.transaction((tx) =>
    claimDueDeliveries(
      tx,
      now,
      new Date(now.getTime() + leaseMs(options)),
      rowsMax,
      perSubscriptionMax,
      queue,
    ),
  );
}

/** A send's lease: its time-out and a margin. */
const leaseMs = (options: DispatcherOptions) => options.settings.timeoutMs + LEASE_MARGIN_MS;

const sendSlots = (
  deps: Deps,
  options: DispatcherOptions,
  onError: (error: unknown) => void,
  owner?: string,
) =>
  new SendSlots({
    store: deps.store,
    now: () => deps.now(),
    perSubscription: options.settings.subscriptionConcurrency,
    processMax: WEBHOOK_DISPATCH_CONCURRENCY_MAX,
    ...(owner === undefined ? {} : { lease: { owner, ms: leaseMs(options) } }),
    onError,
  });

/**
 * One pass that waits for its sends: claim (one round per subscription: a pass keeps no queue), send
 * concurrently, record. Returns how many it claimed. Errors met on the way (each already counted as a
 * failed attempt) go to onError.
 */
export async function dispatchWebhooksOnce(
  deps: Deps,
  options: DispatcherOptions,
  onError: (error: unknown) => void = () => {},
): Promise<number> {
  const claimed = await claim(
    deps,
    options,
    WEBHOOK_DISPATCH_BATCH_ROWS,
    options.settings.subscriptionConcurrency,
  );
  const slots = sendSlots(deps, options, onError);
  await Promise.all(
    sendClaimed(deps, options, claimed, { onError, record: batchedRecorder(deps, options), slots }),
  );
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
  // Deliveries leased and not yet recorded, sending or queued.
  const held = new Set<Promise<void>>();
  const record = batchedRecorder(deps, options);
  const sendsAtOnce = options.settings.subscriptionConcurrency;
  const queue: ClaimQueue = { owner: randomUUID(), sendsAtOnce, roundMs: options.settings.timeoutMs };
  const slots = sendSlots(deps, options, onError, queue.owner);
  const queueDepth = sendsAtOnce * WEBHOOK_SUBSCRIPTION_QUEUE_ROUNDS;
  // Fired when a stopping dispatcher gives up on sends in flight: their deliveries are handed back.
  const handBack = new AbortController();
  let claiming: Promise<void> | undefined;
  let stopped = false;
  // While the last claim found work, or sends are still held, there is likely a backlog: a subscription whose
  // queue is down to its last round is topped up at once, so one fast subscription is not held to the poll.
  let backlog = false;
  // A wake-up that came while a claim ran: that claim may have read before the commit, so claim again.
  let wokenWhileClaiming = false;
  const tick = async () => {
    const free = Math.min(WEBHOOK_DISPATCH_BATCH_ROWS, WEBHOOK_DISPATCH_HELD_MAX - held.size);
    if (stopped || free <= 0) return;
    if (claiming) {
      wokenWhileClaiming = true;
      return;
    }
    wokenWhileClaiming = false;
    claiming = (async () => {
      try {
        // Rows claimed are leased: those a free slot takes are sent even if stop() came meanwhile, and stop()
        // waits for them; the rest are given back.
        const claimed = await claim(deps, options, free, queueDepth, queue);
        backlog = claimed.length > 0 || held.size > 0;
        const sending = { onError, record, slots, handBack: handBack.signal };
        track(held, claimed, sendClaimed(deps, options, claimed, sending), onError, (subscriptionId) => {
          if (backlog && !stopped && slots.queued(subscriptionId) <= sendsAtOnce) void tick();
        });
      } catch (error) {
        onError(error);
      }
    })();
    await claiming;
    claiming = undefined;
    if (wokenWhileClaiming) void tick();
  };
  const listening = listenForDeliveries(deps, () => void tick(), onError);
  const pollMs = deps.store.listen ? options.settings.pollIntervalMs : WEBHOOK_DISPATCH_INTERVAL_MS;
  const timer = setInterval(() => void tick(), pollMs);
  timer.unref();
  void tick();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      slots.close();
      // Sends in flight get a moment to finish; those still waiting then are released, due again at once.
      const giveUp = setTimeout(() => handBack.abort(), WORKER_HAND_BACK_AFTER_MS);
      try {
        await (await listening)?.();
        await claiming;
        await Promise.all([...held]);
      } finally {
        clearTimeout(giveUp);
      }
    },
  };
}

/** Holds each send in `held` until it is over, then tells `over` whose subscription it was for. */
function track(
  held: Set<Promise<void>>,
  claimed: readonly ClaimedDelivery[],
  sent: readonly Promise<void>[],
  onError: (error: unknown) => void,
  over: (subscriptionId: string) => void,
): void {
  sent.forEach((sending, i) => {
    const { subscriptionId } = claimed[i] as ClaimedDelivery;
    const send: Promise<void> = sending.catch(onError).finally(() => {
      held.delete(send);
      over(subscriptionId);
    });
    held.add(send);
  });
}

/**
 * Wakes the dispatcher whenever a commit queues deliveries, on a store that can notify; resolves to what
 * stops listening, or to undefined when listening failed.
 */
function listenForDeliveries(
  deps: Deps,
  wake: () => void,
  onError: (error: unknown) => void,
): Promise<(() => Promise<void>) | undefined> | undefined {
  if (!deps.store.listen) return undefined;
  return deps.store
    .listen(WEBHOOK_DELIVERIES_CHANNEL, wake)
    .then((unlisten) => {
      // A commit between the first claim and the LISTEN taking effect notified nobody: look once more.
      wake();
      return unlisten;
    })
    .catch((error: unknown) => {
      // Without notifications the poll still finds every delivery, later.
      onError(error);
      return undefined;
    });
}
