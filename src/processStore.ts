/**
 * The database a process opens: PostgreSQL when DATABASE_URL is set, else the embedded data directory under
 * its lock (created on a first start, said aloud); and, in pilot and production, the sandbox's database that
 * launch gates are read from.
 */
import { REPLICA_CONNECT_TIMEOUT_MS } from './config/postgres.ts';
import { ConfigError } from './config/variables.ts';
import { type Config, DATA_DIR_LOCK_WAIT_MS } from './config.ts';
import {
  acquireDataDirLock,
  controlSocketPath,
  type HeldLock,
  isHeldLock,
  type LockOwner,
} from './store/dataDirLock.ts';
import type { ReadReplica } from './store/readReplica.ts';
import type { Store } from './store/store.ts';

export class DataDirBusyError extends Error {
  constructor(
    readonly dataDir: string,
    readonly owner: LockOwner,
  ) {
    super(
      `the embedded database in ${dataDir} is in use by process ${owner.pid} (mkoba ${owner.role}); stop it, or point MKOBA_DATA_DIR elsewhere, or set DATABASE_URL`,
    );
    this.name = 'DataDirBusyError';
  }
}

export interface OpenedStore {
  store: Store;
  /** With DATABASE_READ_URL: the replica the list endpoints read from (the store routes their statements). */
  readReplica?: ReadReplica | undefined;
  lock: HeldLock | undefined;
  /** True when the embedded data directory held no database and one was created. */
  createdDatabase: boolean;
  close(): Promise<void>;
}

/**
 * Opens PostgreSQL when DATABASE_URL is set, else the embedded data directory, taking its lock. Returns
 * the lock's owner instead when another process holds it: a server at once (a CLI command then talks to
 * it), another CLI command after waiting for it to finish.
 */
export async function openStore(
  config: Config,
  role: LockOwner['role'],
  log: (line: string) => void,
): Promise<OpenedStore | LockOwner> {
  if (config.databaseUrl !== undefined) return openPostgres(config.databaseUrl, config);
  const owner: LockOwner = {
    pid: process.pid,
    role,
    socket: role === 'serve' ? controlSocketPath(config.dataDir) : undefined,
    startedAt: new Date().toISOString(),
  };
  let lock: HeldLock | LockOwner;
  try {
    lock = await acquireDataDirLock(config.dataDir, owner, {
      waitMs: DATA_DIR_LOCK_WAIT_MS,
      shouldWaitFor: (other) => other.role === 'cli',
      onWait: (other) =>
        log(`waiting for mkoba ${other.role} (process ${other.pid}) to finish with ${config.dataDir}`),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EEXIST' || code === 'ENOTDIR' || code === 'EROFS') {
      throw new ConfigError('MKOBA_DATA_DIR', `cannot use '${config.dataDir}' as a data directory (${code})`);
    }
    throw error;
  }
  if (!isHeldLock(lock)) return lock;
  const held = lock;
  try {
    const { openPgliteDataDir, pgliteDatabaseExists } = await import('./store/pgliteDataDir.ts');
    const createdDatabase = !pgliteDatabaseExists(config.dataDir);
    const creatingSinceMs = Date.now();
    // Creating the cluster is seconds of silent CPU work: say what is happening, and that it happens once.
    if (createdDatabase) log(creatingDatabaseLine(config.dataDir));
    const store = await openPgliteDataDir(config.dataDir);
    if (createdDatabase) log(createdDatabaseLine(Date.now() - creatingSinceMs));
    return {
      store,
      lock: held,
      createdDatabase,
      async close() {
        await store.close();
        held.release();
      },
    };
  } catch (error) {
    held.release();
    throw error;
  }
}

/**
 * PostgreSQL, and with DATABASE_READ_URL its replica beside it (connected lazily: a replica that is down
 * costs lists a fall-back to the primary, never the start).
 */
async function openPostgres(databaseUrl: string, config: Config): Promise<OpenedStore> {
  const { openPostgresStore } = await import('./store/postgres.ts');
  const primary = await openPostgresStore({
    connectionString: databaseUrl,
    ...config.postgres,
    preparedStatements: config.postgresPreparedStatements,
  });
  if (config.databaseReadUrl === undefined) {
    return { store: primary, lock: undefined, createdDatabase: false, close: () => primary.close() };
  }
  const { withReadReplica } = await import('./store/readReplica.ts');
  const replica = await openPostgresStore({
    connectionString: config.databaseReadUrl,
    ...config.postgres,
    preparedStatements: config.postgresPreparedStatements,
    connectTimeoutMs: REPLICA_CONNECT_TIMEOUT_MS,
  });
  const { store, readReplica } = withReadReplica(primary, replica);
  return { store, readReplica, lock: undefined, createdDatabase: false, close: () => store.close() };
}

/** About what creating an embedded database costs on an ordinary laptop, as the progress line announces it. */
const DATABASE_CREATION_SECONDS_TYPICAL = 20;

/** How the progress line before creating the embedded database begins. */
export const CREATING_DATABASE_LEAD = 'Creating the embedded database in';
/** How the progress line once it exists begins: the end of the costly part of a first start. */
export const CREATED_DATABASE_LEAD = 'Created the embedded database in';

function creatingDatabaseLine(dataDir: string): string {
  return `${CREATING_DATABASE_LEAD} ${dataDir} (first start only, ~${DATABASE_CREATION_SECONDS_TYPICAL} s)…`;
}

function createdDatabaseLine(elapsedMs: number): string {
  return `${CREATED_DATABASE_LEAD} ${(elapsedMs / 1000).toFixed(1)} s`;
}

/** Connections a process keeps to the sandbox's database: it only reads launch gates, now and then. */
const LAUNCH_GATE_SOURCE_POOL_CONNECTIONS_MAX = 2;

/**
 * Pilot and production: the sandbox's database, where launch gates are recorded (MKOBA_SANDBOX_DATABASE_URL),
 * opened for reads; undefined when not linked. Connecting is lazy, so a sandbox that is down refuses only
 * what needs it (keys, the gates), never the start.
 */
export async function openLaunchGateSource(config: Config): Promise<Store | undefined> {
  if (config.sandboxDatabaseUrl === undefined) return undefined;
  const { openPostgresStore } = await import('./store/postgres.ts');
  return openPostgresStore({
    connectionString: config.sandboxDatabaseUrl,
    ...config.postgres,
    preparedStatements: config.postgresPreparedStatements,
    poolConnectionsMax: LAUNCH_GATE_SOURCE_POOL_CONNECTIONS_MAX,
  });
}
