/** One etcd member (Debian's etcd-server) on free ports with its own data directory: Patroni's DCS. */
import path from 'node:path';
import { type Daemon, freePort, startDaemon, waitFor } from './daemon.ts';

export const ETCD = '/usr/bin/etcd';
const READY_TIMEOUT_MS = 30_000;

export interface Etcd {
  /** host:port of its client API. */
  endpoint: string;
  daemon: Daemon;
}

export async function startEtcd(dir: string): Promise<Etcd> {
  const [client, peer] = [await freePort(), await freePort()];
  const clientUrl = `http://127.0.0.1:${client}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const daemon = startDaemon('etcd', ETCD, [
    '--name=mkoba-ha',
    `--data-dir=${path.join(dir, 'etcd')}`,
    `--listen-client-urls=${clientUrl}`,
    `--advertise-client-urls=${clientUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=mkoba-ha=${peerUrl}`,
    '--initial-cluster-state=new',
    '--log-level=warn',
  ]);
  await waitFor(
    async () => {
      if (daemon.hasExited()) throw new Error(`etcd exited\n${daemon.output()}`);
      return (await fetch(`${clientUrl}/health`).catch(() => undefined))?.ok === true;
    },
    READY_TIMEOUT_MS,
    'etcd to be healthy',
    daemon.output,
  );
  return { endpoint: `127.0.0.1:${client}`, daemon };
}
