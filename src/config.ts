/** The environment schema and every operational limit, each with its unit in its name. */
import { isIP } from 'node:net';
import path from 'node:path';
import { ENVIRONMENTS, type Environment, isLiveEnvironment, parseApiKey } from './domain/apiKeys.ts';
import { CONVERSION_RATE_BAND_BPS_DEFAULT, CONVERSION_RATE_BAND_BPS_MAX } from './domain/conversions.ts';
import type { PilotCaps } from './domain/decisions/pilotCaps.ts';
import { type Currency, isCurrency, parseAmount } from './domain/money.ts';
import type { TokenBucket } from './domain/rateLimits.ts';
import { MASTER_KEY_BYTES, parseMasterKey } from './domain/sealing.ts';

import {
  parseRetrySchedule,
  WEBHOOK_DISABLE_AFTER_FAILING_HOURS,
  WEBHOOK_RETRY_DELAY_SECONDS_MAX,
  WEBHOOK_RETRY_SCHEDULE_ENTRIES_MAX,
  WEBHOOK_RETRY_SCHEDULE_SECONDS_DEFAULT,
  WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX,
  WEBHOOK_TIMEOUT_MS_DEFAULT,
} from './domain/webhooks.ts';

export const PORT_DEFAULT = 8080;
export const HOST_DEFAULT = '127.0.0.1';
export const DATA_DIR_DEFAULT = '.mkoba';

export const REQUEST_BODY_BYTES_MAX = 256 * 1024;
/**
 * Objects and arrays a JSON request body may nest, the body itself being level 1: deeper is a 400
 * (`validation_error`, field code `body_too_deep`) before the body is parsed. Every documented body is
 * far shallower; the limit keeps recursive work (fingerprints, validation, storage) bounded.
 */
export const REQUEST_BODY_DEPTH_MAX = 64;
export const REQUEST_TIMEOUT_MS = 30_000;
export const PG_POOL_CONNECTIONS_MAX = 10;
/**
 * Ledger writer lanes on PostgreSQL: batches from distinct source wallets commit in parallel, each lane on
 * its own connection (so fewer than the pool's connections, which requests' reads share). One by default:
 * on the benchmark machine (2 vCPU shared by server, database and load) bigger batches beat parallel ones
 * (docs/BENCHMARKS.md); raise it where PostgreSQL has cores of its own.
 */
export const LEDGER_WRITER_LANES_DEFAULT = 1;
/** The most writer lanes a process runs: each holds a database connection while its batch commits. */
export const LEDGER_WRITER_LANES_MAX = 32;
export const PG_CONNECT_TIMEOUT_MS = 5_000;
/**
 * PostgreSQL time-outs set on every connection, so that one stuck transaction cannot stall every request
 * in a process: a statement running longer is cancelled (under the request time-out, so the client gets a
 * problem rather than a dropped request); a wait for a lock held by another transaction gives up; a
 * session that sits in an open transaction doing nothing is ended, releasing its locks. Each failure
 * rolls its transaction back and reaches the client as a 503 with Retry-After.
 */
export const PG_STATEMENT_TIMEOUT_MS = 15_000;
export const PG_LOCK_TIMEOUT_MS = 5_000;
export const PG_IDLE_IN_TRANSACTION_TIMEOUT_MS = 15_000;
/** PostgreSQL's largest time-out setting (2^31 - 1 ms). */
const PG_TIMEOUT_MS_MAX = 2_147_483_647;
/** What a client is told to wait before retrying after a database time-out or transaction conflict. */
export const PG_TIMEOUT_RETRY_AFTER_SECONDS = 1;
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
export const SHUTDOWN_GRACE_MS = 10_000;
/**
 * How long a process waits for a CLI command to release the embedded data directory. Creating the
 * database on a fresh directory takes a few seconds of CPU, and far longer on a slow or busy machine;
 * the wait is announced, so a person can give up sooner with Ctrl-C.
 */
export const DATA_DIR_LOCK_WAIT_MS = 120_000;
/** How long a CLI command waits for a starting server, which holds the data directory, to open its socket. */
export const CONTROL_SOCKET_WAIT_MS = 120_000;

const HOSTNAME_PATTERN = /^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?$/;

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  /** Where export files go (MKOBA_EXPORT_DIR; `exports` in the data directory by default). */
  exportDir: string;
  /**
   * The service's public base URL (MKOBA_PUBLIC_URL), on which partners' callback addresses are built.
   * In the sandbox it defaults to the address the server listens on; production has none unless set.
   */
  publicUrl: string | undefined;
  /**
   * The sandbox server starts the partner simulators (M-Pesa Daraja, MTN MoMo) and points the sandbox
   * organization's partners at them (MKOBA_SANDBOX_SIMULATORS=0 turns it off: the built-in simulated rails
   * carry everything).
   */
  sandboxSimulators: boolean;
  environment: Environment;
  sandboxApiKey: string | undefined;
  webhooks: WebhookSettings;
  rateLimits: RateLimitSettings;
  postgres: PostgresSettings;
  /** Undefined: LEDGER_WRITER_LANES_DEFAULT on PostgreSQL, 1 on the embedded database (one session). */
  ledgerWriterLanes: number | undefined;
  encryption: EncryptionSettings;
  retention: RetentionSettings;
  /** MKOBA_ENV=pilot: each organization's volume caps; undefined in the sandbox and production. */
  pilotCaps: PilotCaps | undefined;
  /**
   * Pilot and production: the sandbox deployment's PostgreSQL (MKOBA_SANDBOX_DATABASE_URL), read for each
   * organization's launch gates before its keys are issued (docs/GOING-LIVE.md).
   */
  sandboxDatabaseUrl: string | undefined;
  /**
   * MKOBA_CONVERSION_RATE_BAND_BPS: how far (basis points of the rate in force) a conversion rate may move
   * without a second member's approval, and how far a quote's output may stand from the rate in force when
   * it is executed. CONVERSION_RATE_BAND_BPS_DEFAULT (500, 5 %) by default.
   */
  conversionRateBandBps: number;
  metrics: MetricsSettings;
}

/** The shortest MKOBA_METRICS_TOKEN accepted, in characters: a guessable token would protect nothing. */
export const METRICS_TOKEN_CHARS_MIN = 32;

/**
 * Who may scrape GET /metrics on the API listener, and what its series are labelled with.
 * `token` (MKOBA_METRICS_TOKEN): a scrape must send `Authorization: Bearer <token>`. Without one, pilot and
 * production do not serve /metrics at all (404); the sandbox serves it openly, for local development.
 * `resourceLabels` (MKOBA_METRICS_RESOURCE_LABELS=1): series keep subscription and rail partner ids as
 * labels; off by default, since ids of every organization would be on one page.
 */
export interface MetricsSettings {
  token: string | undefined;
  resourceLabels: boolean;
}

function loadMetricsSettings(env: NodeJS.ProcessEnv): MetricsSettings {
  const token = nonEmpty(env.MKOBA_METRICS_TOKEN);
  if (token !== undefined && (token.length < METRICS_TOKEN_CHARS_MIN || /\s/.test(token))) {
    throw new ConfigError(
      'MKOBA_METRICS_TOKEN',
      `must be at least ${METRICS_TOKEN_CHARS_MIN} characters without spaces (e.g. openssl rand -hex 32)`,
    );
  }
  const labels = nonEmpty(env.MKOBA_METRICS_RESOURCE_LABELS);
  if (labels !== undefined && !['0', '1', 'true', 'false'].includes(labels.toLowerCase())) {
    throw new ConfigError('MKOBA_METRICS_RESOURCE_LABELS', `must be 1 (keep ids) or 0, got '${labels}'`);
  }
  return { token, resourceLabels: labels === '1' || labels?.toLowerCase() === 'true' };
}

export interface RetentionSettings {
  /** Events, deliveries and attempts older than this (and finished) are pruned. */
  days: number;
}

/** MKOBA_PUBLIC_URL: an absolute http(s) URL without query or fragment (https in pilot and production). */
export function loadPublicUrl(env: NodeJS.ProcessEnv, environment: Environment): string | undefined {
  const text = nonEmpty(env.MKOBA_PUBLIC_URL);
  // Unset: the sandbox server uses the address it listens on, once it listens (PORT may be 0).
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError('MKOBA_PUBLIC_URL', 'must be an absolute URL, e.g. https://api.example.com');
  }
  const allowed = isLiveEnvironment(environment) ? ['https:'] : ['https:', 'http:'];
  if (!allowed.includes(url.protocol) || url.search !== '' || url.hash !== '') {
    throw new ConfigError(
      'MKOBA_PUBLIC_URL',
      `must be an ${isLiveEnvironment(environment) ? 'https' : 'http(s)'} URL without a query or fragment`,
    );
  }
  return text.replace(/\/+$/, '');
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

/**
 * Master keys for secrets at rest (src/domain/sealing.ts). `currentKey` seals; `previousKeys` only open
 * what older keys sealed, until `mkoba encryption rewrap` has moved it to the current key.
 */
export interface EncryptionSettings {
  currentKey: Uint8Array | undefined;
  previousKeys: Uint8Array[];
}

/** Per-connection time-outs; 0 sets none, leaving the server's (or role's, or database's) setting. */
export interface PostgresSettings {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

export const DEFAULT_POSTGRES_SETTINGS: PostgresSettings = {
  statementTimeoutMs: PG_STATEMENT_TIMEOUT_MS,
  lockTimeoutMs: PG_LOCK_TIMEOUT_MS,
  idleInTransactionTimeoutMs: PG_IDLE_IN_TRANSACTION_TIMEOUT_MS,
};

const POSTGRES_SETTING_VARIABLES: Record<keyof PostgresSettings, string> = {
  statementTimeoutMs: 'MKOBA_PG_STATEMENT_TIMEOUT_MS',
  lockTimeoutMs: 'MKOBA_PG_LOCK_TIMEOUT_MS',
  idleInTransactionTimeoutMs: 'MKOBA_PG_IDLE_IN_TX_TIMEOUT_MS',
};

function loadPostgresSettings(env: NodeJS.ProcessEnv): PostgresSettings {
  const settings = { ...DEFAULT_POSTGRES_SETTINGS };
  for (const [name, variable] of Object.entries(POSTGRES_SETTING_VARIABLES)) {
    const text = nonEmpty(env[variable]);
    if (text === undefined) continue;
    if (!/^\d{1,10}$/.test(text) || Number(text) > PG_TIMEOUT_MS_MAX) {
      throw new ConfigError(
        variable,
        `must be whole milliseconds from 0 (none) to ${PG_TIMEOUT_MS_MAX}, got '${text}'`,
      );
    }
    settings[name as keyof PostgresSettings] = Number(text);
  }
  return settings;
}

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

const ENCRYPTION_KEY_FORMAT = `${MASTER_KEY_BYTES} random bytes in base64 or hex (e.g. from 'openssl rand -base64 ${MASTER_KEY_BYTES}')`;

function loadEncryptionSettings(env: NodeJS.ProcessEnv): EncryptionSettings {
  const currentText = nonEmpty(env.MKOBA_ENCRYPTION_KEY);
  const currentKey = currentText === undefined ? undefined : parseMasterKey(currentText);
  if (currentText !== undefined && currentKey === undefined) {
    throw new ConfigError('MKOBA_ENCRYPTION_KEY', `must be ${ENCRYPTION_KEY_FORMAT}`);
  }
  const previousText = nonEmpty(env.MKOBA_ENCRYPTION_KEYS_PREVIOUS);
  const previousKeys: Uint8Array[] = [];
  for (const [index, part] of (previousText?.split(',') ?? []).entries()) {
    const key = parseMasterKey(part);
    if (!key) {
      throw new ConfigError(
        'MKOBA_ENCRYPTION_KEYS_PREVIOUS',
        `entry ${index + 1} must be ${ENCRYPTION_KEY_FORMAT}; separate keys with commas`,
      );
    }
    previousKeys.push(key);
  }
  return { currentKey, previousKeys };
}

/**
 * Whether this configuration may run without MKOBA_ENCRYPTION_KEY: only the embedded sandbox, which keeps
 * a generated key in its data directory. Production, and any deployment on PostgreSQL (several processes
 * share the database, so they must share the key, and a key kept in the database would protect nothing),
 * need it set; the check runs where the key is used (serve, worker, encryption rewrap).
 */
export function requireEncryptionKey(config: Config): Uint8Array | undefined {
  if (config.encryption.currentKey !== undefined) return config.encryption.currentKey;
  if (isLiveEnvironment(config.environment) || config.databaseUrl !== undefined) {
    const where = isLiveEnvironment(config.environment)
      ? `when MKOBA_ENV=${config.environment}`
      : 'with DATABASE_URL';
    throw new ConfigError('MKOBA_ENCRYPTION_KEY', `is required ${where}: set it to ${ENCRYPTION_KEY_FORMAT}`);
  }
  return undefined;
}

function loadWebhookSettings(env: NodeJS.ProcessEnv, environment: Environment): WebhookSettings {
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

/**
 * Rate limits: token buckets per API key and per organization on authenticated routes (a request must
 * find a token in both), and a stricter one per client address for failed key authentication. Sized so a
 * normal integration, including bursts of parallel requests, never meets them.
 */
export const RATE_LIMIT_KEY_REQUESTS_PER_SECOND_DEFAULT = 100;
export const RATE_LIMIT_KEY_BURST_REQUESTS_DEFAULT = 200;
export const RATE_LIMIT_ORGANIZATION_REQUESTS_PER_SECOND_DEFAULT = 200;
export const RATE_LIMIT_ORGANIZATION_BURST_REQUESTS_DEFAULT = 400;
export const RATE_LIMIT_AUTH_FAILURES_PER_MINUTE_PER_ADDRESS_DEFAULT = 10;
export const RATE_LIMIT_AUTH_FAILURES_BURST_PER_ADDRESS_DEFAULT = 20;
/** The largest rate or burst a variable may set. */
export const RATE_LIMIT_SETTING_MAX = 1_000_000;
/** In-process buckets kept at most; past it, full buckets are forgotten first, then the least recent. */
export const RATE_LIMIT_MEMORY_BUCKETS_MAX = 100_000;
/** A Redis command slower than this counts as Redis being unavailable (see RATE_LIMIT_REDIS_* below). */
export const RATE_LIMIT_REDIS_COMMAND_TIMEOUT_MS = 500;
export const RATE_LIMIT_REDIS_CONNECT_TIMEOUT_MS = 2_000;
export const RATE_LIMIT_REDIS_RECONNECT_DELAY_MS_MAX = 5_000;

export interface RateLimitSettings {
  enabled: boolean;
  key: TokenBucket;
  organization: TokenBucket;
  /** Failed key authentications per client address (IPv6 by /64). */
  authFailures: TokenBucket;
  /** When set, the buckets live in this Redis, shared by every server process using it. */
  redisUrl: string | undefined;
  /** Prefix of every Redis key, so deployments sharing one Redis keep apart. */
  redisKeyPrefix: string;
}

export function defaultRateLimitSettings(environment: Environment): RateLimitSettings {
  return {
    enabled: true,
    key: {
      capacity: RATE_LIMIT_KEY_BURST_REQUESTS_DEFAULT,
      refillPerSecond: RATE_LIMIT_KEY_REQUESTS_PER_SECOND_DEFAULT,
    },
    organization: {
      capacity: RATE_LIMIT_ORGANIZATION_BURST_REQUESTS_DEFAULT,
      refillPerSecond: RATE_LIMIT_ORGANIZATION_REQUESTS_PER_SECOND_DEFAULT,
    },
    authFailures: {
      capacity: RATE_LIMIT_AUTH_FAILURES_BURST_PER_ADDRESS_DEFAULT,
      refillPerSecond: RATE_LIMIT_AUTH_FAILURES_PER_MINUTE_PER_ADDRESS_DEFAULT / 60,
    },
    redisUrl: undefined,
    redisKeyPrefix: `mkoba:${environment}:rate-limit:`,
  };
}

function loadRateLimitSettings(env: NodeJS.ProcessEnv, environment: Environment): RateLimitSettings {
  const settings = defaultRateLimitSettings(environment);
  const switchText = nonEmpty(env.MKOBA_RATE_LIMITS);
  if (switchText !== undefined) {
    if (switchText !== 'on' && switchText !== 'off') {
      throw new ConfigError('MKOBA_RATE_LIMITS', `must be 'on' or 'off', got '${switchText}'`);
    }
    settings.enabled = switchText === 'on';
  }
  const whole = (variable: string, fallback: number): number => {
    const text = nonEmpty(env[variable]);
    if (text === undefined) return fallback;
    if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > RATE_LIMIT_SETTING_MAX) {
      throw new ConfigError(
        variable,
        `must be a whole number from 1 to ${RATE_LIMIT_SETTING_MAX}, got '${text}'`,
      );
    }
    return Number(text);
  };
  settings.key = {
    refillPerSecond: whole('MKOBA_RATE_LIMIT_KEY_REQUESTS_PER_SECOND', settings.key.refillPerSecond),
    capacity: whole('MKOBA_RATE_LIMIT_KEY_BURST_REQUESTS', settings.key.capacity),
  };
  settings.organization = {
    refillPerSecond: whole(
      'MKOBA_RATE_LIMIT_ORGANIZATION_REQUESTS_PER_SECOND',
      settings.organization.refillPerSecond,
    ),
    capacity: whole('MKOBA_RATE_LIMIT_ORGANIZATION_BURST_REQUESTS', settings.organization.capacity),
  };
  settings.authFailures = {
    refillPerSecond:
      whole(
        'MKOBA_RATE_LIMIT_AUTH_FAILURES_PER_MINUTE',
        RATE_LIMIT_AUTH_FAILURES_PER_MINUTE_PER_ADDRESS_DEFAULT,
      ) / 60,
    capacity: whole('MKOBA_RATE_LIMIT_AUTH_FAILURES_BURST', settings.authFailures.capacity),
  };
  const redisUrl = nonEmpty(env.REDIS_URL);
  if (redisUrl !== undefined && !/^rediss?:\/\/[^/]/.test(redisUrl)) {
    throw new ConfigError('REDIS_URL', 'must be a redis:// or rediss:// URL such as redis://127.0.0.1:6379');
  }
  settings.redisUrl = redisUrl;
  return settings;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function loadConversionRateBandBps(env: NodeJS.ProcessEnv): number {
  const text = nonEmpty(env.MKOBA_CONVERSION_RATE_BAND_BPS);
  if (text === undefined) return CONVERSION_RATE_BAND_BPS_DEFAULT;
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > CONVERSION_RATE_BAND_BPS_MAX) {
    throw new ConfigError(
      'MKOBA_CONVERSION_RATE_BAND_BPS',
      `must be a whole number of basis points from 1 to ${CONVERSION_RATE_BAND_BPS_MAX}, got '${text}'`,
    );
  }
  return Number(text);
}

function loadLedgerWriterLanes(env: NodeJS.ProcessEnv): number | undefined {
  const text = nonEmpty(env.MKOBA_LEDGER_WRITER_LANES);
  if (text === undefined) return undefined;
  if (!/^\d{1,2}$/.test(text) || Number(text) < 1 || Number(text) > LEDGER_WRITER_LANES_MAX) {
    throw new ConfigError(
      'MKOBA_LEDGER_WRITER_LANES',
      `must be a whole number from 1 to ${LEDGER_WRITER_LANES_MAX}, got '${text}'`,
    );
  }
  return Number(text);
}

/**
 * Pilot volume caps (MKOBA_ENV=pilot), per organization, per currency, per UTC day: how many transfers it
 * may create, and how much it may send. The amount caps are in major units of each currency; a currency
 * without one carries nothing in a pilot (set it to open that currency).
 */
export const PILOT_TRANSFERS_PER_DAY_MAX_DEFAULT = 500;
/** The largest MKOBA_PILOT_TRANSFERS_PER_DAY_MAX: a pilot is a bounded launch, not a throughput test. */
export const PILOT_TRANSFERS_PER_DAY_MAX_LIMIT = 1_000_000;
export const PILOT_AMOUNT_PER_DAY_MAX_DEFAULT: Partial<Record<Currency, string>> = {
  KES: '1000000.00',
  UGX: '30000000',
  TZS: '20000000.00',
  RWF: '10000000',
  USD: '10000.00',
  USDC: '10000.000000',
  USDT: '10000.000000',
};

function pilotAmountCaps(text: string | undefined): Partial<Record<Currency, bigint>> {
  const caps: Partial<Record<Currency, bigint>> = {};
  for (const [currency, amount] of Object.entries(PILOT_AMOUNT_PER_DAY_MAX_DEFAULT)) {
    caps[currency as Currency] = parseAmount(amount, currency as Currency);
  }
  for (const part of text === undefined ? [] : text.split(',')) {
    const match = /^([A-Z]{3,4}):(\d+(?:\.\d+)?)$/.exec(part.trim());
    const currency = match?.[1];
    if (!match || !currency || !isCurrency(currency)) {
      throw new ConfigError(
        'MKOBA_PILOT_AMOUNT_PER_DAY_MAX',
        `must be CURRENCY:AMOUNT pairs in major units, comma-separated, such as 'KES:500000.00,UGX:15000000'; got '${part.trim()}'`,
      );
    }
    try {
      caps[currency] = parseAmount(match[2], currency);
    } catch {
      throw new ConfigError(
        'MKOBA_PILOT_AMOUNT_PER_DAY_MAX',
        `the ${currency} cap '${match[2]}' must be a decimal with at most the currency's decimals`,
      );
    }
  }
  return caps;
}

export function loadPilotCaps(env: NodeJS.ProcessEnv, environment: Environment): PilotCaps | undefined {
  const countText = nonEmpty(env.MKOBA_PILOT_TRANSFERS_PER_DAY_MAX);
  const amountText = nonEmpty(env.MKOBA_PILOT_AMOUNT_PER_DAY_MAX);
  if (environment !== 'pilot') {
    const set =
      countText !== undefined
        ? 'MKOBA_PILOT_TRANSFERS_PER_DAY_MAX'
        : amountText !== undefined
          ? 'MKOBA_PILOT_AMOUNT_PER_DAY_MAX'
          : undefined;
    if (set) throw new ConfigError(set, `applies only when MKOBA_ENV=pilot (this is ${environment})`);
    return undefined;
  }
  let transfersPerDayMax = PILOT_TRANSFERS_PER_DAY_MAX_DEFAULT;
  if (countText !== undefined) {
    const n = /^\d{1,7}$/.test(countText) ? Number(countText) : Number.NaN;
    if (!(n >= 0 && n <= PILOT_TRANSFERS_PER_DAY_MAX_LIMIT)) {
      throw new ConfigError(
        'MKOBA_PILOT_TRANSFERS_PER_DAY_MAX',
        `must be whole transfers per organization per currency per UTC day, from 0 to ${PILOT_TRANSFERS_PER_DAY_MAX_LIMIT}; got '${countText}'`,
      );
    }
    transfersPerDayMax = n;
  }
  return { transfersPerDayMax, amountPerDayMaxMinor: pilotAmountCaps(amountText) };
}

/** MKOBA_SANDBOX_DATABASE_URL: pilot and production only; a PostgreSQL URL other than DATABASE_URL. */
export function loadSandboxDatabaseUrl(
  env: NodeJS.ProcessEnv,
  environment: Environment,
  databaseUrl: string | undefined,
): string | undefined {
  const url = nonEmpty(env.MKOBA_SANDBOX_DATABASE_URL);
  if (url === undefined) return undefined;
  if (!isLiveEnvironment(environment)) {
    throw new ConfigError(
      'MKOBA_SANDBOX_DATABASE_URL',
      'applies only to pilot and production, which read the sandbox’s launch gates; the sandbox is its own source',
    );
  }
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new ConfigError('MKOBA_SANDBOX_DATABASE_URL', 'must be a postgres:// or postgresql:// URL');
  }
  if (url === databaseUrl) {
    throw new ConfigError(
      'MKOBA_SANDBOX_DATABASE_URL',
      'must be the sandbox deployment’s database, not this deployment’s own DATABASE_URL',
    );
  }
  return url;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const portText = nonEmpty(env.PORT);
  const port =
    portText === undefined ? PORT_DEFAULT : /^\d{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ConfigError('PORT', `must be a whole number from 0 to 65535, got '${portText}'`);
  }

  const environmentText = nonEmpty(env.MKOBA_ENV) ?? 'sandbox';
  if (!(ENVIRONMENTS as readonly string[]).includes(environmentText)) {
    throw new ConfigError('MKOBA_ENV', `must be one of ${ENVIRONMENTS.join(', ')}, got '${environmentText}'`);
  }
  const environment = environmentText as Environment;

  const databaseUrl = nonEmpty(env.DATABASE_URL);
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must be a postgres:// or postgresql:// URL');
  }
  if (isLiveEnvironment(environment) && databaseUrl === undefined) {
    throw new ConfigError(
      'DATABASE_URL',
      `is required when MKOBA_ENV=${environment} (the embedded database does not fsync and is for the sandbox only)`,
    );
  }

  const sandboxApiKey = nonEmpty(env.MKOBA_SANDBOX_API_KEY);
  if (sandboxApiKey !== undefined) {
    const parsed = parseApiKey(sandboxApiKey);
    if (!parsed.ok || parsed.environment !== 'sandbox') {
      throw new ConfigError(
        'MKOBA_SANDBOX_API_KEY',
        "must start with 'sk_sandbox_' followed by 16 to 128 characters of A-Z, a-z, 0-9, '_' or '-'",
      );
    }
  }

  const host = nonEmpty(env.HOST) ?? HOST_DEFAULT;
  if (isIP(host) === 0 && !HOSTNAME_PATTERN.test(host)) {
    throw new ConfigError('HOST', `must be an IP address or a host name, got '${host}'`);
  }

  return {
    port,
    host,
    databaseUrl,
    dataDir: path.resolve(nonEmpty(env.MKOBA_DATA_DIR) ?? DATA_DIR_DEFAULT),
    exportDir: path.resolve(
      nonEmpty(env.MKOBA_EXPORT_DIR) ??
        path.join(nonEmpty(env.MKOBA_DATA_DIR) ?? DATA_DIR_DEFAULT, 'exports'),
    ),
    publicUrl: loadPublicUrl(env, environment),
    sandboxSimulators: environment === 'sandbox' && nonEmpty(env.MKOBA_SANDBOX_SIMULATORS) !== '0',
    environment,
    sandboxApiKey,
    webhooks: loadWebhookSettings(env, environment),
    rateLimits: loadRateLimitSettings(env, environment),
    postgres: loadPostgresSettings(env),
    ledgerWriterLanes: loadLedgerWriterLanes(env),
    encryption: loadEncryptionSettings(env),
    retention: loadRetentionSettings(env, environment),
    pilotCaps: loadPilotCaps(env, environment),
    sandboxDatabaseUrl: loadSandboxDatabaseUrl(env, environment, databaseUrl),
    conversionRateBandBps: loadConversionRateBandBps(env),
    metrics: loadMetricsSettings(env),
  };
}
