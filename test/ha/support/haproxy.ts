/**
 * HAProxy (Debian's package) in front of the Patroni nodes: TCP to whichever node's Patroni REST API
 * answers 200 on /primary. A node marked down has its sessions shut, so no connection lingers on a
 * demoted primary.
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
  port: number;
  daemon: Daemon;
}

function config(port: number, nodes: PatroniNode[]): string {
  return `global
  maxconn 1000
defaults
  mode tcp
  timeout connect 2s
  timeout client ${IDLE_TIMEOUT}
  timeout server ${IDLE_TIMEOUT}
  timeout check 1s
listen primary
  bind 127.0.0.1:${port}
  option httpchk OPTIONS /primary
  http-check expect status 200
  default-server inter ${CHECK_INTERVAL_MS}ms fall ${CHECK_FALLS} rise 1 on-marked-down shutdown-sessions
${nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} check port ${n.restPort}`).join('\n')}
`;
}

export async function startPrimaryProxy(dir: string, nodes: PatroniNode[]): Promise<PrimaryProxy> {
  const port = await freePort();
  const file = path.join(dir, 'haproxy.cfg');
  writeFileSync(file, config(port, nodes));
  const daemon = startDaemon('haproxy', HAPROXY, ['-db', '-f', file]);
  const pg = await import('pg');
  await waitFor(
    async () => {
      const client = new pg.default.Client({
        host: '127.0.0.1',
        port,
        user: 'postgres',
        database: 'postgres',
      });
      try {
        await client.connect();
        const [row] = (await client.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby'))
          .rows;
        return row?.standby === false;
      } catch {
        return false;
      } finally {
        await client.end().catch(() => {});
      }
    },
    READY_TIMEOUT_MS,
    'HAProxy to reach the primary',
    daemon.output,
  );
  return { port, daemon };
}
