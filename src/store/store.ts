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
