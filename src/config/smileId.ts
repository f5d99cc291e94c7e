/**
 * MKOBA_SMILE_ID_LEASE_MS: how long a Smile ID job a worker has leased is left to it before another
 * worker may take it over (a worker that died holding it is replaced once its lease runs out).
 */
import { ConfigError, nonEmpty } from './variables.ts';

/** The lease by default: longer than a call to Smile ID (15 s) with room for a pass's other jobs. */
export const SMILE_ID_LEASE_MS_DEFAULT = 60_000;
/**
 * The shortest lease taken. Below a call's time-out a live worker's job may be taken over mid-call; the
 * job's own id still keeps it to one job at Smile ID (/job_status first, then its 2215), so this only
 * costs calls. Meant for tests that replace a killed worker within seconds.
 */
export const SMILE_ID_LEASE_MS_MIN = 1_000;
/** The longest lease taken: a dead worker's jobs wait at most this long for another. */
export const SMILE_ID_LEASE_MS_MAX = 600_000;

export function loadSmileIdLeaseMs(env: NodeJS.ProcessEnv): number {
  const text = nonEmpty(env.MKOBA_SMILE_ID_LEASE_MS);
  if (text === undefined) return SMILE_ID_LEASE_MS_DEFAULT;
  const ms = /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN;
  if (!(ms >= SMILE_ID_LEASE_MS_MIN && ms <= SMILE_ID_LEASE_MS_MAX)) {
    throw new ConfigError(
      'MKOBA_SMILE_ID_LEASE_MS',
      `must be a whole number of milliseconds from ${SMILE_ID_LEASE_MS_MIN} to ${SMILE_ID_LEASE_MS_MAX}, got '${text}'`,
    );
  }
  return ms;
}
