/**
 * HAProxy (Debian's package) in front of the Patroni nodes, two frontends: `primary`, TCP to whichever
 * node's Patroni REST API answers 200 on /primary (DATABASE_URL), and `standby`, to the nodes answering 200
 * on /replica (DATABASE_READ_URL). A node marked down has its sessions shut, so no connection lingers on a
 * demoted primary or on a promoted standby; with no standby up, the standby frontend closes every
 * connection at once, which the service takes as a replica that is down.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Daemon, freePort, startDaemon, waitFor } from './daemon.ts';
import type { PatroniNode } from './patroni.ts';

export const HAPROXY = '/usr/sbin/haproxy';
/** The health check: every CHECK_INTERVAL_MS; CHECK_FALLS failures take a node out, one pass puts it in. */
export const CHECK_INTERVAL_MS = 500;
const CHECK_FALLS = 2;
/** Pooled and LISTEN connections sit idle for long: far longer than any idle time-out of the client. */
const IDLE_TIMEOUT = '1h';
const READY_TIMEOUT_MS = 30_000;

export interface PrimaryProxy {
  /** The primary frontend's port. */
  port: number;
  /** The standby frontend's port. */
  standbyPort: number;
  daemon: Daemon;
}

function frontend(name: string, port: number, check: string, nodes: PatroniNode[]): string {
  return `listen ${name}
  bind 127.0.0.1:${port}
  option httpchk OPTIONS /${check}
  http-check expect status 200
  default-server inter ${CHECK_INTERVAL_MS}ms fall ${CHECK_FALLS} rise 1 on-marked-down shutdown-sessions
${nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} check port ${n.restPort}`).join('\n')}
`;
}

function config(port: number, standbyPort: number, nodes: PatroniNode[]): string {
  return `global
  maxconn 1000
defaults
  mode tcp
  timeout connect 2s
  timeout client ${IDLE_TIMEOUT}
  timeout server ${IDLE_TIMEOUT}
  timeout check 1s
${frontend('primary', port, 'primary', nodes)}${frontend('standby', standbyPort, 'replica', nodes)}`;
}

export async function startPrimaryProxy(dir: string, nodes: PatroniNode[]): Promise<PrimaryProxy> {
  const port = await freePort();
  const standbyPort = await freePort();
  const file = path.join(dir, 'haproxy.cfg');
  writeFileSync(file, config(port, standbyPort, nodes));
  const daemon = startDaemon('haproxy', HAPROXY, ['-db', '-f', file]);
  await waitFor(
    async () => (await inRecovery(port)) === false && (await inRecovery(standbyPort)) === true,
    READY_TIMEOUT_MS,
    'HAProxy to reach the primary and the standby',
    daemon.output,
  );
  return { port, standbyPort, daemon };
}

/** Whether the node behind the frontend on `port` is a standby; undefined when none answers there. */
export async function inRecovery(port: number): Promise<boolean | undefined> {
  const pg = await import('pg');
  const client = new pg.default.Client({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    database: 'postgres',
  });
  // HAProxy shuts the session of a node it marks down: an error between statements, not a crash.
  client.on('error', () => {});
  try {
    await client.connect();
    const [row] = (await client.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby')).rows;
    return row?.standby;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}
