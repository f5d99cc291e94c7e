/**
 * The one interface over both drivers. Everything else in the store speaks PostgreSQL SQL through it;
 * no SQL lives outside src/store.
 */
export type Row = Record<string, unknown>;

export interface Queryable {
  /** One statement with $n parameters. */
  query<R extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /**
   * Several statements in one round trip, run in order, each with its own snapshot; their rows in the same
   * order. Optional: where absent (the embedded database, which has no network) QueryPipeline runs them one
   * after another.
   */
  queryMany?(statements: readonly { text: string; params: readonly unknown[] }[]): Promise<Row[][]>;
  /** A script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Store extends Queryable {
  readonly driver: 'pglite' | 'postgres';
  /** Runs fn in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Calls onNotify after each commit that sent NOTIFY on `channel` (and once after a lost connection is
   * back, since notifications sent meanwhile are gone). Resolves to a function that stops listening.
   * Optional: a store without it is polled.
   */
  listen?(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
  /** The connection pool's use, where there is a pool (PostgreSQL): for /metrics. */
  stats?(): PoolStats;
  /** The whole database as a data directory tarball, to open another store from (embedded store only). */
  dumpDataDir?(): Promise<Blob>;
}

export interface PoolStats {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  maxCount: number;
}

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
} as const;

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

export function sqlState(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}
