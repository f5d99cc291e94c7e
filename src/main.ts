/**
 * The composition root: the one place that picks the concrete store, wires use cases into the HTTP edge,
 * and starts workers. Everything else receives its dependencies.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type Deps, systemDeps } from './app/deps.ts';
import { seedSandbox } from './app/seed.ts';
import { startControlServer } from './cli/controlChannel.ts';
import { type Config, DATA_DIR_LOCK_WAIT_MS, IDEMPOTENCY_PRUNE_INTERVAL_MS } from './config.ts';
import { buildApp } from './http/app.ts';
import {
  acquireDataDirLock,
  controlSocketPath,
  type HeldLock,
  isHeldLock,
  type LockOwner,
} from './store/dataDirLock.ts';
import { migrate } from './store/migrate.ts';
import { openPgliteStore } from './store/pglite.ts';
import { openPostgresStore } from './store/postgres.ts';
import type { Store } from './store/store.ts';
import { pruneExpiredIdempotencyRecords, startPeriodic, type Worker } from './workers/idempotencyPruner.ts';

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
  lock: HeldLock | undefined;
  close(): Promise<void>;
}

/** Opens PostgreSQL when DATABASE_URL is set, else the embedded data directory (taking its lock). */
export async function openStore(config: Config, role: LockOwner['role']): Promise<OpenedStore | LockOwner> {
  if (config.databaseUrl !== undefined) {
    const store = await openPostgresStore({ connectionString: config.databaseUrl });
    return { store, lock: undefined, close: () => store.close() };
  }
  const owner: LockOwner = {
    pid: process.pid,
    role,
    socket: role === 'serve' ? controlSocketPath(config.dataDir) : undefined,
  };
  // A CLI command facing a server does not wait: it talks to the server instead.
  const lock = await acquireDataDirLock(config.dataDir, owner, DATA_DIR_LOCK_WAIT_MS, (other) =>
    Boolean(role === 'cli' && other.socket),
  );
  if (!isHeldLock(lock)) return lock;
  try {
    const store = await openPgliteStore(config.dataDir);
    return {
      store,
      lock,
      async close() {
        await store.close();
        lock.release();
      },
    };
  } catch (error) {
    lock.release();
    throw error;
  }
}

const SANDBOX_KEY_FILE = 'sandbox-api-key';

/**
 * The embedded sandbox keeps its seeded key in the data directory (mode 0600) so every `npm start` can
 * print it. The database itself holds only the hash; production never seeds and never writes this file.
 */
function rememberSandboxKey(dataDir: string, key: string | undefined): string | undefined {
  const file = path.join(dataDir, SANDBOX_KEY_FILE);
  if (key !== undefined) {
    writeFileSync(file, `${key}\n`, { mode: 0o600 });
    return key;
  }
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  deps: Deps;
  sandboxApiKey: string | undefined;
  seeded: boolean;
  stop(): Promise<void>;
}

export async function startServer(config: Config, log: (line: string) => void): Promise<RunningServer> {
  const opened = await openStore(config, 'serve');
  if (!('store' in opened)) throw new DataDirBusyError(config.dataDir, opened);
  const { store } = opened;
  const stops: (() => Promise<void>)[] = [];
  try {
    const deps = systemDeps(store, config.environment);
    const { applied } = await migrate(store);
    if (applied.length > 0) log(`applied migrations: ${applied.join(', ')}`);
    const seed =
      config.environment === 'sandbox'
        ? await seedSandbox(deps, config.sandboxApiKey)
        : { seeded: false, apiKey: undefined };

    const sandboxApiKey = opened.lock ? rememberSandboxKey(config.dataDir, seed.apiKey) : seed.apiKey;

    const app = await buildApp({ deps, logger: { level: process.env.LOG_LEVEL ?? 'warn' } });
    stops.push(() => app.close());
    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;

    const workers: Worker[] = [
      startPeriodic(
        'idempotency-pruner',
        IDEMPOTENCY_PRUNE_INTERVAL_MS,
        () => pruneExpiredIdempotencyRecords(deps),
        (name, error) => app.log.error({ err: error }, `${name} failed`),
      ),
    ];
    stops.push(async () => {
      await Promise.all(workers.map((w) => w.stop()));
    });
    if (opened.lock?.owner.socket) {
      const control = await startControlServer(deps, opened.lock.owner.socket);
      stops.push(() => control.close());
    }
    return {
      app,
      url: `http://${host}:${port}`,
      deps,
      sandboxApiKey,
      seeded: seed.seeded,
      async stop() {
        for (const stop of stops.reverse()) await stop();
        await opened.close();
      },
    };
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await opened.close();
    throw error;
  }
}

/** Dependencies for building the app only to read its route schemas (`mkoba openapi`): no database. */
export function documentationOnlyDeps(): Deps {
  const refuse = async (): Promise<never> => {
    throw new Error('no database: this app instance only documents the API');
  };
  const store: Store = {
    driver: 'postgres',
    query: refuse,
    exec: refuse,
    transaction: refuse,
    close: async () => {},
  };
  return systemDeps(store, 'sandbox');
}
