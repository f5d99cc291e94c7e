/**
 * One HTTP exchange with a rail partner: the request sent through the outbound address guard within a time
 * limit, and its answer's status and text (read as JSON by json.ts). Each adapter's connection says what
 * to throw when no answer comes.
 */
import type { OutboundFetch, OutboundRequestInit } from '../../../outbound/guard.ts';

/** A partner's answer, its body not yet read as JSON. */
export interface PartnerAnswerText {
  status: number;
  text: string;
}

/** The adapter's error for a request that got no answer: `timedOut` when the time limit ran out first. */
export type NoAnswerError = (timedOut: boolean, cause: unknown) => Error;

/** Sends the request and reads its answer within `timeoutMs`; throws `noAnswer`'s error when it cannot. */
export async function exchangeWithin(
  fetch: OutboundFetch,
  url: string,
  init: OutboundRequestInit,
  timeoutMs: number,
  noAnswer: NoAnswerError,
): Promise<PartnerAnswerText> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    return { status: response.status, text: await response.text() };
  } catch (error) {
    throw noAnswer(isTimeout(error), error);
  }
}

/** A time limit's abort: `TimeoutError` from AbortSignal.timeout, `AbortError` where a runtime says only that. */
function isTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
}
