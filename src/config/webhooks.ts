/**
 * Webhook delivery (MKOBA_WEBHOOK_*): the retry schedule, an attempt's time-out, when a failing endpoint is
 * disabled, how many deliveries a subscription has in flight, and whether private addresses are allowed.
 */
import type { Environment } from '../domain/access.ts';
import {
  parseRetrySchedule,
  WEBHOOK_DISABLE_AFTER_FAILING_HOURS,
  WEBHOOK_RETRY_DELAY_SECONDS_MAX,
  WEBHOOK_RETRY_SCHEDULE_ENTRIES_MAX,
  WEBHOOK_RETRY_SCHEDULE_SECONDS_DEFAULT,
  WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX,
  WEBHOOK_TIMEOUT_MS_DEFAULT,
} from '../domain/webhooks.ts';
import { ConfigError, nonEmpty } from './variables.ts';

export interface WebhookSettings {
  /** Seconds before each retry; its length is the number of retries. */
  retryScheduleSeconds: readonly number[];
  timeoutMs: number;
  /** An endpoint failing with no success for this long is disabled. */
  disableAfterFailingMs: number;
  /**
   * Subscriptions and deliveries refuse loopback, private, link-local and reserved addresses, in every
   * environment. Only MKOBA_WEBHOOK_ALLOW_PRIVATE=1 in the sandbox turns this off, for local development.
   */
  blockReservedAddresses: boolean;
  /** Deliveries one subscription may have in flight at once, across every dispatcher. */
  subscriptionConcurrency: number;
  /**
   * How often a dispatcher looks for due deliveries without being told: it is woken when deliveries are
   * queued, so the poll finds retries coming due and anything a lost notification missed.
   */
  pollIntervalMs: number;
}

/**
 * The largest MKOBA_WEBHOOK_SUBSCRIPTION_CONCURRENCY: a process sends at most this many at once anyway
 * (WEBHOOK_DISPATCH_CONCURRENCY_MAX).
 */
export const WEBHOOK_SUBSCRIPTION_CONCURRENCY_MAX = 256;
export const WEBHOOK_POLL_INTERVAL_MS_DEFAULT = 1_000;

export function defaultWebhookSettings(_environment: Environment): WebhookSettings {
  return {
    retryScheduleSeconds: WEBHOOK_RETRY_SCHEDULE_SECONDS_DEFAULT,
    timeoutMs: WEBHOOK_TIMEOUT_MS_DEFAULT,
    disableAfterFailingMs: WEBHOOK_DISABLE_AFTER_FAILING_HOURS * 3_600_000,
    blockReservedAddresses: true,
    subscriptionConcurrency: WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX,
    pollIntervalMs: WEBHOOK_POLL_INTERVAL_MS_DEFAULT,
  };
}

/** MKOBA_WEBHOOK_ALLOW_PRIVATE: `1` or `true` opts in, `0`, `false` or unset stays out; sandbox only. */
function loadAllowPrivate(env: NodeJS.ProcessEnv, environment: Environment): boolean {
  const text = nonEmpty(env.MKOBA_WEBHOOK_ALLOW_PRIVATE);
  if (text === undefined || text === '0' || text.toLowerCase() === 'false') return false;
  if (text !== '1' && text.toLowerCase() !== 'true') {
    throw new ConfigError('MKOBA_WEBHOOK_ALLOW_PRIVATE', `must be 1 (allow) or 0 (refuse), got '${text}'`);
  }
  if (environment !== 'sandbox') {
    throw new ConfigError(
      'MKOBA_WEBHOOK_ALLOW_PRIVATE',
      'is for local development in the sandbox; pilot and production always refuse private and reserved webhook addresses',
    );
  }
  return true;
}

export function loadWebhookSettings(env: NodeJS.ProcessEnv, environment: Environment): WebhookSettings {
  const settings = defaultWebhookSettings(environment);
  const scheduleText = nonEmpty(env.MKOBA_WEBHOOK_RETRY_SCHEDULE);
  if (scheduleText !== undefined) {
    const schedule = parseRetrySchedule(scheduleText);
    if (!schedule) {
      throw new ConfigError(
        'MKOBA_WEBHOOK_RETRY_SCHEDULE',
        `must be comma-separated seconds such as '5,300,1800' (at most ${WEBHOOK_RETRY_SCHEDULE_ENTRIES_MAX} entries, each at most ${WEBHOOK_RETRY_DELAY_SECONDS_MAX} s), got '${scheduleText}'`,
      );
    }
    settings.retryScheduleSeconds = schedule;
  }
  const timeoutText = nonEmpty(env.MKOBA_WEBHOOK_TIMEOUT_MS);
  if (timeoutText !== undefined) {
    if (!/^\d+$/.test(timeoutText) || Number(timeoutText) < 1 || Number(timeoutText) > 60_000) {
      throw new ConfigError(
        'MKOBA_WEBHOOK_TIMEOUT_MS',
        `must be whole milliseconds from 1 to 60000, got '${timeoutText}'`,
      );
    }
    settings.timeoutMs = Number(timeoutText);
  }
  const disableText = nonEmpty(env.MKOBA_WEBHOOK_DISABLE_AFTER_SECONDS);
  if (disableText !== undefined) {
    if (!/^\d+$/.test(disableText)) {
      throw new ConfigError(
        'MKOBA_WEBHOOK_DISABLE_AFTER_SECONDS',
        `must be whole seconds, got '${disableText}'`,
      );
    }
    settings.disableAfterFailingMs = Number(disableText) * 1000;
  }
  const concurrencyText = nonEmpty(env.MKOBA_WEBHOOK_SUBSCRIPTION_CONCURRENCY);
  if (concurrencyText !== undefined) {
    const n = Number(concurrencyText);
    if (!/^\d+$/.test(concurrencyText) || n < 1 || n > WEBHOOK_SUBSCRIPTION_CONCURRENCY_MAX) {
      throw new ConfigError(
        'MKOBA_WEBHOOK_SUBSCRIPTION_CONCURRENCY',
        `must be a whole number from 1 to ${WEBHOOK_SUBSCRIPTION_CONCURRENCY_MAX}, got '${concurrencyText}'`,
      );
    }
    settings.subscriptionConcurrency = n;
  }
  settings.blockReservedAddresses = !loadAllowPrivate(env, environment);
  return settings;
}
