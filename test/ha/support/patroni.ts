/**
 * A Patroni cluster (Debian's package) of two PostgreSQL 15 nodes on free ports, each with its own data
 * directory under `dir`: a primary and a synchronous standby (`synchronous_mode: true`), so a commit is
 * acknowledged only once the standby has it, and only that standby may be promoted. A crashed primary
 * fails over at once (`primary_start_timeout: 0`) instead of being restarted in place.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Daemon, exists, freePort, postgresUserIfRoot, startDaemon, waitFor } from './daemon.ts';

export const PATRONI = '/usr/bin/patroni';
export const PG_BIN_DIR = '/usr/lib/postgresql/15/bin';
/** The DCS timings: a leader key lives TTL_SECONDS unless renewed; each node loops every LOOP_WAIT_SECONDS. */
const TTL_SECONDS = 10;
const LOOP_WAIT_SECONDS = 1;
const RETRY_TIMEOUT_SECONDS = 3;
/** initdb and a base backup on a busy two-core machine. */
const BOOTSTRAP_TIMEOUT_MS = 120_000;
/** Every node's loop to see a change of the DCS configuration: a few LOOP_WAIT_SECONDS. */
const MAINTENANCE_WAIT_MS = 15_000;

export interface PatroniNode {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
  daemon: Daemon;
}

export interface PatroniCluster {
  nodes: PatroniNode[];
  /** The node whose REST API answers 200 on /primary, if one does now. */
  primary(): Promise<PatroniNode | undefined>;
  /** The node whose REST API answers 200 on /sync (the synchronous standby), if one does now. */
  syncStandby(): Promise<PatroniNode | undefined>;
  /** SIGKILL to the postmaster of `node` (its pid from postmaster.pid); Patroni itself stays up. */
  killPostmaster(node: PatroniNode): number;
  /**
   * The node's machine lost: SIGKILL to its Patroni, then to a postmaster Patroni may have started again
   * (as a standby of the new primary), so the node stays down.
   */
  loseNode(node: PatroniNode): void;
  /**
   * Patroni's maintenance mode on or off, once every node reports it. In it Patroni leaves PostgreSQL alone:
   * outside it, a standby's replay paused with pg_wal_replay_pause() is resumed at Patroni's next loop.
   */
  maintenance(on: boolean): Promise<void>;
  /** Patroni started again on a lost node, as its machine coming back: resolves once it is the sync standby. */
  rejoin(node: PatroniNode): Promise<void>;
  output(): string;
  stop(): Promise<void>;
}

function nodeConfig(node: Omit<PatroniNode, 'daemon'>, etcd: string, dir: string): object {
  return {
    scope: 'mkoba-ha',
    name: node.name,
    log: { level: 'INFO' },
    restapi: { listen: `127.0.0.1:${node.restPort}`, connect_address: `127.0.0.1:${node.restPort}` },
    etcd3: { hosts: [etcd] },
    bootstrap: {
      dcs: {
        ttl: TTL_SECONDS,
        loop_wait: LOOP_WAIT_SECONDS,
        retry_timeout: RETRY_TIMEOUT_SECONDS,
        synchronous_mode: true,
        primary_start_timeout: 0,
        maximum_lag_on_failover: 0,
        postgresql: {
          use_pg_rewind: true,
          parameters: { wal_log_hints: 'on', max_connections: 100, shared_buffers: '64MB' },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { locale: 'C.UTF-8' }],
    },
    postgresql: {
      listen: `127.0.0.1:${node.pgPort}`,
      connect_address: `127.0.0.1:${node.pgPort}`,
      data_dir: node.dataDir,
      bin_dir: PG_BIN_DIR,
      pgpass: path.join(dir, `${node.name}.pgpass`),
      authentication: {
        superuser: { username: 'postgres' },
        replication: { username: 'replicator' },
        rewind: { username: 'postgres' },
      },
      pg_hba: [
        'local all all trust',
        'host all all 127.0.0.1/32 trust',
        'host replication all 127.0.0.1/32 trust',
      ],
      parameters: { unix_socket_directories: dir },
    },
  };
}

async function restStatus(node: PatroniNode, check: string): Promise<number | undefined> {
  const response = await fetch(`http://127.0.0.1:${node.restPort}/${check}`, {
    signal: AbortSignal.timeout(1_000),
  }).catch(() => undefined);
  return response?.status;
}

/** The node's own view (Patroni's GET /patroni); undefined when its REST API does not answer. */
async function nodeStatus(node: PatroniNode): Promise<{ pause?: boolean } | undefined> {
  const response = await fetch(`http://127.0.0.1:${node.restPort}/patroni`, {
    signal: AbortSignal.timeout(1_000),
  }).catch(() => undefined);
  return response?.ok ? ((await response.json()) as { pause?: boolean }) : undefined;
}

/** The node's postmaster, while one runs. */
function postmasterPid(node: PatroniNode): number | undefined {
  const file = path.join(node.dataDir, 'postmaster.pid');
  if (!exists(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

async function startNode(name: string, etcd: string, dir: string): Promise<PatroniNode> {
  const spec = {
    name,
    pgPort: await freePort(),
    restPort: await freePort(),
    dataDir: path.join(dir, name),
  };
  // JSON is YAML.
  writeFileSync(configFile(name, dir), JSON.stringify(nodeConfig(spec, etcd, dir), null, 2));
  return { ...spec, daemon: startNodeDaemon(name, dir) };
}

const configFile = (name: string, dir: string) => path.join(dir, `${name}.yml`);

function startNodeDaemon(name: string, dir: string): Daemon {
  return startDaemon(`patroni ${name}`, PATRONI, [configFile(name, dir)], postgresUserIfRoot());
}

/** Starts the first node and waits for it to lead, then the second and waits for it to be its sync standby. */
export async function startPatroniCluster(etcd: string, dir: string): Promise<PatroniCluster> {
  const nodes: PatroniNode[] = [];
  const output = () => nodes.map((n) => n.daemon.output()).join('\n');
  const cluster: PatroniCluster = {
    nodes,
    async primary() {
      for (const node of nodes) if ((await restStatus(node, 'primary')) === 200) return node;
      return undefined;
    },
    async syncStandby() {
      for (const node of nodes) if ((await restStatus(node, 'sync')) === 200) return node;
      return undefined;
    },
    killPostmaster(node) {
      const pid = postmasterPid(node) as number;
      process.kill(pid, 'SIGKILL');
      return pid;
    },
    loseNode(node) {
      node.daemon.child.kill('SIGKILL');
      const pid = postmasterPid(node);
      if (pid !== undefined) process.kill(pid, 'SIGKILL');
    },
    async maintenance(on) {
      const leader = nodes[0] as PatroniNode;
      const response = await fetch(`http://127.0.0.1:${leader.restPort}/config`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ pause: on }),
      });
      if (!response.ok) throw new Error(`Patroni refused maintenance ${on}: ${response.status}`);
      await waitFor(
        async () => {
          const states = await Promise.all(nodes.map((n) => nodeStatus(n)));
          return states.every((state) => (state?.pause === true) === on);
        },
        MAINTENANCE_WAIT_MS,
        `maintenance mode ${on ? 'on' : 'off'} on every node`,
        output,
      );
    },
    async rejoin(node) {
      node.daemon = startNodeDaemon(node.name, dir);
      await waitFor(
        // The synchronous standby: streaming, past a rewind and the restarts that may follow it.
        async () => (await restStatus(node, 'sync')) === 200,
        BOOTSTRAP_TIMEOUT_MS,
        `${node.name} to rejoin as the synchronous standby`,
        output,
      );
    },
    output,
    async stop() {
      await Promise.all(nodes.map((n) => n.daemon.stop()));
    },
  };
  try {
    nodes.push(await startNode('node0', etcd, dir));
    await waitFor(
      async () => (await cluster.primary()) !== undefined,
      BOOTSTRAP_TIMEOUT_MS,
      'node0 to lead',
      output,
    );
    nodes.push(await startNode('node1', etcd, dir));
    await waitFor(
      async () => (await cluster.syncStandby())?.name === 'node1',
      BOOTSTRAP_TIMEOUT_MS,
      'node1 to be the synchronous standby',
      output,
    );
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}
