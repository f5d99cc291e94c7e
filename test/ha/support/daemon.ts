/**
 * The cluster's own daemons (etcd, Patroni, HAProxy) as child processes of the test: each started by
 * its binary path with its output kept for a failure message, and stopped by its own pid.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** How long a daemon gets to exit after SIGTERM before SIGKILL. */
const STOP_TIMEOUT_MS = 10_000;
/** Kept of each daemon's output, for a failure message. */
const OUTPUT_CHARS_MAX = 20_000;
const POLL_INTERVAL_MS = 100;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls until `condition` holds, or throws after `timeoutMs` naming `what` (and `detail()`). */
export async function waitFor(
  condition: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
  detail: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${detail()}`);
    await sleep(POLL_INTERVAL_MS);
  }
}

/** The user a daemon runs as: PostgreSQL refuses to run as root, so root runs it as `postgres`. */
export interface RunAs {
  uid: number;
  gid: number;
}

export function postgresUserIfRoot(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) =>
    Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** A temporary directory, owned by `owner` when given; removed by the returned function. */
export function temporaryDir(prefix: string, owner?: RunAs): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  if (owner) chownSync(dir, owner.uid, owner.gid);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Daemon {
  name: string;
  child: ChildProcess;
  output(): string;
  hasExited(): boolean;
  stop(): Promise<void>;
}

export function startDaemon(name: string, command: string, args: string[], runAs?: RunAs): Daemon {
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LANG: 'C.UTF-8' },
    ...(runAs ?? {}),
  });
  let output = '';
  let exited = false;
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_CHARS_MAX);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exit = new Promise<void>((resolve) =>
    child.on('exit', () => {
      exited = true;
      resolve();
    }),
  );
  return {
    name,
    child,
    output: () => `--- ${name} ---\n${output}`,
    hasExited: () => exited,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exit;
      clearTimeout(timer);
    },
  };
}

/** Whether `file` exists (a data directory's postmaster.pid, a binary). */
export function exists(file: string): boolean {
  try {
    statSync(file);
    return true;
  } catch {
    return false;
  }
}
