/**
 * How the MoMo simulator moves an accepted request to its outcome: scheduled work (counted, so the simulator
 * knows when it is idle), the final status, and the callback sent to the request's X-Callback-Url once (or
 * twice, late, cut short, or never, as its number says), and again as MTN retries one nobody answers.
 */
import { waitUntil as waitForCondition } from '../plumbing.ts';
import type { MomoSimulatorBehaviour } from './numbers.ts';
import {
  MOMO_SIMULATOR_CALLBACK_TIMEOUT_MS,
  type MomoCallbackDelivery,
  type MomoCallbackRetries,
  type MomoState,
  presented,
  type StoredRequest,
} from './state.ts';

/** Moves a freshly created request towards its outcome, as its number says. */
export function advance(state: MomoState, entry: StoredRequest, behaviour: MomoSimulatorBehaviour): void {
  const { processingMs, delayedSettlementMs, lateCallbackDelayMs } = state.config;
  const body = () => JSON.stringify(presented(entry.resource));
  switch (behaviour.kind) {
    case 'stay_pending':
      return;
    case 'fail':
      schedule(state, processingMs, async () => {
        finalize(state, entry, behaviour.reasons[entry.product]);
        await deliver(state, entry, body());
      });
      return;
    case 'succeed_after_delay':
      schedule(state, delayedSettlementMs, async () => {
        finalize(state, entry, undefined);
        await deliver(state, entry, body());
      });
      return;
    case 'duplicate_callback':
      schedule(state, processingMs, async () => {
        finalize(state, entry, undefined);
        await deliver(state, entry, body());
        await deliver(state, entry, body());
      });
      return;
    case 'late_callback':
      schedule(state, processingMs, () => {
        finalize(state, entry, undefined);
        schedule(state, lateCallbackDelayMs, () => deliver(state, entry, body()));
      });
      return;
    case 'malformed_callback':
      schedule(state, processingMs, async () => {
        finalize(state, entry, undefined);
        const whole = body();
        await deliver(state, entry, whole.slice(0, Math.floor(whole.length / 2)));
      });
      return;
    case 'no_callback':
      schedule(state, processingMs, () => finalize(state, entry, undefined));
      return;
    default:
      schedule(state, processingMs, async () => {
        finalize(state, entry, undefined);
        await deliver(state, entry, body());
      });
  }
}

/** Runs `task` after `ms`, counting it as scheduled work until it (and its callbacks) are done. */
function schedule(state: MomoState, ms: number, task: () => Promise<void> | void): void {
  state.busy += 1;
  const timer = setTimeout(async () => {
    state.timers.delete(timer);
    try {
      await task();
    } finally {
      state.busy -= 1;
      notify(state);
    }
  }, ms);
  state.timers.add(timer);
}

/** A request's final status: SUCCESSFUL with a new financialTransactionId, or FAILED with MTN's reason. */
function finalize(state: MomoState, entry: StoredRequest, reason: string | undefined): void {
  if (reason === undefined) {
    state.financialTransactionSequence += 1;
    entry.resource.status = 'SUCCESSFUL';
    entry.resource.financialTransactionId = String(1_700_000_000 + state.financialTransactionSequence);
  } else {
    entry.resource.status = 'FAILED';
    entry.resource.reason = reason;
  }
}

/** Sends a request's callback; one that gets no answer is sent again as MTN's retries say. */
async function deliver(state: MomoState, entry: StoredRequest, body: string, attempt = 0): Promise<void> {
  if (entry.callbackUrl === undefined || state.closed) return;
  const { callbackMethod, callbackRetries } = state.config;
  const delivery: MomoCallbackDelivery = {
    product: entry.product,
    referenceId: entry.referenceId,
    externalId: entry.resource.externalId,
    url: entry.callbackUrl,
    method: callbackMethod,
    body,
    attempt,
    at: Date.now(),
  };
  try {
    const response = await fetch(entry.callbackUrl, {
      method: callbackMethod,
      headers: { 'Content-Type': 'application/json' },
      body,
      signal: AbortSignal.timeout(MOMO_SIMULATOR_CALLBACK_TIMEOUT_MS),
    });
    await response.arrayBuffer();
    delivery.status = response.status;
  } catch (error) {
    delivery.error = error instanceof Error ? error.message : String(error);
  }
  state.callbacks.push(delivery);
  // Any HTTP answer is an answer (MTN retries only a callback "the partner system does not respond" to).
  const delay = delivery.error === undefined ? undefined : retryDelayMs(callbackRetries, attempt);
  if (delay !== undefined) schedule(state, delay, () => deliver(state, entry, body, attempt + 1));
}

/** How long after attempt `attempt` failed the next is sent, or undefined when there is none. */
function retryDelayMs(retries: MomoCallbackRetries | false, attempt: number): number | undefined {
  if (retries === false) return undefined;
  if (attempt < retries.quickCount) return retries.quickIntervalMs;
  if (attempt < retries.quickCount + retries.shortBlockCount) return retries.shortBlockIntervalMs;
  return undefined;
}

function notify(state: MomoState): void {
  for (const listener of [...state.listeners]) listener();
}

/** Resolves with `ready()`'s value once it has one, checking now and after each piece of scheduled work. */
export function waitUntil<T>(
  state: MomoState,
  ready: () => T | undefined,
  timeoutMs: number,
  what: string,
): Promise<T> {
  return waitForCondition(state.listeners, ready, timeoutMs, `MoMo: ${what}`);
}
