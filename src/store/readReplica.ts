/**
 * Reads that scale out (DATABASE_READ_URL): a store whose statements go to the primary, except those of a
 * list being answered (`listRead`), which go to a streaming replica. Transactions, and with them every
 * write and every read that decides one, always run on the primary; so do reads outside a list's handler
 * (authentication, rate limits, idempotency) and the loads of per-process caches (`outsideListReads`).
 *
 * Read-your-writes: a write's answer carries the primary's WAL position after it (`consistencyToken`); a
 * list given that position reads from the replica once the replica has replayed it, waiting up to
 * READ_YOUR_WRITES_WAIT_MS, and from the primary past that. A replica that cannot be reached, or that
 * refuses a statement, leaves the list to the primary: a list never fails because of its replica.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  READ_YOUR_WRITES_WAIT_MS,
  REPLICA_REPLAY_POLL_INTERVAL_MS,
  REPLICA_RETRY_AFTER_MS,
} from '../config/postgres.ts';
import type { Queryable, Row, Store } from './store.ts';

export interface ReadReplica {
  /**
   * Runs a list's work with its statements on the replica: after the replica replayed `token` when one is
   * given (else the primary, past the wait), and on the primary while the replica is down or refuses.
   */
  listRead<T>(token: string | undefined, work: () => Promise<T>): Promise<T>;
  /** The primary's WAL position now: after a commit, at or past that commit. */
  consistencyToken(): Promise<string>;
}

interface ListReadScope {
  token: string | undefined;
  /** Where this list's statements go, decided by its first one. */
  target?: Promise<'replica' | 'primary'>;
}

const listReads = new AsyncLocalStorage<ListReadScope>();

/**
 * Runs `load` on the primary even inside a list's handler: a per-process cache read there (a policy, an
 * organization's settings) must not keep a replica's older value for the writes that read it later.
 */
export function outsideListReads<T>(load: () => Promise<T>): Promise<T> {
  return listReads.exit(load);
}

/** A refusal that says the replica itself is unreachable or stopping, not that the statement was wrong. */
function isReplicaUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  // SQLSTATE class 08 (connection exception) and 57P (operator intervention: shutdown, cannot connect
  // now); Node's own socket errors (ECONNREFUSED and the like) and a driver without a code (terminated).
  if (typeof code !== 'string') return true;
  return code.startsWith('08') || code.startsWith('57P') || code.startsWith('E');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface ReplicaHealth {
  /** Where a list's statements go: the replica, once it has replayed `token` when one is given. */
  decide(token: string | undefined): Promise<'replica' | 'primary'>;
  /** The replica refused a statement: when it is unreachable, lists skip it for REPLICA_RETRY_AFTER_MS. */
  failed(error: unknown): void;
}

function replicaHealth(replica: Store, nowMs: () => number): ReplicaHealth {
  let downUntilMs = Number.NEGATIVE_INFINITY;
  const failed = (error: unknown) => {
    if (isReplicaUnavailable(error)) downUntilMs = nowMs() + REPLICA_RETRY_AFTER_MS;
  };
  /** Whether the replica has replayed `token`, asked until it has or READ_YOUR_WRITES_WAIT_MS passed. */
  const replayed = async (token: string): Promise<boolean> => {
    const deadline = nowMs() + READ_YOUR_WRITES_WAIT_MS;
    for (;;) {
      // A replica that is not in recovery (a primary named as its own replica) has every position it wrote.
      const [row] = await replica.query<{ replayed: boolean }>(
        'SELECT COALESCE(pg_last_wal_replay_lsn(), pg_current_wal_lsn()) >= $1::pg_lsn AS replayed',
        [token],
      );
      if (row?.replayed) return true;
      if (nowMs() >= deadline) return false;
      await sleep(REPLICA_REPLAY_POLL_INTERVAL_MS);
    }
  };
  return {
    async decide(token) {
      if (nowMs() < downUntilMs) return 'primary';
      if (token === undefined) return 'replica';
      try {
        return (await replayed(token)) ? 'replica' : 'primary';
      } catch (error) {
        failed(error);
        return 'primary';
      }
    },
    failed,
  };
}

/** The primary, except inside a list's handler, whose statements go where `health` decides. */
function routedStore(primary: Store, replica: Store, health: ReplicaHealth): Store {
  const listQuery = async <R extends Row>(
    scope: ListReadScope,
    sql: string,
    params: readonly unknown[] | undefined,
  ): Promise<R[]> => {
    scope.target ??= health.decide(scope.token);
    if ((await scope.target) === 'replica') {
      try {
        return await replica.query<R>(sql, params);
      } catch (error) {
        // Down, cancelled by a conflict with replay, or a statement that writes: the primary answers, and
        // the rest of this list reads there too.
        health.failed(error);
        scope.target = Promise.resolve('primary');
      }
    }
    return primary.query<R>(sql, params);
  };
  const store: Store = {
    driver: primary.driver,
    query<R extends Row>(sql: string, params?: readonly unknown[]): Promise<R[]> {
      const scope = listReads.getStore();
      return scope ? listQuery<R>(scope, sql, params) : primary.query<R>(sql, params);
    },
    exec: (sql) => primary.exec(sql),
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => primary.transaction(fn),
    async close() {
      await Promise.all([primary.close(), replica.close()]);
    },
  };
  if (primary.queryMany) store.queryMany = primary.queryMany.bind(primary);
  if (primary.listen) store.listen = primary.listen.bind(primary);
  if (primary.stats) store.stats = primary.stats.bind(primary);
  return store;
}

/**
 * The primary store with its list reads sent to `replica`. Closing it closes both. `nowMs` is the clock
 * of the replica's time-outs (the process clock by default).
 */
export function withReadReplica(
  primary: Store,
  replica: Store,
  nowMs: () => number = Date.now,
): { store: Store; readReplica: ReadReplica } {
  const store = routedStore(primary, replica, replicaHealth(replica, nowMs));
  const readReplica: ReadReplica = {
    listRead: (token, work) => listReads.run({ token }, work),
    async consistencyToken() {
      // The insert position, not the flushed one: with synchronous_commit off a commit returns before its
      // record is flushed, and the token must not be behind it.
      const [row] = await outsideListReads(() =>
        primary.query<{ position: string }>('SELECT pg_current_wal_insert_lsn()::text AS position'),
      );
      if (!row) throw new Error('the primary reported no WAL position');
      return row.position;
    },
  };
  return { store, readReplica };
}
