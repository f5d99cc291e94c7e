/**
 * The one way a call to an outside provider is recorded (rail partners' rail_partner_calls, the verification
 * provider's verification_provider_calls): the caller's row is written `sent` before the request leaves (if it
 * cannot be, the request is not sent and the caller's retry asks again), then completed once with the answer
 * or the failure and how long it took. A process killed in between leaves the row `sent`, which is what an
 * auditor sees of a request whose answer was never recorded; a database that refuses the completion leaves it
 * `sent` too, and the answer still reaches the caller. The answer's body is read here and handed on whole, so
 * what is recorded is what the caller reads. What a row keeps is the caller's to decide (never a body).
 */
import { performance } from 'node:perf_hooks';
import { jsonObjectOf } from '../domain/json.ts';
import { BlockedAddressError, type OutboundFetch, type OutboundRequestInit } from './guard.ts';

/** Why a request got no answer, in a word. */
export type OutboundCallFailure = 'timeout' | 'no_connection' | 'blocked_address';

/** How a recorded request ended: an answer (its body when it is a JSON object), or a failure without one. */
export type OutboundCallOutcome =
  | { answered: true; status: number; body: Record<string, unknown> | undefined }
  | { answered: false; failure: OutboundCallFailure };
export type OutboundCallEnd = OutboundCallOutcome & { durationMs: number };

/** One request's row: written `sent` before the request leaves, then completed once. */
export interface OutboundCallRecord {
  /** The row's id, named when its completion could not be recorded. */
  readonly id: string;
  sent(): Promise<void>;
  ended(end: OutboundCallEnd): Promise<void>;
}

/** Statuses whose Response cannot carry a body. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** Why a request got no answer: its own time-out, the address guard, or no connection. */
export function outboundFailureOf(error: unknown): OutboundCallFailure {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return 'timeout';
  if (error instanceof BlockedAddressError) return 'blocked_address';
  return 'no_connection';
}

/**
 * `fetch`, each request recorded by the record `recordFor` gives it (none: sent unrecorded): `sent` first,
 * then its end.
 */
export function recordedFetch(
  fetch: OutboundFetch,
  recordFor: (url: string, init: OutboundRequestInit) => OutboundCallRecord | undefined,
): OutboundFetch {
  return async (url, init = {}) => {
    const record = recordFor(url, init);
    if (record === undefined) return fetch(url, init);
    await record.sent();
    const started = performance.now();
    const end = (outcome: OutboundCallOutcome) =>
      record
        .ended({ ...outcome, durationMs: Math.round(performance.now() - started) })
        .catch((error: unknown) => {
          // The row stays `sent`, as after a crash; the answer is still handed on.
          process.stderr.write(
            `${JSON.stringify({ level: 'error', msg: 'could not record an outbound call’s answer', call: record.id, error: String(error) })}\n`,
          );
        });
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, init);
      text = await response.text();
    } catch (error) {
      await end({ answered: false, failure: outboundFailureOf(error) });
      throw error;
    }
    await end({ answered: true, status: response.status, body: jsonObjectOf(text) });
    return new Response(NULL_BODY_STATUSES.has(response.status) ? null : text, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
