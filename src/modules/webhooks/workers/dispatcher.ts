/**
 * Delivers outbox events to subscribers, at least once. Each tick claims due deliveries with
 * FOR UPDATE SKIP LOCKED (bounded per subscription, so one slow endpoint cannot take every slot), leases
 * them, commits, then sends them concurrently with no transaction open, each signed afresh. Every attempt
 * is logged; failures are rescheduled with backoff and jitter; an endpoint that answers 410 Gone, or keeps
 * failing past the disable period, is disabled and an event says so. No delivery can loop: an attempt that
 * fails inside Mkoba, or whose outcome cannot be recorded, is a failed attempt like any other. A dispatcher
 * killed mid-send leaves leases that expire, and another dispatcher (or the same one restarted) sends
 * again: receivers dedupe on the event id. One that is stopped lets its sends finish for
 * WORKER_HAND_BACK_AFTER_MS, then releases the deliveries still unanswered, due again at once.
 */
import type { Deps } from '../../../app/deps.ts';
import { WORKER_HAND_BACK_AFTER_MS } from '../../../config.ts';
import { WEBHOOK_DELIVERIES_CHANNEL } from '../../../store/repositories/outbox.ts';
import { type ClaimedDelivery, claimDueDeliveries } from '../repository/claims.ts';
import type { DispatcherOptions } from './attempts.ts';
import { batchedRecorder } from './outcomes.ts';
import { sendClaimed } from './sending.ts';

// The options' type, for the dispatcher's callers.
export type { DispatcherOptions } from './attempts.ts';

/** The poll of a store that cannot notify (one with notifications polls at settings.pollIntervalMs). */
export const WEBHOOK_DISPATCH_INTERVAL_MS = 100;
/** Deliveries one claim takes at most. */
export const WEBHOOK_DISPATCH_BATCH_ROWS = 128;
/** Extra lease beyond the send time-out, so a slow but live dispatcher keeps its claim. */
const LEASE_MARGIN_MS = 5_000;

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
  // Fired when a stopping dispatcher gives up on sends in flight: their deliveries are handed back.
  const handBack = new AbortController();
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
        for (const sending of sendClaimed(deps, options, claimed, onError, record, handBack.signal)) {
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
  const listening = listenForDeliveries(deps, () => void tick(), onError);
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
      // Sends in flight get a moment to finish; those still waiting then are released, due again at once.
      const giveUp = setTimeout(() => handBack.abort(), WORKER_HAND_BACK_AFTER_MS);
      try {
        await (await listening)?.();
        await claiming;
        await Promise.all([...inFlight]);
      } finally {
        clearTimeout(giveUp);
      }
    },
  };
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
