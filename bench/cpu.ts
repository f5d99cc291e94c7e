/**
 * CPU time spent by the application and by PostgreSQL during a run, read from /proc (Linux only; elsewhere
 * the figures are left out). On a shared, noisy machine CPU per transfer moves much less than transfers
 * per second, so it is the better answer to "where does the time go".
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS_PER_S_DEFAULT = 100;
const clockTicksPerS = (() => {
  const result = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const value = Number(result.stdout?.trim());
  return Number.isInteger(value) && value > 0 ? value : CLOCK_TICKS_PER_S_DEFAULT;
})();

interface ProcStat {
  comm: string;
  ppid: number;
  /** utime + stime of the process itself, ms. */
  ownMs: number;
  /** cutime + cstime: children it has waited for (exited backends, for the postmaster), ms. */
  childrenMs: number;
}

function readStat(pid: string | number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm is in parentheses and may hold spaces; the fields after it are space-separated.
    const close = text.lastIndexOf(')');
    const comm = text.slice(text.indexOf('(') + 1, close);
    const fields = text
      .slice(close + 2)
      .split(' ')
      .map((f) => Number(f));
    // After comm: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
    const tickMs = 1000 / clockTicksPerS;
    return {
      comm,
      ppid: fields[1] ?? 0,
      ownMs: ((fields[11] ?? 0) + (fields[12] ?? 0)) * tickMs,
      childrenMs: ((fields[13] ?? 0) + (fields[14] ?? 0)) * tickMs,
    };
  } catch {
    return undefined;
  }
}

/** CPU ms used so far by one process (undefined where /proc is not there). */
export function processCpuMs(pid: number): number | undefined {
  return readStat(pid)?.ownMs;
}

/**
 * CPU ms used so far by the local PostgreSQL server: every live `postgres` process plus what the postmaster
 * has collected from backends that have exited (pgbench's connections end with the run). Includes the
 * server's background work and any other client's, so it is only meaningful on a server nobody else loads.
 */
export function postgresCpuMs(): number | undefined {
  if (!existsSync('/proc/self/stat')) return undefined;
  let total = 0;
  let found = false;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (stat?.comm !== 'postgres') continue;
    found = true;
    total += stat.ownMs;
    // The postmaster is the postgres process whose parent is not postgres.
    const parent = readStat(stat.ppid);
    if (parent?.comm !== 'postgres') total += stat.childrenMs;
  }
  return found ? total : undefined;
}

/** CPU ms of this process so far. */
export function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** Runs `fn` and adds the CPU ms per completed transfer of the app (and of PostgreSQL, when asked). */
export async function withCpu<T extends { transfers: number }>(
  app: () => number | undefined,
  measurePostgres: boolean,
  fn: () => Promise<T>,
): Promise<T & { appCpuMsPerTransfer?: number | undefined; dbCpuMsPerTransfer?: number | undefined }> {
  const db = () => (measurePostgres ? postgresCpuMs() : undefined);
  const app0 = app();
  const db0 = db();
  const result = await fn();
  const app1 = app();
  const db1 = db();
  const per = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined || result.transfers === 0 ? undefined : (b - a) / result.transfers;
  return { ...result, appCpuMsPerTransfer: per(app0, app1), dbCpuMsPerTransfer: per(db0, db1) };
}
