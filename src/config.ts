/**
 * The environment schema: `Config` and `loadConfig`, with the process's own limits (its listener, request
 * bodies, rate limits, writer lanes, shutdown and start-up waits), each with its unit in its name. Each
 * other concern's variables are read in src/config/ (PostgreSQL, webhooks, encryption keys, retention,
 * pilot caps, metrics, the event stream, the deployment's addresses, Smile ID's job lease).
 */
import { isIP } from 'node:net';
import path from 'node:path';
import { loadPublicUrl, loadSandboxDatabaseUrl } from './config/deployment.ts';
import { type EncryptionSettings, loadEncryptionSettings } from './config/encryption.ts';
import { type EventStreamSettings, loadEventStreamSettings } from './config/eventStream.ts';
import { loadMetricsSettings, type MetricsSettings } from './config/metrics.ts';
import { loadPilotCaps } from './config/pilot.ts';
import {
  loadDatabaseReadUrl,
  loadPostgresSettings,
  loadPreparedStatements,
  type PostgresSettings,
} from './config/postgres.ts';
import { loadRetentionSettings, type RetentionSettings } from './config/retention.ts';
import { loadSmileIdLeaseMs } from './config/smileId.ts';
import { ConfigError, nonEmpty } from './config/variables.ts';
import { loadWebhookSettings, type WebhookSettings } from './config/webhooks.ts';
import { ENVIRONMENTS, type Environment, isLiveEnvironment } from './domain/access.ts';
import { parseApiKey } from './domain/apiKeys.ts';
import { CONVERSION_RATE_BAND_BPS_DEFAULT, CONVERSION_RATE_BAND_BPS_MAX } from './domain/conversions.ts';
import type { PilotCaps } from './domain/decisions/pilotCaps.ts';
import type { TokenBucket } from './domain/rateLimits.ts';

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
/**
 * Ledger writer lanes on PostgreSQL: batches from distinct source wallets commit in parallel, each lane on
 * its own connection (so fewer than the pool's connections, which requests' reads share). One by default:
 * on the benchmark machine (2 vCPU shared by server, database and load) bigger batches beat parallel ones
 * (docs/BENCHMARKS.md); raise it where PostgreSQL has cores of its own.
 */
export const LEDGER_WRITER_LANES_DEFAULT = 1;
/** The most writer lanes a process runs: each holds a database connection while its batch commits. */
export const LEDGER_WRITER_LANES_MAX = 32;
/**
 * After a stopping server has closed its listener (and after MKOBA_SHUTDOWN_DRAIN_MS), how long it may take to
 * finish requests in flight, the writer's batch and its workers' items before it exits anyway. Past it,
 * leases still held run out (webhook deliveries: their time-out + 5 s; transfers: RAIL_CLAIM_LEASE_MS).
 */
export const SHUTDOWN_GRACE_MS = 10_000;
/**
 * How long a stopping worker lets an item in flight (a webhook send, a rail call) finish before it gives
 * the item up and hands its lease back. Well inside SHUTDOWN_GRACE_MS, so the hand-back commits before exit.
 */
export const WORKER_HAND_BACK_AFTER_MS = 3_000;
/**
 * MKOBA_SHUTDOWN_DRAIN_MS: on SIGTERM or SIGINT a server first answers /readyz with 503 and closes each
 * connection after its answer, for this long, still serving, so a load balancer's health check takes it
 * out before it stops listening. 0 (no load balancer) by default; behind one, its check interval × the
 * failed checks it needs, plus one interval.
 */
export const SHUTDOWN_DRAIN_MS_DEFAULT = 0;
export const SHUTDOWN_DRAIN_MS_MAX = 120_000;
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
  /** DATABASE_READ_URL: a streaming replica the list endpoints read from (src/store/readReplica.ts). */
  databaseReadUrl: string | undefined;
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
  /** MKOBA_PG_PREPARED_STATEMENTS: whether the hot statements are prepared once per connection. */
  postgresPreparedStatements: boolean;
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
  /** MKOBA_EVENT_STREAM_URL and its companions: where events are published; undefined: nowhere. */
  eventStream: EventStreamSettings | undefined;
  /** MKOBA_SHUTDOWN_DRAIN_MS: how long a stopping server fails readiness before it stops listening. */
  shutdownDrainMs: number;
  /** MKOBA_SMILE_ID_LEASE_MS: how long a worker's leased Smile ID job is its own (src/config/smileId.ts). */
  smileIdLeaseMs: number;
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

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = loadPort(env);
  const environment = loadEnvironment(env);
  const databaseUrl = loadDatabaseUrl(env, environment);
  const sandboxApiKey = loadSandboxApiKey(env);
  const host = loadHost(env);
  return {
    port,
    host,
    databaseUrl,
    databaseReadUrl: loadDatabaseReadUrl(env, databaseUrl),
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
    postgresPreparedStatements: loadPreparedStatements(env),
    ledgerWriterLanes: loadLedgerWriterLanes(env),
    encryption: loadEncryptionSettings(env),
    retention: loadRetentionSettings(env, environment),
    pilotCaps: loadPilotCaps(env, environment),
    sandboxDatabaseUrl: loadSandboxDatabaseUrl(env, environment, databaseUrl),
    conversionRateBandBps: loadConversionRateBandBps(env),
    metrics: loadMetricsSettings(env),
    eventStream: loadEventStreamSettings(env),
    shutdownDrainMs: loadShutdownDrainMs(env),
    smileIdLeaseMs: loadSmileIdLeaseMs(env),
  };
}

function loadShutdownDrainMs(env: NodeJS.ProcessEnv): number {
  const text = nonEmpty(env.MKOBA_SHUTDOWN_DRAIN_MS);
  if (text === undefined) return SHUTDOWN_DRAIN_MS_DEFAULT;
  if (!/^\d{1,6}$/.test(text) || Number(text) > SHUTDOWN_DRAIN_MS_MAX) {
    throw new ConfigError(
      'MKOBA_SHUTDOWN_DRAIN_MS',
      `must be a whole number of milliseconds from 0 to ${SHUTDOWN_DRAIN_MS_MAX}, got '${text}'`,
    );
  }
  return Number(text);
}

function loadPort(env: NodeJS.ProcessEnv): number {
  const portText = nonEmpty(env.PORT);
  const port =
    portText === undefined ? PORT_DEFAULT : /^\d{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ConfigError('PORT', `must be a whole number from 0 to 65535, got '${portText}'`);
  }
  return port;
}

function loadEnvironment(env: NodeJS.ProcessEnv): Environment {
  const environmentText = nonEmpty(env.MKOBA_ENV) ?? 'sandbox';
  if (!(ENVIRONMENTS as readonly string[]).includes(environmentText)) {
    throw new ConfigError('MKOBA_ENV', `must be one of ${ENVIRONMENTS.join(', ')}, got '${environmentText}'`);
  }
  return environmentText as Environment;
}

/** DATABASE_URL: a PostgreSQL URL, required in pilot and production; unset, the embedded database. */
function loadDatabaseUrl(env: NodeJS.ProcessEnv, environment: Environment): string | undefined {
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
  return databaseUrl;
}

function loadSandboxApiKey(env: NodeJS.ProcessEnv): string | undefined {
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
  return sandboxApiKey;
}

function loadHost(env: NodeJS.ProcessEnv): string {
  const host = nonEmpty(env.HOST) ?? HOST_DEFAULT;
  if (isIP(host) === 0 && !HOSTNAME_PATTERN.test(host)) {
    throw new ConfigError('HOST', `must be an IP address or a host name, got '${host}'`);
  }
  return host;
}
