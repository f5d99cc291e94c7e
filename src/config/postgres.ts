/** PostgreSQL's connections: the pool's size, the connect time-out, and the time-outs set on each connection. */
import { ConfigError, nonEmpty } from './variables.ts';

export const PG_POOL_CONNECTIONS_MAX = 10;
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
/**
 * What a client is told to wait before retrying while the database is unreachable: a failover takes a few
 * seconds (docs/OPERATIONS.md), so a client retrying each second is back within one second of it.
 */
export const PG_UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

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

/**
 * MKOBA_PG_PREPARED_STATEMENTS: `on` (the default) prepares the few statements every transfer runs once per
 * connection (src/store/preparedStatements.ts); `off` sends every statement unnamed, for a pooler in
 * transaction mode that cannot carry named statements (PgBouncer before 1.21, or without
 * `max_prepared_statements`).
 */
export function loadPreparedStatements(env: NodeJS.ProcessEnv): boolean {
  const variable = 'MKOBA_PG_PREPARED_STATEMENTS';
  const text = nonEmpty(env[variable]);
  if (text === undefined || text === 'on') return true;
  if (text === 'off') return false;
  throw new ConfigError(variable, `must be 'on' or 'off', got '${text}'`);
}

export function loadPostgresSettings(env: NodeJS.ProcessEnv): PostgresSettings {
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

/**
 * Read replicas (DATABASE_READ_URL): how long a list that presents a `Consistency-Token` waits for the
 * replica to replay that position before the primary answers it instead.
 */
export const READ_YOUR_WRITES_WAIT_MS = 1_000;
/** How often a waiting list asks the replica how far it has replayed. */
export const REPLICA_REPLAY_POLL_INTERVAL_MS = 10;
/**
 * After the replica fails to connect or answer, lists read from the primary for this long before trying
 * it again, so a replica that is down costs one failed attempt, not one per request.
 */
export const REPLICA_RETRY_AFTER_MS = 5_000;
/** A replica slower than this to connect counts as down (the primary's wait, PG_CONNECT_TIMEOUT_MS, is longer). */
export const REPLICA_CONNECT_TIMEOUT_MS = 1_000;

/**
 * DATABASE_READ_URL: a streaming replica of DATABASE_URL that list endpoints read from; unset, every read
 * goes to the primary. Only beside DATABASE_URL (the embedded database has no replicas).
 */
export function loadDatabaseReadUrl(
  env: NodeJS.ProcessEnv,
  databaseUrl: string | undefined,
): string | undefined {
  const url = nonEmpty(env.DATABASE_READ_URL);
  if (url === undefined) return undefined;
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new ConfigError('DATABASE_READ_URL', 'must be a postgres:// or postgresql:// URL');
  }
  if (databaseUrl === undefined) {
    throw new ConfigError('DATABASE_READ_URL', 'needs DATABASE_URL: it names a replica of that primary');
  }
  return url;
}
