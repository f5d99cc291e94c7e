/**
 * `mkoba worker`: the background work without the API, until SIGINT or SIGTERM stops it: each worker
 * between items, handing back leases it still holds, within SHUTDOWN_GRACE_MS.
 */
import { type Config, SHUTDOWN_GRACE_MS } from '../config.ts';
import { limitHeapGrowth } from '../processMemory.ts';

/** The period of the timer that keeps a worker process running until a signal (it does nothing). */
const KEEP_RUNNING_INTERVAL_MS = 60_000;

type Io = { out: (line: string) => void; err: (line: string) => void };

export async function workerCommand(config: Config, io: Io): Promise<number> {
  if (config.databaseUrl) limitHeapGrowth();
  const { startWorkerProcess } = await import('../main.ts');
  const worker = await startWorkerProcess(config, io.err);
  io.err(
    `mkoba worker running (${config.databaseUrl ? 'PostgreSQL' : `embedded database in ${config.dataDir}`}); stop with Ctrl-C`,
  );
  // The workers' timers do not hold the process open, and a database failover can close every connection
  // at once: with nothing else left, the process would exit quietly in mid-failover. This holds it to a signal.
  const keepRunning = setInterval(() => {}, KEEP_RUNNING_INTERVAL_MS);
  await new Promise<void>((resolve) => {
    const stop = () => {
      clearInterval(keepRunning);
      io.err('stopping: finishing deliveries in flight');
      const forceExit = setTimeout(() => {
        io.err(`mkoba: stopping took longer than ${SHUTDOWN_GRACE_MS} ms; exiting`);
        process.exit(1);
      }, SHUTDOWN_GRACE_MS);
      forceExit.unref();
      worker
        .stop()
        .finally(() => clearTimeout(forceExit))
        .then(resolve, resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
}
