/** How long history is kept (MKOBA_RETENTION_DAYS), and how often expired records and idempotency keys are pruned. */
import type { Environment } from '../domain/access.ts';
import { ConfigError, nonEmpty } from './variables.ts';

export const IDEMPOTENCY_PRUNE_INTERVAL_MS = 60_000;
export const IDEMPOTENCY_PRUNE_BATCH_ROWS = 1_000;
/**
 * Retention of events, their webhook deliveries and the deliveries' attempt logs (MKOBA_RETENTION_DAYS).
 * The sandbox keeps a week by default: its history is test traffic. Transfers and journal entries are the
 * ledger and are never pruned.
 */
export const RETENTION_DAYS_DEFAULT_PRODUCTION = 30;
export const RETENTION_DAYS_DEFAULT_SANDBOX = 7;
export const RETENTION_DAYS_MAX = 3_650;
export const RETENTION_PRUNE_INTERVAL_MS = 60_000;
/** Events examined per pruning transaction; each takes its deliveries and their attempts with it. */
export const RETENTION_PRUNE_BATCH_EVENTS = 200;

export interface RetentionSettings {
  /** Events, deliveries and attempts older than this (and finished) are pruned. */
  days: number;
}

/** MKOBA_RETENTION_DAYS: whole days from 1 to RETENTION_DAYS_MAX; the default depends on the environment. */
export function loadRetentionSettings(env: NodeJS.ProcessEnv, environment: Environment): RetentionSettings {
  const text = nonEmpty(env.MKOBA_RETENTION_DAYS);
  if (text === undefined) {
    return {
      days: environment === 'sandbox' ? RETENTION_DAYS_DEFAULT_SANDBOX : RETENTION_DAYS_DEFAULT_PRODUCTION,
    };
  }
  const days = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(days >= 1 && days <= RETENTION_DAYS_MAX)) {
    throw new ConfigError(
      'MKOBA_RETENTION_DAYS',
      `must be whole days from 1 to ${RETENTION_DAYS_MAX}, got '${text}'`,
    );
  }
  return { days };
}
