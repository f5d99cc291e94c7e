/**
 * Real `node bin/mkoba.js` processes for end-to-end tests. Every process started here is tracked so that
 * `killAllMkobaProcesses` can end the ones a failing test left behind, and every wait is bounded.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPOSITORY_DIR = fileURLToPath(new URL('../../', import.meta.url));
const MKOBA_BIN = path.join(REPOSITORY_DIR, 'bin', 'mkoba.js');
/** A fresh embedded database takes a few seconds of CPU to create; far longer on a busy machine. */
export const SERVER_START_TIMEOUT_MS = 60_000;
export const COMMAND_TIMEOUT_MS = 60_000;
const EXIT_AFTER_KILL_TIMEOUT_MS = 5_000;
const POLL_INTERVAL_MS = 10;

/** Variables the parent may carry that would change what the child does. */
const CONFIG_VARIABLES = [
  'PORT',
  'HOST',
  'DATABASE_URL',
  'MKOBA_DATA_DIR',
  'MKOBA_ENV',
  'MKOBA_SANDBOX_API_KEY',
  'LOG_LEVEL',
  'PGOPTIONS',
  'MKOBA_WEBHOOK_RETRY_SCHEDULE',
  'MKOBA_WEBHOOK_TIMEOUT_MS',
  'MKOBA_WEBHOOK_DISABLE_AFTER_SECONDS',
  'MKOBA_RATE_LIMITS',
  'REDIS_URL',
  'MKOBA_API_KEY',
  'MKOBA_API_BASE',
  'MKOBA_WEBHOOK_ALLOW_PRIVATE',
  'MKOBA_ENCRYPTION_KEY',
  'MKOBA_ENCRYPTION_KEYS_PREVIOUS',
  'MKOBA_PUBLIC_URL',
  'MKOBA_SANDBOX_SIMULATORS',
  'MKOBA_SANDBOX_DATABASE_URL',
  'MKOBA_PILOT_TRANSFERS_PER_DAY_MAX',
  'MKOBA_PILOT_AMOUNT_PER_DAY_MAX',
];

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface MkobaProcess {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` on stderr; rejects if the process exits first or on time-out. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<Exit>;
  /** Sends `signal` and waits (bounded) for the process to exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

const running = new Set<MkobaProcess>();

export function mkobaEnv(overrides: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CONFIG_VARIABLES) delete env[name];
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export function startMkoba(args: string[], env: NodeJS.ProcessEnv): MkobaProcess {
  const child = spawn(process.execPath, [MKOBA_BIN, ...args], {
    cwd: REPOSITORY_DIR,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error('could not spawn mkoba');
  let stdout = '';
  let stderr = '';
  const stderrListeners = new Set<() => void>();
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    for (const listener of stderrListeners) listener();
  });
  let hasExited = false;
  const exited = new Promise<Exit>((resolve) => {
    // 'close', not 'exit': only then has everything the process wrote to its pipes been read.
    child.on('close', (code, signal) => {
      hasExited = true;
      running.delete(process_);
      for (const listener of stderrListeners) listener();
      resolve({ code, signal });
    });
  });
  const process_: MkobaProcess = {
    child,
    pid: child.pid,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForStderr(pattern, timeoutMs = SERVER_START_TIMEOUT_MS) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = stderr.match(pattern);
          if (match) return done(() => resolve(match));
          if (hasExited) {
            done(() => reject(new Error(`mkoba exited before printing ${pattern}; stderr:\n${stderr}`)));
          }
        };
        const timer = setTimeout(
          () => done(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms; stderr:\n${stderr}`))),
          timeoutMs,
        );
        const done = (settle: () => void) => {
          clearTimeout(timer);
          stderrListeners.delete(check);
          settle();
        };
        stderrListeners.add(check);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (!hasExited) child.kill(signal);
      return withTimeout(exited, EXIT_AFTER_KILL_TIMEOUT_MS * 2, `mkoba did not exit after ${signal}`);
    },
  };
  running.add(process_);
  return process_;
}

export interface Completed extends Exit {
  stdout: string;
  stderr: string;
  elapsedMs: number;
}

/** Runs a command to completion (killed if it outlives `timeoutMs`). */
export async function runMkoba(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = COMMAND_TIMEOUT_MS,
  onStart: (started: MkobaProcess) => void = () => {},
): Promise<Completed> {
  const startedAt = Date.now();
  const process_ = startMkoba(args, env);
  onStart(process_);
  const timer = setTimeout(() => process_.child.kill('SIGKILL'), timeoutMs);
  try {
    const exit = await process_.exited;
    return {
      ...exit,
      stdout: process_.stdout(),
      stderr: process_.stderr(),
      elapsedMs: Date.now() - startedAt,
    };
  } finally {
    clearTimeout(timer);
  }
}

export async function killAllMkobaProcesses(): Promise<void> {
  await killEach([...running]);
}

async function killEach(processes: MkobaProcess[]): Promise<void> {
  await Promise.all(
    processes.map((p) => {
      p.child.kill('SIGKILL');
      return withTimeout(p.exited, EXIT_AFTER_KILL_TIMEOUT_MS, 'mkoba survived SIGKILL').catch(() => {});
    }),
  );
}

/** The processes one group of tests starts, so that its clean-up ends only its own. */
export class MkobaProcesses {
  private readonly started = new Set<MkobaProcess>();

  start(args: string[], env: NodeJS.ProcessEnv): MkobaProcess {
    const started = startMkoba(args, env);
    this.started.add(started);
    return started;
  }

  run(args: string[], env: NodeJS.ProcessEnv, timeoutMs = COMMAND_TIMEOUT_MS): Promise<Completed> {
    return runMkoba(args, env, timeoutMs, (started) => this.started.add(started));
  }

  async killAll(): Promise<void> {
    await killEach([...this.started]);
    this.started.clear();
  }
}

export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} (after ${timeoutMs} ms)`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Polls until `condition` holds; rejects after `timeoutMs`. */
export async function waitUntil(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}

export function temporaryDataDir(): { dir: string; remove(): void } {
  const parent = mkdtempSync(path.join(tmpdir(), 'mkoba-e2e-'));
  // The data directory itself does not exist yet, as in a fresh clone.
  const dir = path.join(parent, 'data');
  return { dir, remove: () => rmSync(parent, { recursive: true, force: true }) };
}

export function fileExists(file: string): boolean {
  return existsSync(file);
}

/** What `mkoba serve` prints once it listens. */
export interface Banner {
  baseUrl: string;
  docsUrl: string;
  port: number;
  sandboxApiKey: string | undefined;
}

export const BANNER_READY_PATTERN = /Stop with Ctrl-C/;

export async function waitForBanner(server: MkobaProcess): Promise<Banner> {
  await server.waitForStderr(BANNER_READY_PATTERN);
  const text = server.stderr();
  const baseUrl = text.match(/listening on (http:\/\/\S+\/v1)$/m)?.[1];
  const docsUrl = text.match(/API reference: (http:\/\/\S+\/docs)\b/)?.[1];
  if (!baseUrl || !docsUrl) throw new Error(`no base or docs URL in:\n${text}`);
  return {
    baseUrl,
    docsUrl,
    port: Number(new URL(baseUrl).port),
    sandboxApiKey: text.match(/Sandbox API key: (sk_sandbox_\S+)$/m)?.[1],
  };
}

export interface HttpResult {
  status: number;
  body: any;
  /** The response's Request-Id header. */
  requestId: string | undefined;
}

/** One HTTP request with a bearer key; JSON bodies in and out. */
export async function http(
  method: string,
  url: string,
  key: string | undefined,
  body?: unknown,
): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(COMMAND_TIMEOUT_MS),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON (the docs page): keep the text.
  }
  return {
    status: response.status,
    body: parsed,
    requestId: response.headers.get('request-id') ?? undefined,
  };
}
