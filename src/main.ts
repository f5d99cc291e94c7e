/**
 * The composition root: the one place that picks the concrete store, wires use cases into the HTTP edge,
 * and starts workers. Everything else receives its dependencies. The HTTP stack and the database drivers
 * are imported when first needed, so that CLI commands that use neither (help, a command handed to the
 * running server, a configuration error) start quickly.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type Deps, systemDeps } from './app/deps.ts';
import { LedgerWriter } from './app/posting/writer.ts';
import { watchSanctionsList } from './app/sanctions/screeningIndex.ts';
import { missingMasterKeys, sealClearSecrets } from './app/secretsAtRest.ts';
import { SANDBOX_ORGANIZATION_NAME, seedSandbox } from './app/seed.ts';
import { startControlServer } from './cli/controlChannel.ts';
import { requireEncryptionKey } from './config/encryption.ts';
import { IDEMPOTENCY_PRUNE_INTERVAL_MS, RETENTION_PRUNE_INTERVAL_MS } from './config/retention.ts';
import { ConfigError } from './config/variables.ts';
import { type Config, DATA_DIR_LOCK_WAIT_MS } from './config.ts';
import type { Environment } from './domain/apiKeys.ts';
import { type Keyring, keyringIds, keyringOf, MASTER_KEY_BYTES, parseMasterKey } from './domain/sealing.ts';
import { EXPORT_WORKER_INTERVAL_MS, exportFormatters, runExportWorkerOnce } from './modules/exports/index.ts';
import { LAUNCH_GATE_WORKER_INTERVAL_MS, launchGateWalker } from './modules/launchGates/index.ts';
import { PAYMENT_BATCH_WORKER_INTERVAL_MS, runPaymentBatchPass } from './modules/paymentBatches/index.ts';
import {
  ensureSimulatedRailPartner,
  PARTNER_RAIL_FACTORIES,
  RAIL_CALLBACK_SWEEP_INTERVAL_MS,
  type RailPartnerDirectory,
  railPartnerDirectory,
  runRailCallbackSweepOnce,
} from './modules/railPartners/index.ts';
import { DAY_WORKER_INTERVAL_MS, runDayWorkerOnce } from './modules/testClock/index.ts';
import { httpWebhookSender, startWebhookDispatcher } from './modules/webhooks/index.ts';
import { sandboxRails } from './rails/sandbox.ts';
import { DARAJA_SIMULATOR_DEFAULT_CREDENTIALS, startDarajaSimulator } from './simulators/mpesaDaraja.ts';
import { startMomoSimulator } from './simulators/mtnMomo.ts';
import {
  acquireDataDirLock,
  controlSocketPath,
  type HeldLock,
  isHeldLock,
  type LockOwner,
} from './store/dataDirLock.ts';
import { migrate } from './store/migrate.ts';
import { findOrganizationByName } from './store/repositories/organizations.ts';
import type { Store } from './store/store.ts';
import { APPROVAL_EXPIRY_INTERVAL_MS, runApprovalExpiryOnce } from './workers/approvalExpiry.ts';
import {
  COLLECTION_WORKER_INTERVAL_MS,
  type CollectionRailResolver,
  partnerCollectionRail,
  runCollectionWorkerOnce,
  simulatedCollectionRail,
} from './workers/collectionWorker.ts';
import { DEPOSIT_WORKER_INTERVAL_MS, runDepositWorkerOnce } from './workers/depositWorker.ts';
import { pruneExpiredIdempotencyRecords } from './workers/idempotencyPruner.ts';
import { startPeriodic, type Worker } from './workers/periodic.ts';
import {
  RAIL_WORKER_INTERVAL_MS,
  type RailResolver,
  type RailWorkerLog,
  registryResolver,
  runRailWorkerOnce,
} from './workers/railWorker.ts';
import { pruneExpiredHistory } from './workers/retentionPruner.ts';
import { runSafeguardingWorkerOnce, SAFEGUARDING_WORKER_INTERVAL_MS } from './workers/safeguardingWorker.ts';
import { runVerificationWorkerOnce, VERIFICATION_WORKER_INTERVAL_MS } from './workers/verificationWorker.ts';

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
  if (config.databaseUrl !== undefined) {
    const { openPostgresStore } = await import('./store/postgres.ts');
    const store = await openPostgresStore({ connectionString: config.databaseUrl, ...config.postgres });
    return { store, lock: undefined, createdDatabase: false, close: () => store.close() };
  }
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

/** One JSON line per request (see src/http/app.ts) is written at this level. */
export const LOG_LEVEL_DEFAULT = 'info';

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

const ENCRYPTION_KEY_FILE = 'encryption-key';

/**
 * The master keys of a process: MKOBA_ENCRYPTION_KEY to seal with, and MKOBA_ENCRYPTION_KEYS_PREVIOUS to
 * open what older keys sealed. The embedded sandbox without MKOBA_ENCRYPTION_KEY generates a key once and
 * keeps it in <MKOBA_DATA_DIR>/encryption-key (mode 0600); when MKOBA_ENCRYPTION_KEY is set there, a key in
 * that file still opens what it sealed, so moving to a configured key takes only `mkoba encryption rewrap`.
 */
export function loadKeyring(config: Config, embedded: boolean): Keyring {
  const configured = requireEncryptionKey(config);
  if (!embedded) return keyringOf(configured, config.encryption.previousKeys);
  const file = path.join(config.dataDir, ENCRYPTION_KEY_FILE);
  let stored: Uint8Array | undefined;
  try {
    const text = readFileSync(file, 'utf8');
    stored = parseMasterKey(text);
    if (!stored) {
      throw new ConfigError(
        'MKOBA_ENCRYPTION_KEY',
        `is not set, and ${file} does not hold ${MASTER_KEY_BYTES} bytes in base64 or hex`,
      );
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (configured === undefined && stored === undefined) {
    stored = new Uint8Array(randomBytes(MASTER_KEY_BYTES));
    writeFileSync(file, `${Buffer.from(stored).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  }
  const older = configured !== undefined && stored !== undefined ? [stored] : [];
  return keyringOf(configured ?? stored, [...config.encryption.previousKeys, ...older]);
}

/**
 * Start-up duties for secrets at rest: refuse to run with keys that cannot open the stored secrets (every
 * delivery would fail), and seal what an earlier version stored in clear.
 */
async function openSecretsAtRest(deps: Deps, log: (line: string) => void): Promise<void> {
  const missing = await missingMasterKeys(deps);
  if (missing.length > 0) {
    throw new ConfigError(
      'MKOBA_ENCRYPTION_KEY',
      `stored webhook secrets are sealed under master key ${missing.join(', ')}, but this process has only ${keyringIds(deps.keyring).join(', ')}: set MKOBA_ENCRYPTION_KEY (or MKOBA_ENCRYPTION_KEYS_PREVIOUS) to the key they were sealed with`,
    );
  }
  const sealed = await sealClearSecrets(deps);
  if (sealed.secrets + sealed.responses > 0) {
    log(
      `sealed ${sealed.secrets} webhook secret(s) and ${sealed.responses} stored response(s) that an earlier version kept in clear`,
    );
  }
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
    poolConnectionsMax: LAUNCH_GATE_SOURCE_POOL_CONNECTIONS_MAX,
  });
}

/** Deps of a serving or working process: the configured keys and webhook address rules. */
function processDeps(store: Store, config: Config, keyring: Keyring, launchGateSource?: Store): Deps {
  return systemDeps(store, config.environment, {
    keyring,
    allowPrivateWebhookUrls: !config.webhooks.blockReservedAddresses,
    exportDirectory: config.exportDir,
    railPartnerFactories: PARTNER_RAIL_FACTORIES,
    publicUrl: config.publicUrl,
    pilotCaps: config.pilotCaps,
    launchGateSource,
    conversionRateBandBps: config.conversionRateBandBps,
    metricsResourceLabels: config.metrics.resourceLabels,
  });
}

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  deps: Deps;
  sandboxApiKey: string | undefined;
  seeded: boolean;
  stop(): Promise<void>;
}

export interface StartServerOptions {
  /** Where the server's JSON log lines go (default stderr). */
  logStream?: { write(line: string): void };
}

export async function startServer(
  config: Config,
  log: (line: string) => void,
  options: StartServerOptions = {},
): Promise<RunningServer> {
  // A missing key is a configuration error: found before anything is opened.
  requireEncryptionKey(config);
  const opened = await openStore(config, 'serve', log);
  if (!('store' in opened)) throw new DataDirBusyError(config.dataDir, opened);
  const { store } = opened;
  const stops: (() => Promise<void>)[] = [];
  try {
    const launchGateSource = await openLaunchGateSource(config);
    if (launchGateSource) stops.push(() => launchGateSource.close());
    const deps = processDeps(store, config, loadKeyring(config, opened.lock !== undefined), launchGateSource);
    const { applied } = await migrate(store);
    if (applied.length > 0) log(`applied migrations: ${applied.join(', ')}`);
    await openSecretsAtRest(deps, log);
    const seed =
      config.environment === 'sandbox'
        ? await seedSandbox(deps, config.sandboxApiKey)
        : { seeded: false, apiKey: undefined };

    if (seed.seeded) log(`seeded the sandbox organization '${SANDBOX_ORGANIZATION_NAME}'`);
    const sandboxApiKey = opened.lock ? rememberSandboxKey(config.dataDir, seed.apiKey) : seed.apiKey;

    const { buildApp } = await import('./http/app.ts');
    // The log goes to stderr with the CLI's other informational lines; stdout is for results.
    const app = await buildApp({
      deps,
      logger: {
        level: process.env.LOG_LEVEL || LOG_LEVEL_DEFAULT,
        stream: options.logStream ?? process.stderr,
      },
      rateLimits: config.rateLimits,
      ledgerWriterLanes: config.ledgerWriterLanes,
      metricsToken: config.metrics.token,
    });
    stops.push(() => app.close());
    // Resolves once the active sanctions list's index is built: no request waits for a first build.
    stops.push(
      await watchSanctionsList(deps, (error) => app.log.error({ err: error }, 'sanctions list watch failed')),
    );
    await listen(app, config);
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    if (config.environment === 'sandbox' && deps.publicUrl === undefined)
      deps.publicUrl = `http://${host}:${port}`;
    if (config.sandboxSimulators) stops.push(await startSandboxSimulators(deps, log));

    const workers = startWorkers(
      deps,
      config,
      (name, error) => app.log.error({ err: error }, `${name} failed`),
      (level, message, fields) => app.log[level]({ worker: 'rail-worker', ...fields }, message),
    );
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

/**
 * The background work of a process: idempotency and retention pruning, the webhook dispatcher, and (sandbox) the rail
 * worker. `mkoba serve` runs them beside the API; `mkoba worker` runs them alone. Any number of processes
 * may run them against one PostgreSQL: every queue is claimed with FOR UPDATE SKIP LOCKED.
 */
export function startWorkers(
  deps: Deps,
  config: Config,
  onError: (name: string, error: unknown) => void,
  railLog: RailWorkerLog,
): Worker[] {
  // Batch items go through a writer of their own: each chunk is one transaction with the batch's steps.
  const batchWriter = new LedgerWriter(deps, 1);
  const workers: Worker[] = [
    startPeriodic(
      'idempotency-pruner',
      IDEMPOTENCY_PRUNE_INTERVAL_MS,
      () => pruneExpiredIdempotencyRecords(deps),
      onError,
    ),
    startPeriodic(
      'retention-pruner',
      RETENTION_PRUNE_INTERVAL_MS,
      () => pruneExpiredHistory(deps, config.retention.days),
      onError,
    ),
    startPeriodic('approval-expiry', APPROVAL_EXPIRY_INTERVAL_MS, () => runApprovalExpiryOnce(deps), onError),
    startPeriodic(
      'export-worker',
      EXPORT_WORKER_INTERVAL_MS,
      () => runExportWorkerOnce(deps, exportFormatters(config.environment)),
      onError,
    ),
    startPeriodic(
      'payment-batch-worker',
      PAYMENT_BATCH_WORKER_INTERVAL_MS,
      () => runPaymentBatchPass(deps, batchWriter),
      onError,
    ),
    startPeriodic(
      'safeguarding-check',
      SAFEGUARDING_WORKER_INTERVAL_MS,
      () => runSafeguardingWorkerOnce(deps),
      onError,
    ),
    startPeriodic(
      'day-worker',
      DAY_WORKER_INTERVAL_MS,
      async () => {
        const { failures } = await runDayWorkerOnce(deps);
        for (const failure of failures) {
          onError(`day-worker ${failure.work} ${failure.organizationId}`, failure.error);
        }
      },
      onError,
    ),
    startWebhookDispatcher(
      deps,
      {
        settings: config.webhooks,
        sender: httpWebhookSender({
          timeoutMs: config.webhooks.timeoutMs,
          blockReservedAddresses: config.webhooks.blockReservedAddresses,
        }),
      },
      (error) => onError('webhook-dispatcher', error),
    ),
  ];
  const directory = railPartnerDirectory(deps);
  const resolveRail = payoutRailResolver(directory, config.environment);
  const simulatedCollections = config.environment === 'sandbox' ? simulatedCollectionRail() : undefined;
  const resolveCollectionRail: CollectionRailResolver = async (collection) => {
    const partner = await directory.forRail(collection.organizationId, collection.rail, collection.network);
    return partner ? partnerCollectionRail(partner) : simulatedCollections;
  };
  workers.push(
    startPeriodic(
      'rail-worker',
      RAIL_WORKER_INTERVAL_MS,
      () => runRailWorkerOnce(deps, resolveRail, { log: railLog }),
      onError,
    ),
    startPeriodic(
      'collection-worker',
      COLLECTION_WORKER_INTERVAL_MS,
      () => runCollectionWorkerOnce(deps, resolveCollectionRail, { log: railLog }),
      onError,
    ),
    startPeriodic(
      'rail-callback-sweep',
      RAIL_CALLBACK_SWEEP_INTERVAL_MS,
      () => runRailCallbackSweepOnce(deps, directory),
      onError,
    ),
  );
  // Deposits are decided wherever they come from (the simulated chain today, a custody provider later).
  workers.push(
    startPeriodic(
      'deposit-worker',
      DEPOSIT_WORKER_INTERVAL_MS,
      () => runDepositWorkerOnce(deps, { log: railLog }),
      onError,
    ),
  );
  // Only a simulated verification provider exists so far: production does not simulate a verification.
  // Launch gates are decided where the organization integrates; pilot and production read that record.
  if (config.environment === 'sandbox') {
    workers.push(
      startPeriodic('launch-gates', LAUNCH_GATE_WORKER_INTERVAL_MS, launchGateWalker(deps), onError),
    );
    workers.push(
      startPeriodic(
        'verification-worker',
        VERIFICATION_WORKER_INTERVAL_MS,
        () => runVerificationWorkerOnce(deps),
        onError,
      ),
    );
  }
  return workers;
}

/**
 * Where the rail worker sends a payout: the organization's configured rail partner; in the sandbox, a rail
 * without one is carried by the simulated rails. Production has no simulation: a rail no partner carries
 * fails the transfer.
 */
export function payoutRailResolver(directory: RailPartnerDirectory, environment: Environment): RailResolver {
  const simulated = environment === 'sandbox' ? registryResolver(sandboxRails()) : undefined;
  return async (transfer) =>
    (await directory.forTransfer(transfer)) ?? (simulated ? simulated(transfer) : undefined);
}

/**
 * The sandbox's partner simulators, in this process: the sandbox organization's M-Pesa and MTN partners point
 * at them, so its sandbox payouts and collections run through the production adapters. Returns the stop.
 */
export async function startSandboxSimulators(
  deps: Deps,
  log: (line: string) => void,
): Promise<() => Promise<void>> {
  const organization = await findOrganizationByName(deps.store, SANDBOX_ORGANIZATION_NAME);
  const daraja = await startDarajaSimulator();
  const momo = await startMomoSimulator();
  const stop = async () => {
    await daraja.close();
    await momo.close();
  };
  if (!organization) return stop;
  const configured = [
    await ensureSimulatedRailPartner(deps, organization.id, {
      partner: 'mpesa_daraja',
      settings: {
        base_url: daraja.url,
        short_code: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.shortCode,
        initiator_name: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.initiatorName,
        stk_short_code: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.stkShortCode,
      },
      credentials: {
        consumer_key: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.consumerKey,
        consumer_secret: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.consumerSecret,
        security_credential: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.securityCredential,
        passkey: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.passkey,
      },
    }),
    await ensureSimulatedRailPartner(deps, organization.id, {
      partner: 'mtn_momo',
      settings: { base_url: momo.url, target_environment: momo.credentials.targetEnvironment },
      credentials: {
        api_user: momo.credentials.apiUser,
        api_key: momo.credentials.apiKey,
        collection_subscription_key: momo.credentials.collectionSubscriptionKey,
        disbursement_subscription_key: momo.credentials.disbursementSubscriptionKey,
      },
    }),
  ];
  const names = configured.filter((c) => c !== undefined).map((c) => c.partner);
  log(
    `sandbox partner simulators: M-Pesa Daraja at ${daraja.url}, MTN MoMo at ${momo.url}${names.length ? ` (carrying ${names.join(', ')})` : ''}`,
  );
  return stop;
}

/** `mkoba worker`: the background work without the API, until stopped. */
export async function startWorkerProcess(
  config: Config,
  log: (line: string) => void,
): Promise<{ deps: Deps; stop(): Promise<void> }> {
  // With the embedded database a worker holds the data directory like any one-off command: it is meant for
  // PostgreSQL, where any number of workers run beside any number of servers.
  requireEncryptionKey(config);
  const opened = await openStore(config, 'cli', log);
  if (!('store' in opened)) throw new DataDirBusyError(config.dataDir, opened);
  try {
    const deps = processDeps(opened.store, config, loadKeyring(config, opened.lock !== undefined));
    await migrate(opened.store);
    await openSecretsAtRest(deps, log);
    // Payment batches screen their items: a worker notices and builds list versions as a server does.
    const stopWatchingSanctions = await watchSanctionsList(deps, (error) =>
      log(
        `mkoba worker: sanctions list watch failed: ${error instanceof Error ? error.message : String(error)}`,
      ),
    );
    const workers = startWorkers(
      deps,
      config,
      (name, error) =>
        log(`mkoba worker: ${name} failed: ${error instanceof Error ? error.message : String(error)}`),
      (level, message, fields) =>
        log(
          `mkoba worker: rail-worker ${level}: ${message} (${Object.entries(fields)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ')})`,
        ),
    );
    return {
      deps,
      async stop() {
        await Promise.all(workers.map((w) => w.stop()));
        await stopWatchingSanctions();
        await opened.close();
      },
    };
  } catch (error) {
    await opened.close();
    throw error;
  }
}

/** Binds the HTTP port; a port taken or an address that is not ours is a configuration problem. */
async function listen(app: FastifyInstance, config: Config): Promise<void> {
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new ConfigError('PORT', `${config.port} is already in use on ${config.host}; pick another PORT`);
    }
    if (code === 'EACCES') {
      throw new ConfigError(
        'PORT',
        `${config.port} needs privileges on ${config.host}; pick a PORT above 1023`,
      );
    }
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      throw new ConfigError('HOST', `cannot listen on '${config.host}' (${code})`);
    }
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
