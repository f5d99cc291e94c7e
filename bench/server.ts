/**
 * `mkoba serve` as a separate process, as a person starts it (`node bin/mkoba.js serve`), on an
 * ephemeral port of 127.0.0.1. Every wait is bounded; stop() ends the process (SIGTERM, then SIGKILL).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPOSITORY_DIR = fileURLToPath(new URL('../', import.meta.url));
const MKOBA_BIN = path.join(REPOSITORY_DIR, 'bin', 'mkoba.js');
/** A fresh embedded database takes several seconds to create, more on a busy machine. */
const SERVER_START_TIMEOUT_MS = 90_000;
const SERVER_STOP_TIMEOUT_MS = 20_000;
const SERVER_KILL_TIMEOUT_MS = 5_000;
const READY_PATTERN = /Stop with Ctrl-C/;
/** Server configuration the benchmark's own environment must not leak into the child. */
const CONFIG_VARIABLES = [
  'PORT',
  'HOST',
  'DATABASE_URL',
  'MKOBA_DATA_DIR',
  'MKOBA_ENV',
  'MKOBA_SANDBOX_API_KEY',
  'LOG_LEVEL',
  'PGOPTIONS',
  'REDIS_URL',
  'MKOBA_RATE_LIMITS',
  'MKOBA_ENCRYPTION_KEY',
  'MKOBA_ENCRYPTION_KEYS_PREVIOUS',
  'MKOBA_WEBHOOK_ALLOW_PRIVATE',
  'MKOBA_PUBLIC_URL',
  'MKOBA_SANDBOX_SIMULATORS',
];

export interface BenchServer {
  pid: number;
  /** e.g. http://127.0.0.1:41234 (no /v1). */
  origin: string;
  apiKey: string;
  stop(): Promise<void>;
}

export async function startServer(options: {
  dataDir: string;
  databaseUrl: string | undefined;
}): Promise<BenchServer> {
  const apiKey = `sk_sandbox_bench${randomBytes(18).toString('base64url')}`;
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CONFIG_VARIABLES) delete env[name];
  Object.assign(env, {
    PORT: '0',
    HOST: '127.0.0.1',
    MKOBA_DATA_DIR: options.dataDir,
    MKOBA_SANDBOX_API_KEY: apiKey,
    // The benchmark's webhook receiver listens on 127.0.0.1: local development's opt-in.
    MKOBA_WEBHOOK_ALLOW_PRIVATE: '1',
    MKOBA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    // The benchmark measures the API at full load, which the default per-key limits would refuse.
    MKOBA_RATE_LIMITS: 'off',
    // Transfers between wallets and sandbox events: the partner simulators would only add start-up work.
    MKOBA_SANDBOX_SIMULATORS: '0',
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
  });
  // e.g. BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' to profile the server under load.
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, MKOBA_BIN, 'serve'], {
    cwd: REPOSITORY_DIR,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error('could not start mkoba serve');
  const pid = child.pid;
  // Progress and log lines come on stderr, the banner on stdout: both are kept for an error message.
  let stderr = '';
  let stdout = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`mkoba serve not ready within ${SERVER_START_TIMEOUT_MS} ms:\n${stderr}`)),
        SERVER_START_TIMEOUT_MS,
      );
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        if (READY_PATTERN.test(stdout)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`mkoba serve exited (${code ?? signal}) before it was ready:\n${stderr}`));
      });
    });
  } catch (error) {
    await stopChild(child, exited);
    throw error;
  }
  const base = /listening on (http:\/\/127\.0\.0\.1:\d+)\/v1$/m.exec(stdout)?.[1];
  if (!base) {
    await stopChild(child, exited);
    throw new Error(`no 127.0.0.1 URL in the banner:\n${stdout}`);
  }
  return { pid, origin: base, apiKey, stop: () => stopChild(child, exited) };
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const within = (ms: number) =>
    Promise.race([
      exited.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref()),
    ]);
  child.kill('SIGTERM');
  if (await within(SERVER_STOP_TIMEOUT_MS)) return;
  child.kill('SIGKILL');
  await within(SERVER_KILL_TIMEOUT_MS);
}
