/** The server driver: node-postgres against PostgreSQL (DATABASE_URL). */
import pg from 'pg';
import {
  DEFAULT_POSTGRES_SETTINGS,
  PG_CONNECT_TIMEOUT_MS,
  PG_POOL_CONNECTIONS_MAX,
  type PostgresSettings,
} from '../config/postgres.ts';
import { withArrayLiterals } from './arrayParameters.ts';
import { inlineParameters } from './inlineParameters.ts';
import { preparedNameOf } from './preparedStatements.ts';
import type { Queryable, Row, Store } from './store.ts';

// BIGINT (int8) stays a string from the driver; repositories turn it into bigint, never a JS number.
const INT8_OID = 20;
pg.types.setTypeParser(INT8_OID, (value: string) => value);

export interface PostgresStoreOptions extends Partial<PostgresSettings> {
  connectionString: string;
  /** A schema to put first on the search_path: tests give each file its own. */
  schema?: string | undefined;
  poolConnectionsMax?: number | undefined;
  /** How long a new connection may take (PG_CONNECT_TIMEOUT_MS by default). */
  connectTimeoutMs?: number | undefined;
  /** Whether registered statements are prepared once per connection (true by default). */
  preparedStatements?: boolean | undefined;
}

/**
 * A statement as node-postgres takes it: named when its text is registered and preparing is on (prepared
 * once per connection), else unnamed.
 */
function statementOf(sql: string, params: readonly unknown[], prepare: boolean): pg.QueryConfig {
  const name = prepare ? preparedNameOf(sql) : undefined;
  const values = withArrayLiterals(params);
  return name === undefined ? { text: sql, values } : { name, text: sql, values };
}

function wrapClient(client: pg.PoolClient | pg.Pool, prepare: boolean): Queryable {
  return {
    async query<R extends Row>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
      const result = await client.query<R>(statementOf(sql, params, prepare));
      return result.rows;
    },
    async exec(sql: string): Promise<void> {
      await client.query(sql);
    },
  };
}

export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const maxCount = options.poolConnectionsMax ?? PG_POOL_CONNECTIONS_MAX;
  const pool = openPool(options, maxCount);
  const prepare = options.preparedStatements ?? true;
  const base = wrapClient(pool, prepare);
  return {
    driver: 'postgres',
    query: base.query,
    exec: base.exec,
    transaction: (fn) => runTransaction(pool, prepare, fn),
    listen: (channel, onNotify) =>
      listenWithReconnect(
        { connectionString: options.connectionString, connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS },
        channel,
        onNotify,
      ),
    close: () => pool.end(),
    stats: () => ({
      totalCount: pool.totalCount,
      idleCount: pool.idleCount,
      waitingCount: pool.waitingCount,
      maxCount,
    }),
  };
}

function openPool(options: PostgresStoreOptions, maxCount: number): pg.Pool {
  const defaults = DEFAULT_POSTGRES_SETTINGS;
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: maxCount,
    connectionTimeoutMillis: options.connectTimeoutMs ?? PG_CONNECT_TIMEOUT_MS,
    options: options.schema ? `-c search_path=${options.schema}` : undefined,
    // Sent as startup parameters beside `options` (and PGOPTIONS), so every connection has them from its
    // first statement. The driver sends none for 0, which leaves the server's setting.
    statement_timeout: options.statementTimeoutMs ?? defaults.statementTimeoutMs,
    lock_timeout: options.lockTimeoutMs ?? defaults.lockTimeoutMs,
    idle_in_transaction_session_timeout:
      options.idleInTransactionTimeoutMs ?? defaults.idleInTransactionTimeoutMs,
  });
  // An idle client that loses its server must not crash the process; the next checkout reconnects.
  pool.on('error', () => {});
  // Nor one checked out: the pool's own listener is off then, and a FATAL between statements (a primary
  // killed in a failover sends 57P01) would be an 'error' event no one hears. Statements still fail, and
  // a transaction's own listener (runTransaction) still keeps the error.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** One transaction on a client of its own: committed when `fn` resolves, rolled back when it throws. */
async function runTransaction<T>(
  pool: pg.Pool,
  prepare: boolean,
  fn: (tx: Queryable) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  // The server ends a session left idle in a transaction too long (25P03) while no query of ours is
  // running, so the driver reports it as an 'error' event: keep it (it must not crash the process) and
  // throw it instead of the driver's "not queryable" error on the next statement.
  let lost: unknown;
  const onLost = (error: unknown) => {
    lost ??= error;
  };
  client.on('error', onLost);
  let broken = false;
  const session = transactionSession(client, prepare);
  try {
    const result = await fn(session.tx);
    if (session.begun()) await client.query('COMMIT');
    return result;
  } catch (error) {
    try {
      if (session.begun()) await client.query('ROLLBACK');
    } catch {
      broken = true;
    }
    throw lost ?? error;
  } finally {
    client.off('error', onLost);
    client.release(broken || lost !== undefined);
  }
}

/**
 * The queries of a transaction on `client`. BEGIN goes out with the transaction's first statement when that
 * is a pipeline of several (one round trip for both), else on its own just before it. Statements reach the
 * client in the order they were issued, also those issued together while BEGIN is on its way (each waits for
 * the one BEGIN, and their waits end in the order they began).
 */
function transactionSession(client: pg.PoolClient, prepare: boolean): { tx: Queryable; begun(): boolean } {
  let began: Promise<unknown> | undefined;
  const afterBegin = (): Promise<unknown> => {
    began ??= client.query('BEGIN');
    return began;
  };
  const tx: Queryable = {
    async query<R extends Row>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
      await afterBegin();
      return (await client.query<R>(statementOf(sql, params, prepare))).rows;
    },
    async queryMany(statements) {
      const texts = statements.map((s) => inlineParameters(s.text, s.params));
      if (began) await began;
      else texts.unshift('BEGIN');
      const sent = client.query(texts.join(';\n')) as unknown as Promise<pg.QueryResult | pg.QueryResult[]>;
      began ??= sent;
      const result = await sent;
      const results = Array.isArray(result) ? result : [result];
      return results.slice(results.length - statements.length).map((r) => r.rows);
    },
    async exec(sql: string): Promise<void> {
      await afterBegin();
      await client.query(sql);
    },
  };
  return { tx, begun: () => began !== undefined };
}

/** How long a lost LISTEN connection waits before connecting again. */
const LISTEN_RECONNECT_DELAY_MS = 1_000;
const CHANNEL_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * LISTEN on a dedicated connection (a pooled one would drop it on release). A lost connection is opened
 * again after a pause, and onNotify is called once it is back: what was notified meanwhile is lost.
 */
async function listenWithReconnect(
  config: pg.ClientConfig,
  channel: string,
  onNotify: () => void,
): Promise<() => Promise<void>> {
  if (!CHANNEL_PATTERN.test(channel)) throw new Error(`invalid channel name '${channel}'`);
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const next = new pg.Client(config);
    const lost = () => {
      if (client !== next) return;
      client = undefined;
      void next.end().catch(() => {});
      if (!stopped) {
        retry = setTimeout(() => void reconnect(), LISTEN_RECONNECT_DELAY_MS);
        retry.unref();
      }
    };
    next.on('error', lost);
    next.on('end', lost);
    next.on('notification', (message) => {
      if (message.channel === channel) onNotify();
    });
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN ${channel}`);
    } catch (error) {
      lost();
      throw error;
    }
  };
  const reconnect = async () => {
    if (stopped) return;
    try {
      await connect();
      onNotify();
    } catch {
      // lost() has scheduled the next try.
    }
  };
  try {
    await connect();
  } catch (error) {
    // The first connection failed: the caller hears of it (and polls); no retry is left running.
    stopped = true;
    clearTimeout(retry);
    throw error;
  }
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const current = client;
    client = undefined;
    await current?.end().catch(() => {});
  };
}

const SCHEMA_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/** Creates (or drops) a schema: each test file, or each isolated tenant of a shared server, gets its own. */
export async function createSchema(connectionString: string, schema: string): Promise<void> {
  await withClient(connectionString, (client) =>
    client.query(`CREATE SCHEMA IF NOT EXISTS ${checked(schema)}`),
  );
}

export async function dropSchema(connectionString: string, schema: string): Promise<void> {
  await withClient(connectionString, (client) =>
    client.query(`DROP SCHEMA IF EXISTS ${checked(schema)} CASCADE`),
  );
}

function checked(schema: string): string {
  if (!SCHEMA_NAME_PATTERN.test(schema)) throw new Error(`invalid schema name '${schema}'`);
  return schema;
}

async function withClient<T>(connectionString: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
