/**
 * How the Daraja simulator POSTs asynchronous results: callbacks are scheduled (and can be sent early), each
 * POST is recorded as a delivery with the receiver's answer, and an outcome decides which callbacks a result
 * gets (once, twice, late, cut short, or none).
 */
import { scheduleCallback, trackInFlight } from '../scheduledCallbacks.ts';
import { sendCallback } from '../shared.ts';
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
  scheduleCallback<ScheduledCallback>(state, { url, body, onSend }, delayMs, (callback) =>
    send(state, callback),
  );
}

/** POSTs a scheduled callback now (once: a callback already sent is not sent again). */
export function send(state: DarajaState, callback: ScheduledCallback): void {
  if (!state.scheduled.delete(callback)) return;
  callback.onSend?.();
  const delivery: DarajaCallbackDelivery = { url: callback.url, body: callback.body(), at: new Date() };
  const request = { method: 'POST', headers: { 'content-type': 'application/json' }, body: delivery.body };
  const attempt = (async () => {
    Object.assign(delivery, await sendCallback(callback.url, request, DARAJA_SIMULATOR_CALLBACK_TIMEOUT_MS));
    state.deliveries.push(delivery);
  })();
  trackInFlight(state, attempt);
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
