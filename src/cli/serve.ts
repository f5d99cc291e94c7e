/**
 * `mkoba serve`: start the API and keep it up until Ctrl-C. While it starts it says what it is doing on
 * stderr (creating the embedded database takes a while the first time); once it listens it prints the
 * banner (the base URL, the docs and the sandbox key) on stdout, its result. The server's JSON log lines
 * go to stderr, and only after the banner: any written while starting are held until then.
 *
 * SIGTERM or SIGINT stops it gracefully: /readyz fails and answers close their connections for
 * MKOBA_SHUTDOWN_DRAIN_MS (still serving), then the listener closes, requests in flight and the writer's
 * batches finish, the workers stop between items and hand back leases they still hold, and the process
 * exits; if that takes longer than SHUTDOWN_GRACE_MS it exits anyway (docs/OPERATIONS.md).
 */
import { SANDBOX_ORGANIZATION_NAME } from '../app/seed.ts';
import { type Config, SHUTDOWN_GRACE_MS } from '../config.ts';
import { type RunningServer, startServer } from '../main.ts';
import { limitHeapGrowth } from '../processMemory.ts';

type Io = { out: (line: string) => void; err: (line: string) => void };

/** The shell's convention for a process stopped by Ctrl-C (128 + SIGINT). */
const EXIT_CODE_INTERRUPTED = 130;
/** A second Ctrl-C sooner than this after the first is the same one delivered twice. */
const REPEATED_SIGNAL_INTERVAL_MS_MIN = 500;

/** The banner's last line: what a reader of the output waits for. */
export const BANNER_LAST_LINE = '  Stop with Ctrl-C';

/**
 * A log destination that holds what it is given until released, then passes everything to stderr: the
 * server's log lines written while it starts (its "listening" line among them) come after the banner.
 */
class LogHeldUntilReleased {
  private held: string[] | undefined = [];

  write(chunk: string): void {
    if (this.held) this.held.push(chunk);
    else process.stderr.write(chunk);
  }

  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const chunk of held) process.stderr.write(chunk);
  }
}

export async function serve(config: Config, io: Io): Promise<number> {
  if (config.databaseUrl) limitHeapGrowth();
  // Signals are handled from the first moment: a Ctrl-C while the database opens lets start-up finish
  // and then stops cleanly, instead of killing the process half-way through creating the database.
  let started = false;
  let firstSignalAtMs: number | undefined;
  let onStopRequested = () => {};
  const stopRequested = new Promise<void>((resolve) => {
    onStopRequested = resolve;
  });
  const onSignal = (signal: NodeJS.Signals) => {
    if (firstSignalAtMs !== undefined) {
      // A script runner may forward the terminal's Ctrl-C that we also got directly: not a second request.
      if (Date.now() - firstSignalAtMs < REPEATED_SIGNAL_INTERVAL_MS_MIN) return;
      io.err(`${signal} again: exiting at once`);
      process.exit(EXIT_CODE_INTERRUPTED);
    }
    firstSignalAtMs = Date.now();
    if (!started) io.err(`${signal}: stopping once start-up has finished`);
    onStopRequested();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const log = new LogHeldUntilReleased();
  try {
    const server = await startServer(config, io.err, { logStream: log });
    started = true;
    printBanner(config, server, io);
    log.release();
    await stopRequested;
    io.err(
      config.shutdownDrainMs > 0
        ? `shutting down: readiness fails for ${config.shutdownDrainMs} ms, then the listener closes`
        : 'shutting down',
    );
    await server.drain(config.shutdownDrainMs);
    const forceExit = setTimeout(() => {
      io.err(`mkoba: shutdown took longer than ${SHUTDOWN_GRACE_MS} ms; exiting`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    forceExit.unref();
    try {
      await server.stop();
    } finally {
      clearTimeout(forceExit);
    }
    return 0;
  } finally {
    // A start that failed shows what the server logged on its way down, before the error itself.
    log.release();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function printBanner(config: Config, server: RunningServer, io: Io): void {
  io.out(`Mkoba ${config.environment} API listening on ${server.url}/v1`);
  io.out(`  API reference: ${server.url}/docs   OpenAPI: ${server.url}/v1/openapi.json`);
  io.out(
    `  Database: ${config.databaseUrl ? `PostgreSQL (DATABASE_URL${config.databaseReadUrl ? ', lists from DATABASE_READ_URL' : ''})` : `embedded PGlite in ${config.dataDir}`}`,
  );
  if (config.environment === 'sandbox') {
    io.out(
      server.sandboxApiKey
        ? `  Sandbox API key: ${server.sandboxApiKey}`
        : `  Sandbox API key: shown at first start; create another with: npx mkoba keys create --organization '${SANDBOX_ORGANIZATION_NAME}'`,
    );
    if (server.sandboxApiKey) {
      io.out(`  Try: curl -H 'Authorization: Bearer ${server.sandboxApiKey}' ${server.url}/v1/wallets`);
    }
  }
  io.out(BANNER_LAST_LINE);
}
