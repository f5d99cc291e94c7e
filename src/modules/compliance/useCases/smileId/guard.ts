/**
 * Calls to Smile ID, guarded per organization's configuration and per process as rail partners' are (a
 * changed configuration starts with a closed circuit and keeps its bucket): a
 * circuit breaker (opossum) that pauses the calls after repeated unavailability (each refused at once for
 * SMILE_ID_PAUSE_MS, the jobs waiting retried later: nothing is lost), and a token bucket
 * (src/domain/rateLimits.ts) that bounds the rate. Only unavailability counts as a failure: an answer
 * Smile ID gave, even a refusal, is Smile ID working.
 */
import CircuitBreaker from 'opossum';
import type { Deps } from '../../../../app/deps.ts';
import { type BucketState, type TokenBucket, takeTokens } from '../../../../domain/rateLimits.ts';
import type { SmileIdConfig } from '../../repository/smileId.ts';

/** How long an open circuit refuses calls before it lets one through to try Smile ID again. */
export const SMILE_ID_PAUSE_MS = 30_000;
/** Share of failed calls, in percent, over the rolling window that opens the circuit. */
export const SMILE_ID_ERROR_PERCENT_MAX = 50;
/** Calls in the rolling window before the error share counts. */
export const SMILE_ID_CALLS_BEFORE_PAUSE = 5;
/** The rolling window the error share is measured over. */
export const SMILE_ID_ERROR_WINDOW_MS = 60_000;
/** Calls per second to one organization's Smile ID, per process, and the burst above it. */
export const SMILE_ID_RATE: TokenBucket = { capacity: 20, refillPerSecond: 10 };

export class SmileIdUnavailableError extends Error {}

interface Guard {
  /** The configuration the breaker was made for (its updatedAt): a changed one starts with a closed circuit. */
  version: number;
  breaker: CircuitBreaker<[() => Promise<unknown>], unknown>;
  bucket: BucketState | undefined;
}

const guards = new Map<string, Guard>();

/** The configuration's guard, made again (its bucket kept) when the configuration changed, as rail partners'. */
function guardOf(config: Pick<SmileIdConfig, 'organizationId' | 'updatedAt'>): Guard {
  const version = config.updatedAt.getTime();
  const existing = guards.get(config.organizationId);
  if (existing?.version === version) return existing;
  existing?.breaker.shutdown();
  const breaker = new CircuitBreaker(async (work: () => Promise<unknown>) => work(), {
    // Each call bounds its own time (SMILE_ID_REQUEST_TIMEOUT_MS); the breaker only counts outcomes.
    timeout: false,
    resetTimeout: SMILE_ID_PAUSE_MS,
    errorThresholdPercentage: SMILE_ID_ERROR_PERCENT_MAX,
    volumeThreshold: SMILE_ID_CALLS_BEFORE_PAUSE,
    rollingCountTimeout: SMILE_ID_ERROR_WINDOW_MS,
    errorFilter: (error: unknown) => !(error instanceof SmileIdUnavailableError),
    name: `smile_id:${config.organizationId}`,
  });
  const guard: Guard = { version, breaker, bucket: existing?.bucket };
  guards.set(config.organizationId, guard);
  return guard;
}

/** Whether the organization's calls to Smile ID are paused in this process. */
export function isSmileIdPaused(organizationId: string): boolean {
  return guards.get(organizationId)?.breaker.opened ?? false;
}

export async function guardedSmileIdCall<T>(
  deps: Deps,
  config: Pick<SmileIdConfig, 'organizationId' | 'updatedAt'>,
  work: () => Promise<T>,
): Promise<T> {
  const guard = guardOf(config);
  if (guard.breaker.opened) throw new SmileIdUnavailableError('calls to Smile ID are paused');
  const nowMs = deps.now().getTime();
  const taken = takeTokens([SMILE_ID_RATE], [guard.bucket], nowMs, 1);
  guard.bucket = { tokens: taken.tokens[0] ?? 0, updatedAtMs: nowMs };
  if (!taken.allowed) throw new SmileIdUnavailableError('calls to Smile ID are over their rate');
  try {
    return (await guard.breaker.fire(work)) as T;
  } catch (error) {
    if ((error as { code?: string }).code === 'EOPENBREAKER') {
      throw new SmileIdUnavailableError('calls to Smile ID are paused');
    }
    throw error;
  }
}
