/**
 * The composition root: the one place that picks the concrete store, wires use cases into the HTTP edge,
 * and starts workers. Everything else receives its dependencies. The HTTP stack and the database drivers
 * are imported when first needed, so that CLI commands that use neither (help, a command handed to the
 * running server, a configuration error) start quickly. Beside it: the store a process opens
 * (processStore.ts), its keys and secrets at rest (processSecrets.ts), the server's HTTP side
 * (serverHttp.ts), the rail side's work (railWork.ts) and the sandbox's partner simulators
 * (partnerSimulators.ts).
 */
import type { FastifyInstance } from 'fastify';
import { type Deps, systemDeps } from './app/deps.ts';
import { SANDBOX_ORGANIZATION_NAME, seedSandbox } from './app/seed.ts';
import { startControlServer } from './cli/controlChannel.ts';
import { requireEncryptionKey } from './config/encryption.ts';
import { IDEMPOTENCY_PRUNE_INTERVAL_MS, RETENTION_PRUNE_INTERVAL_MS } from './config/retention.ts';
import type { Config } from './config.ts';
import type { Keyring } from './domain/sealing.ts';
import { APPROVAL_EXPIRY_INTERVAL_MS, runApprovalExpiryOnce } from './modules/authorization/index.ts';
import {
  runSmileIdWorkerOnce,
  runVerificationWorkerOnce,
  SMILE_ID_WORKER_INTERVAL_MS,
  VERIFICATION_WORKER_INTERVAL_MS,
  watchSanctionsList,
} from './modules/compliance/index.ts';
import { startEventStreamPublisher } from './modules/eventStream/index.ts';
import { EXPORT_WORKER_INTERVAL_MS, exportFormatters, runExportWorkerOnce } from './modules/exports/index.ts';
import { LAUNCH_GATE_WORKER_INTERVAL_MS, launchGateWalker } from './modules/launchGates/index.ts';
import { PAYMENT_BATCH_WORKER_INTERVAL_MS, runPaymentBatchPass } from './modules/paymentBatches/index.ts';
import { PARTNER_RAIL_FACTORIES } from './modules/railPartners/index.ts';
import { DAY_WORKER_INTERVAL_MS, runDayWorkerOnce } from './modules/testClock/index.ts';
import { LedgerWriter, type RailWorkerLog } from './modules/transfers/index.ts';
import { runSafeguardingWorkerOnce, SAFEGUARDING_WORKER_INTERVAL_MS } from './modules/treasury/index.ts';
import { httpWebhookSender, startWebhookDispatcher } from './modules/webhooks/index.ts';
import { loadKeyring, openSecretsAtRest, rememberSandboxKey } from './processSecrets.ts';
import { DataDirBusyError, type OpenedStore, openLaunchGateSource, openStore } from './processStore.ts';
import { type PeriodicWork, railWork, startSandboxSimulators } from './railWork.ts';
import {
  buildServerApp,
  type Draining,
  listenAt,
  type StartServerOptions,
  type Stops,
} from './serverHttp.ts';
import { migrate } from './store/migrate.ts';
import type { Store } from './store/store.ts';
import { tracedStore } from './store/tracedStore.ts';
import { startProcessTracing } from './telemetry/start.ts';
import { pruneExpiredIdempotencyRecords } from './workers/idempotencyPruner.ts';
import { startPeriodic, type Worker } from './workers/periodic.ts';
import { pruneExpiredHistory } from './workers/retentionPruner.ts';

/** Deps of a serving or working process: the configured keys and webhook address rules. */
/**
 * Starts the process's tracing, then opens its store as `role`; when the store cannot be opened (or its data
 * directory is another process's), tracing is stopped again before the error is thrown.
 */
async function openTracedStore(
  config: Config,
  role: Parameters<typeof openStore>[1],
  log: (line: string) => void,
): Promise<{ stopTracing: () => Promise<void>; opened: OpenedStore }> {
  const stopTracing = await startProcessTracing(process.env);
  const opened = await openStore(config, role, log).catch(async (error: unknown) => {
    await stopTracing();
    throw error;
  });
  if (!('store' in opened)) {
    await stopTracing();
    throw new DataDirBusyError(config.dataDir, opened);
  }
  return { stopTracing, opened };
}

function processDeps(opened: OpenedStore, config: Config, keyring: Keyring, launchGateSource?: Store): Deps {
  // With traces on, the store's statements are spans (the store itself otherwise).
  return systemDeps(tracedStore(opened.store), config.environment, {
    keyring,
    readReplica: opened.readReplica,
    allowPrivateWebhookUrls: !config.webhooks.blockReservedAddresses,
    exportDirectory: config.exportDir,
    railPartnerFactories: PARTNER_RAIL_FACTORIES,
    publicUrl: config.publicUrl,
    pilotCaps: config.pilotCaps,
    launchGateSource,
    conversionRateBandBps: config.conversionRateBandBps,
    metricsResourceLabels: config.metrics.resourceLabels,
    eventStream: config.eventStream?.stream,
  });
}

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  deps: Deps;
  sandboxApiKey: string | undefined;
  seeded: boolean;
  /**
   * The first step of stopping: /readyz answers 503 and every answer closes its connection, while requests
   * are still served; after `drainMs` it resolves (the caller then stops).
   */
  drain(drainMs: number): Promise<void>;
  /** Closes the listener and finishes requests in flight, then stops the workers and the rest. */
  stop(): Promise<void>;
}

export async function startServer(
  config: Config,
  log: (line: string) => void,
  options: StartServerOptions = {},
): Promise<RunningServer> {
  // A missing key is a configuration error: found before anything is opened.
  requireEncryptionKey(config);
  const { stopTracing, opened } = await openTracedStore(config, 'serve', log);
  // Stopped last (stops run in reverse): the spans of everything else's stopping are sent.
  const stops: Stops = [stopTracing];
  try {
    const launchGateSource = await openLaunchGateSource(config);
    if (launchGateSource) stops.push(() => launchGateSource.close());
    const deps = processDeps(
      opened,
      config,
      loadKeyring(config, opened.lock !== undefined),
      launchGateSource,
    );
    const { seeded, sandboxApiKey } = await prepareDatabase(deps, config, opened, log);
    const state: Draining = { draining: false };
    const { app, closeApp } = await buildServerApp(deps, config, options, stops, state);
    const url = await listenAt(app, deps, config);
    await startServerWork(app, deps, config, opened, stops, log);
    return {
      app,
      url,
      deps,
      sandboxApiKey,
      seeded,
      async drain(drainMs) {
        state.draining = true;
        if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
      },
      async stop() {
        state.draining = true;
        // Stop accepting first and finish requests in flight (and the writer batches they wait on), while
        // the workers run on; then the workers, each between items, handing back what they leased.
        await closeApp();
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
 * Migrates, seals what an earlier version kept in clear, and seeds the sandbox once; returns the sandbox's
 * key (the embedded sandbox remembers it in its data directory, so every start prints it).
 */
async function prepareDatabase(
  deps: Deps,
  config: Config,
  opened: OpenedStore,
  log: (line: string) => void,
): Promise<{ seeded: boolean; sandboxApiKey: string | undefined }> {
  const { applied } = await migrate(opened.store);
  if (applied.length > 0) log(`applied migrations: ${applied.join(', ')}`);
  await openSecretsAtRest(deps, log);
  const seed =
    config.environment === 'sandbox'
      ? await seedSandbox(deps, config.sandboxApiKey)
      : { seeded: false, apiKey: undefined };

  if (seed.seeded) log(`seeded the sandbox organization '${SANDBOX_ORGANIZATION_NAME}'`);
  const sandboxApiKey = opened.lock ? rememberSandboxKey(config.dataDir, seed.apiKey) : seed.apiKey;
  return { seeded: seed.seeded, sandboxApiKey };
}

/** Beside the API: the sandbox's partner simulators, the workers, and the control channel's socket. */
async function startServerWork(
  app: FastifyInstance,
  deps: Deps,
  config: Config,
  opened: OpenedStore,
  stops: Stops,
  log: (line: string) => void,
): Promise<void> {
  if (config.sandboxSimulators) stops.push((await startSandboxSimulators(deps, log)).stop);

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
}

function startEach(work: readonly PeriodicWork[], onError: (name: string, error: unknown) => void): Worker[] {
  return work.map(([name, intervalMs, tick]) => startPeriodic(name, intervalMs, tick, onError));
}

/**
 * The background work of a process: idempotency and retention pruning, the webhook dispatcher, the rail
 * worker, and the event stream's publisher when MKOBA_EVENT_STREAM_URL is set. `mkoba serve` runs them
 * beside the API; `mkoba worker` runs them alone. Any number of processes
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
    ...startEach(recordsWork(deps, config, batchWriter, onError), onError),
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
  workers.push(...startEach(railWork(deps, config, railLog), onError));
  if (config.eventStream) {
    workers.push(
      startEventStreamPublisher(deps, config.eventStream, {
        failed: (error, retryInMs) => onError(`event-stream (retrying in ${retryInMs} ms)`, error),
        notice: (message) => railLog('warn', `event stream: ${message}`, { worker: 'event-stream' }),
      }),
    );
  }
  workers.push(
    ...startEach(
      [
        [
          'smile-id-verifications',
          SMILE_ID_WORKER_INTERVAL_MS,
          () => runSmileIdWorkerOnce(deps, config.smileIdLeaseMs),
        ],
      ],
      onError,
    ),
  );
  // Only a simulated verification provider exists so far: production does not simulate a verification.
  // Launch gates are decided where the organization integrates; pilot and production read that record.
  if (config.environment === 'sandbox') {
    workers.push(
      ...startEach(
        [
          ['launch-gates', LAUNCH_GATE_WORKER_INTERVAL_MS, launchGateWalker(deps)],
          ['verification-worker', VERIFICATION_WORKER_INTERVAL_MS, () => runVerificationWorkerOnce(deps)],
        ],
        onError,
      ),
    );
  }
  return workers;
}

/** Pruning, approvals that expire, exports, payment batches, the safeguarding check and each day's work. */
function recordsWork(
  deps: Deps,
  config: Config,
  batchWriter: LedgerWriter,
  onError: (name: string, error: unknown) => void,
): PeriodicWork[] {
  return [
    ['idempotency-pruner', IDEMPOTENCY_PRUNE_INTERVAL_MS, () => pruneExpiredIdempotencyRecords(deps)],
    ['retention-pruner', RETENTION_PRUNE_INTERVAL_MS, () => pruneExpiredHistory(deps, config.retention.days)],
    ['approval-expiry', APPROVAL_EXPIRY_INTERVAL_MS, () => runApprovalExpiryOnce(deps)],
    [
      'export-worker',
      EXPORT_WORKER_INTERVAL_MS,
      () => runExportWorkerOnce(deps, exportFormatters(config.environment)),
    ],
    ['payment-batch-worker', PAYMENT_BATCH_WORKER_INTERVAL_MS, () => runPaymentBatchPass(deps, batchWriter)],
    ['safeguarding-check', SAFEGUARDING_WORKER_INTERVAL_MS, () => runSafeguardingWorkerOnce(deps)],
    [
      'day-worker',
      DAY_WORKER_INTERVAL_MS,
      async () => {
        const { failures } = await runDayWorkerOnce(deps);
        for (const failure of failures) {
          onError(`day-worker ${failure.work} ${failure.organizationId}`, failure.error);
        }
      },
    ],
  ];
}

/** `mkoba worker`: the background work without the API, until stopped. */
export async function startWorkerProcess(
  config: Config,
  log: (line: string) => void,
): Promise<{ deps: Deps; stop(): Promise<void> }> {
  // With the embedded database a worker holds the data directory like any one-off command: it is meant for
  // PostgreSQL, where any number of workers run beside any number of servers.
  requireEncryptionKey(config);
  const { stopTracing, opened } = await openTracedStore(config, 'cli', log);
  try {
    const deps = processDeps(opened, config, loadKeyring(config, opened.lock !== undefined));
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
        await stopTracing();
      },
    };
  } catch (error) {
    await opened.close();
    await stopTracing();
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
