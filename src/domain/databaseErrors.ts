/**
 * What an error thrown by the database driver means (PostgreSQL's SQLSTATE, node-postgres's pool time-out):
 * read by the store, the use cases and the HTTP edge's problems. Pure: it looks at the error value only.
 */

/** PostgreSQL SQLSTATEs the store reacts to. */
export const SQLSTATE = {
  uniqueViolation: '23505',
  numericValueOutOfRange: '22003',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
  /** statement_timeout ran out (or the statement was cancelled). */
  queryCanceled: '57014',
  /** lock_timeout ran out waiting for a lock. */
  lockNotAvailable: '55P03',
  /** idle_in_transaction_session_timeout ended the session. */
  idleInTransactionSessionTimeout: '25P03',
  /** A write reached a standby (a failover in progress, or a connection not to the primary). */
  readOnlySqlTransaction: '25006',
  /** The server is shutting down, crashed, or is starting up or in recovery. */
  adminShutdown: '57P01',
  crashShutdown: '57P02',
  cannotConnectNow: '57P03',
} as const;

/** SQLSTATE class 08: connection exceptions (the server refused or lost the connection). */
const CONNECTION_EXCEPTION_CLASS = '08';
const UNAVAILABLE_SQLSTATES: ReadonlySet<string> = new Set([
  SQLSTATE.readOnlySqlTransaction,
  SQLSTATE.adminShutdown,
  SQLSTATE.crashShutdown,
  SQLSTATE.cannotConnectNow,
]);
/** Node's socket errors on a connection to the database (or to a proxy in front of it). */
const SOCKET_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
/** node-postgres's own words for a connection that ended under it, or that it will no longer use. */
const CONNECTION_LOST_MESSAGES: ReadonlySet<string> = new Set([
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
]);

/**
 * node-postgres gave up waiting for a connection: every pooled connection stayed busy (or a new one did
 * not open) within PG_CONNECT_TIMEOUT_MS. Nothing was sent to the database, so the same work may be retried.
 * (PGlite has no pool: one connection, queued, never this.)
 */
export function isPoolTimeout(error: unknown): boolean {
  if (!(error instanceof Error) || sqlState(error) !== undefined) return false;
  return (
    error.message === 'timeout exceeded when trying to connect' ||
    error.message === 'Connection terminated due to connection timeout'
  );
}

/** The time-outs of PostgresSettings: the transaction was rolled back, and the same work may succeed soon. */
export function isDatabaseTimeout(error: unknown): boolean {
  const state = sqlState(error);
  return (
    state === SQLSTATE.queryCanceled ||
    state === SQLSTATE.lockNotAvailable ||
    state === SQLSTATE.idleInTransactionSessionTimeout
  );
}

/**
 * PostgreSQL rolled the transaction back to end a conflict with a concurrent one (a deadlock, or a
 * serialization failure): nothing of it was written, and the same work run again will usually succeed.
 */
export function isTransactionConflict(error: unknown): boolean {
  const state = sqlState(error);
  return state === SQLSTATE.deadlockDetected || state === SQLSTATE.serializationFailure;
}

/**
 * The database is not there to answer: the connection was refused or lost, or the server is shutting
 * down, starting up or read-only (a failover or restart in progress). Unlike a time-out, a commit in
 * flight may have been carried out; a retry under the same Idempotency-Key finds out which.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = sqlState(error);
  if (code !== undefined) {
    return (
      UNAVAILABLE_SQLSTATES.has(code) ||
      code.startsWith(CONNECTION_EXCEPTION_CLASS) ||
      SOCKET_ERROR_CODES.has(code)
    );
  }
  return CONNECTION_LOST_MESSAGES.has(error.message);
}

export function sqlState(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}
