/**
 * How the Daraja simulator POSTs asynchronous results: callbacks are scheduled (and can be sent early), each
 * POST is recorded as a delivery with the receiver's answer, and an outcome decides which callbacks a result
 * gets (once, twice, late, cut short, or none).
 */
import type { DarajaSimulatedOutcome } from './behaviours.ts';
import {
  DARAJA_SIMULATOR_CALLBACK_TIMEOUT_MS,
  type DarajaCallbackDelivery,
  type DarajaState,
  type ScheduledCallback,
} from './state.ts';

export function schedule(
  state: DarajaState,
  url: string,
  body: () => string,
  delayMs: number,
  onSend?: () => void,
): void {
  if (state.closed) return;
  const callback: ScheduledCallback = {
    url,
    body,
    onSend,
    timer: setTimeout(() => send(state, callback), delayMs),
  };
  callback.timer.unref();
  state.scheduled.add(callback);
}

/** POSTs a scheduled callback now (once: a callback already sent is not sent again). */
export function send(state: DarajaState, callback: ScheduledCallback): void {
  if (!state.scheduled.delete(callback)) return;
  callback.onSend?.();
  const delivery: DarajaCallbackDelivery = { url: callback.url, body: callback.body(), at: new Date() };
  const attempt = (async () => {
    try {
      const response = await fetch(callback.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: delivery.body,
        signal: AbortSignal.timeout(DARAJA_SIMULATOR_CALLBACK_TIMEOUT_MS),
      });
      await response.arrayBuffer();
      delivery.status = response.status;
    } catch (error) {
      delivery.error = error instanceof Error ? error.message : String(error);
    }
    state.deliveries.push(delivery);
  })();
  state.inFlight.add(attempt);
  void attempt.finally(() => state.inFlight.delete(attempt));
}

/** Waits for callbacks already being POSTed (not those scheduled for later). */
export async function idle(state: DarajaState): Promise<void> {
  while (state.inFlight.size > 0) await Promise.allSettled([...state.inFlight]);
}

/** Schedules the callback(s) an outcome calls for; `complete` marks the money moved. */
export function scheduleResult(
  state: DarajaState,
  outcome: DarajaSimulatedOutcome,
  url: string,
  body: () => unknown,
  complete: () => void,
): void {
  const json = () => JSON.stringify(body());
  switch (outcome.kind) {
    case 'complete':
      if (outcome.afterDelayedSettlement) {
        // Still being processed until the delay is over (or the callback is delivered early).
        schedule(state, url, json, state.config.delayedSettlementMs, complete);
        return;
      }
      complete();
      scheduleCompletedCallback(state, outcome.callback, url, json);
      return;
    case 'decline':
    case 'hang':
      complete();
      schedule(state, url, json, state.config.callbackDelayMs);
      return;
    case 'never_complete':
    case 'queue_timeout':
    case 'refuse':
      return;
  }
}

/** The callback of money that moved, sent as its number says. */
function scheduleCompletedCallback(
  state: DarajaState,
  callback: 'once' | 'twice' | 'late' | 'malformed',
  url: string,
  json: () => string,
): void {
  const { callbackDelayMs, lateCallbackDelayMs } = state.config;
  switch (callback) {
    case 'once':
      schedule(state, url, json, callbackDelayMs);
      return;
    case 'twice': {
      const text = json();
      schedule(state, url, () => text, callbackDelayMs);
      schedule(state, url, () => text, callbackDelayMs);
      return;
    }
    case 'late':
      schedule(state, url, json, lateCallbackDelayMs);
      return;
    case 'malformed': {
      const text = json();
      schedule(state, url, () => text.slice(0, Math.floor(text.length / 2)), callbackDelayMs);
      return;
    }
  }
}
