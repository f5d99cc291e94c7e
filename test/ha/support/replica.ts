/**
 * A PostgreSQL primary and a streaming replica of it, started by the test itself from this machine's
 * PostgreSQL 15 binaries: each in a temporary data directory of its own, on free ports, listening on
 * 127.0.0.1 with trust authentication, the replica made by `pg_basebackup -R` and serving reads
 * (`hot_standby`). Run as the `postgres` user when the test runs as root (initdb refuses root). Stopped
 * with `-m immediate` and their directories removed.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

export const POSTGRES_BIN_DIR = process.env.POSTGRES_BIN_DIR ?? '/usr/lib/postgresql/15/bin';
/** The OS user clusters run as when the test runs as root. */
const CLUSTER_USER = 'postgres';
/** A cluster's start or stop, waited for by pg_ctl -w (generous on a busy machine). */
const PG_CTL_WAIT_SECONDS = 60;

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const asRoot = process.getuid?.() === 0;

/** Runs one of PostgreSQL's programs (as `postgres` under root); throws with its output when it fails. */
function pgProgram(program: string, args: string[]): string {
  const binary = path.join(POSTGRES_BIN_DIR, program);
  const [command, commandArgs] = asRoot
    ? ['runuser', ['-u', CLUSTER_USER, '--', binary, ...args]]
    : [binary, args];
  const run = spawnSync(command, commandArgs, { encoding: 'utf8', cwd: tmpdir() });
  if (run.status !== 0) {
    throw new Error(`${program} ${args.join(' ')} failed (${run.status}): ${run.stderr}${run.stdout}`);
  }
  return run.stdout;
}

/** A directory the cluster's user owns. */
function clusterDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  if (asRoot) {
    const uid = Number(spawnSync('id', ['-u', CLUSTER_USER], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', CLUSTER_USER], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, uid, gid);
  }
  return dir;
}

export interface Cluster {
  port: number;
  /** A connection URL to its `postgres` database. */
  url: string;
  dataDir: string;
  start(): void;
  /** Stops it at once (`-m immediate`), as a crash would; idempotent. */
  stop(): void;
  /** One statement on a connection of its own. */
  query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>;
}

function cluster(root: string, dataDir: string, port: number): Cluster {
  let running = false;
  const log = path.join(root, `postgres-${port}.log`);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    port,
    url,
    dataDir,
    start() {
      pgProgram('pg_ctl', ['-D', dataDir, '-l', log, '-w', '-t', String(PG_CTL_WAIT_SECONDS), 'start']);
      running = true;
    },
    stop() {
      if (!running) return;
      running = false;
      pgProgram('pg_ctl', [
        '-D',
        dataDir,
        '-m',
        'immediate',
        '-w',
        '-t',
        String(PG_CTL_WAIT_SECONDS),
        'stop',
      ]);
    },
    async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query<R>(sql, params)).rows;
      } finally {
        await client.end();
      }
    },
  };
}

export interface PrimaryWithReplica {
  primary: Cluster;
  replica: Cluster;
  /** Stops both and removes their directories. */
  remove(): void;
}

/** A fresh primary, then a streaming replica of it, both running. */
export async function startPrimaryWithReplica(): Promise<PrimaryWithReplica> {
  const root = clusterDir('mkoba-replication-');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const primaryDir = path.join(root, 'primary');
  const replicaDir = path.join(root, 'replica');
  pgProgram('initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  // initdb's pg_hba.conf trusts replication connections from 127.0.0.1 already.
  appendFileSync(
    path.join(primaryDir, 'postgresql.conf'),
    [
      "listen_addresses = '127.0.0.1'",
      `port = ${primaryPort}`,
      `unix_socket_directories = '${root}'`,
      'wal_level = replica',
      'max_wal_senders = 4',
      'hot_standby = on',
      // A test cluster: nothing of it must survive a crash of the machine.
      'fsync = off',
      'max_connections = 60',
      'shared_buffers = 32MB',
      '',
    ].join('\n'),
  );
  const primary = cluster(root, primaryDir, primaryPort);
  const replica = cluster(root, replicaDir, replicaPort);
  const remove = () => {
    for (const each of [replica, primary]) {
      try {
        each.stop();
      } catch {
        // Already gone: its directory goes below all the same.
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  try {
    primary.start();
    pgProgram('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      replicaDir,
      '-R',
      '-X',
      'stream',
      '--no-sync',
    ]);
    appendFileSync(path.join(replicaDir, 'postgresql.conf'), `port = ${replicaPort}\n`);
    replica.start();
  } catch (error) {
    remove();
    throw error;
  }
  return { primary, replica, remove };
}
