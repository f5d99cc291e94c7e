/**
 * How the simulator POSTs an async job's result to its `callback_url`: the result body with a fresh
 * `timestamp` and the `signature` it gives (Smile ID signs callbacks as it signs requests), scheduled as the
 * job's number says (once, late, twice, or never), each POST recorded with the receiver's answer.
 */
import { scheduleCallback, trackInFlight } from '../scheduledCallbacks.ts';
import type { SmileIdCallbackBehaviour } from './behaviours.ts';
import { signedNow } from './signature.ts';
import {
  type ScheduledCallback,
  SMILE_ID_SIMULATOR_CALLBACK_TIMEOUT_MS,
  type SmileIdCallbackDelivery,
  type SmileIdJob,
  type SmileIdState,
} from './state.ts';

/** The result as a callback (and /job_status) carries it: signed now. */
export function signedResult(state: SmileIdState, job: SmileIdJob): Record<string, unknown> {
  const { partnerId, apiKey, now } = state.config;
  return { ...job.result, ...signedNow(partnerId, apiKey, now()) };
}

function schedule(state: SmileIdState, job: SmileIdJob, url: string, delayMs: number): void {
  scheduleCallback<ScheduledCallback>(state, { url, job }, delayMs, (callback) => send(state, callback));
}

/** Schedules an async job's callback(s) as its number says. */
export function scheduleCallbacks(
  state: SmileIdState,
  job: SmileIdJob,
  url: string,
  behaviour: SmileIdCallbackBehaviour,
): void {
  const { callbackDelayMs, lateCallbackDelayMs } = state.config;
  if (behaviour === 'none') return;
  schedule(state, job, url, behaviour === 'late' ? lateCallbackDelayMs : callbackDelayMs);
  if (behaviour === 'twice') schedule(state, job, url, callbackDelayMs);
}

/** POSTs a scheduled callback now (once: one already sent is not sent again). */
export function send(state: SmileIdState, callback: ScheduledCallback): void {
  if (!state.scheduled.delete(callback)) return;
  const body = JSON.stringify(signedResult(state, callback.job));
  const at = state.config.now();
  const attempt = postJson(callback.url, body).then((outcome) => {
    state.deliveries.push({ url: callback.url, body, at, ...outcome });
  });
  trackInFlight(state, attempt);
}

/** One POST, its answer's status or why it failed; the simulator does not retry. */
async function postJson(
  url: string,
  body: string,
): Promise<Pick<SmileIdCallbackDelivery, 'status' | 'error'>> {
  try {
    const signal = AbortSignal.timeout(SMILE_ID_SIMULATOR_CALLBACK_TIMEOUT_MS);
    const headers = { 'content-type': 'application/json' };
    const response = await fetch(url, { method: 'POST', headers, body, signal });
    await response.body?.cancel();
    return { status: response.status };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
