/**
 * The HTTP side of `mkoba serve`: the app built with the process's settings (its JSON log, rate limits,
 * writer lanes, metrics token) and bound to its port, where a port taken or an address not ours is a
 * configuration problem.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from './app/deps.ts';
import { ConfigError } from './config/variables.ts';
import type { Config } from './config.ts';
import { watchSanctionsList } from './modules/compliance/index.ts';

/** One JSON line per request (see src/http/app.ts) is written at this level. */
export const LOG_LEVEL_DEFAULT = 'info';

export interface StartServerOptions {
  /** Where the server's JSON log lines go (default stderr). */
  logStream?: { write(line: string): void };
}

/** Whether a server is stopping: set once, read by /readyz and by every answer (src/http/routes/system.ts). */
export interface Draining {
  draining: boolean;
}

/** What a server stops, last started first, when it stops or fails to start. */
export type Stops = (() => Promise<void>)[];

/** The HTTP app, with the sanctions list's index built before it listens, and its (idempotent) close. */
export async function buildServerApp(
  deps: Deps,
  config: Config,
  options: StartServerOptions,
  stops: Stops,
  state: Draining,
): Promise<{ app: FastifyInstance; closeApp: () => Promise<void> }> {
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
    draining: () => state.draining,
  });
  // Stopping closes the listener first (RunningServer.stop), then the rest; closing twice is one close.
  const closeApp = closeOnce(app);
  stops.push(closeApp);
  // Resolves once the active sanctions list's index is built: no request waits for a first build.
  stops.push(
    await watchSanctionsList(deps, (error) => app.log.error({ err: error }, 'sanctions list watch failed')),
  );
  return { app, closeApp };
}

/** The app's close, idempotent: the stop sequence calls it first and again in its place among the stops. */
function closeOnce(app: FastifyInstance): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= app.close();
    return closing;
  };
}

/** Listens; returns the base URL, which is also the sandbox's public URL unless one is configured. */
export async function listenAt(app: FastifyInstance, deps: Deps, config: Config): Promise<string> {
  await listen(app, config);
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  if (config.environment === 'sandbox' && deps.publicUrl === undefined)
    deps.publicUrl = `http://${host}:${port}`;
  return `http://${host}:${port}`;
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
