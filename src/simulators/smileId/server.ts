/**
 * The Smile ID simulator's HTTP(S) server: reads and records each request, routes it to its endpoint (the
 * four lookups, /job_status, /services) after the checks they share (method, forced failures, a JSON
 * object body), and writes the answer. Also the simulator's controls.
 */
import type http from 'node:http';
import { jsonObjectOf } from '../../domain/json.ts';
import {
  callbacksIdle,
  cancelScheduled,
  deliverScheduledNow,
  type ScheduledCallbackControls,
} from '../scheduledCallbacks.ts';
import { closeServer, listenSimulator, onBodyRead } from '../shared.ts';
import { send } from './callbacks.ts';
import { jobStatus, LOOKUPS, SMILE_ID_PATHS, services, submitLookup } from './jobs.ts';
import {
  errorAnswer,
  newSmileIdState,
  SMILE_ID_ERRORS,
  SMILE_ID_SIMULATOR_MAX_BODY_BYTES,
  SmileIdAnswer,
  type SmileIdCallbackDelivery,
  type SmileIdJob,
  type SmileIdReceivedRequest,
  type SmileIdSimulatorOptions,
  type SmileIdState,
} from './state.ts';
import { SMILE_ID_SIMULATOR_CERTIFICATE_PEM, SMILE_ID_SIMULATOR_PRIVATE_KEY_PEM } from './tls.ts';

export interface SmileIdSimulator extends ScheduledCallbackControls {
  /** The origin, without a trailing slash (`https://…` when started with `tls`). */
  url: string;
  /** The API's base URL, `${url}/v1`: a client's `sid_server`. */
  apiUrl: string;
  partnerId: string;
  apiKey: string;
  /** Every request received, in arrival order. */
  requests: SmileIdReceivedRequest[];
  /** Every callback POSTed, with the receiver's answer. */
  deliveries: SmileIdCallbackDelivery[];
  /** The job with this job_id, as the simulator keeps it. */
  job(jobId: string): SmileIdJob | undefined;
  /** Marks a job that never completes as complete (its callback is not sent: polling finds it). */
  completeJob(jobId: string): void;
}

export async function startSmileIdSimulator(
  options: SmileIdSimulatorOptions = {},
): Promise<SmileIdSimulator> {
  const state = newSmileIdState(options);
  const handler = (request: http.IncomingMessage, response: http.ServerResponse) =>
    receive(state, request, response);
  const tls = { cert: SMILE_ID_SIMULATOR_CERTIFICATE_PEM, key: SMILE_ID_SIMULATOR_PRIVATE_KEY_PEM };
  const { server, url } = await listenSimulator(handler, {
    port: options.port,
    host: options.host,
    tls: options.tls ? tls : undefined,
    afterAnswer: options.afterAnswer,
    beforeAnswer: options.beforeAnswer,
  });
  const simulator: SmileIdSimulator = {
    url,
    apiUrl: `${url}/v1`,
    partnerId: state.config.partnerId,
    apiKey: state.config.apiKey,
    requests: state.requests,
    deliveries: state.deliveries,
    job: (jobId) => state.jobs.get(jobId),
    completeJob(jobId) {
      const job = state.jobs.get(jobId);
      if (job) job.complete = true;
    },
    failNext(count, status) {
      state.failures = { remaining: count, status };
    },
    deliverPendingCallbacks: () => deliverScheduledNow(state, (callback) => send(state, callback)),
    idle: () => callbacksIdle(state),
    async close() {
      cancelScheduled(state);
      await callbacksIdle(state);
      await closeServer(server);
    },
  };
  return simulator;
}

/** Reads a request's body (past the limit it is dropped), records the request, then answers it. */
function receive(state: SmileIdState, request: http.IncomingMessage, response: http.ServerResponse): void {
  onBodyRead(request, SMILE_ID_SIMULATOR_MAX_BODY_BYTES, (rawBody, tooLarge) => {
    const path = new URL(request.url ?? '/', 'http://simulator').pathname;
    const method = request.method ?? 'GET';
    state.requests.push({ method, path, headers: request.headers, rawBody, at: state.config.now() });
    const answer = tooLarge ? errorAnswer(SMILE_ID_ERRORS.invalidJson) : route(state, method, path, rawBody);
    const text = JSON.stringify(answer.body);
    response.writeHead(answer.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
    });
    response.end(text);
  });
}

function route(state: SmileIdState, method: string, path: string, rawBody: string): SmileIdAnswer {
  const lookup = LOOKUPS[path];
  const known = lookup !== undefined || path === SMILE_ID_PATHS.jobStatus || path === SMILE_ID_PATHS.services;
  if (!known) return new SmileIdAnswer(404, { error: 'Not Found' });
  if (state.failures.remaining > 0) {
    state.failures.remaining -= 1;
    return errorAnswer(SMILE_ID_ERRORS.systemError, undefined, state.failures.status);
  }
  if (path === SMILE_ID_PATHS.services) {
    return method === 'GET' ? services() : new SmileIdAnswer(405, { error: 'Method Not Allowed' });
  }
  if (method !== 'POST') return new SmileIdAnswer(405, { error: 'Method Not Allowed' });
  const body = jsonObjectOf(rawBody);
  if (body === undefined) return errorAnswer(SMILE_ID_ERRORS.invalidJson);
  if (lookup !== undefined) return submitLookup(state, lookup, body);
  return jobStatus(state, body);
}
