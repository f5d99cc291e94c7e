/**
 * Real `node bin/mkoba.js` processes for end-to-end tests. Every process started here is tracked so that
 * `killAllMkobaProcesses` can end the ones a failing test left behind.
 *
 * Waiting keys off the process itself: a wait ends when the process prints what it was waited for (the
 * banner, a line on stderr) and fails at once, with everything it printed, when it exits first. The time
 * bounds below are a last resort against a process that hangs, generous enough for a busy machine.
 *
 * Creating an embedded database is seconds of CPU (PGlite's initdb), and several at once on a small
 * machine each take many times longer. So a process that will create one (its MKOBA_DATA_DIR holds no
 * database and no process has locked it) first takes one of FRESH_DATABASE_SLOTS, shared by every test
 * file and every vitest run on the machine, and gives it back once the process says the database exists
 * (or exits, or shows it is not creating one). A slot is a listening socket (an abstract Unix socket on
 * Linux, so the kernel frees it when its holder dies, leaving nothing stale). This keeps each test's own
 * fresh first start, which is what these tests are about, rather than copying a prepared template.
 */
import { type ChildProcess, type SpawnOptionsWithStdioTuple, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import net from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BANNER_LAST_LINE } from '../../src/cli/serve.ts';
import { CREATED_DATABASE_LEAD, CREATING_DATABASE_LEAD } from '../../src/processStore.ts';
import { pgliteDatabaseExists } from '../../src/store/pgliteDataDir.ts';

const REPOSITORY_DIR = fileURLToPath(new URL('../../', import.meta.url));
const MKOBA_BIN = path.join(REPOSITORY_DIR, 'bin', 'mkoba.js');
/** Last resort: how long a process may take to say it is ready before the wait gives up on it. */
export const READINESS_LAST_RESORT_MS = 300_000;
/** Last resort: a command still running after this is killed. */
export const COMMAND_TIMEOUT_MS = 300_000;
/** Last resort for a whole e2e test, queueing for a fresh-database slot included. */
export const E2E_TEST_TIMEOUT_MS = 3 * READINESS_LAST_RESORT_MS;
const EXIT_AFTER_KILL_TIMEOUT_MS = 5_000;
const POLL_INTERVAL_MS = 10;
/** Embedded databases created at once on this machine: half its CPUs, the rest left to everything else. */
export const FRESH_DATABASE_SLOTS = Math.max(1, Math.floor(availableParallelism() / 2));
const FRESH_DATABASE_SLOT_POLL_INTERVAL_MS = 200;
/** The commands that open the database (the others talk HTTP, or print). */
const DATABASE_COMMANDS = new Set([
  'serve',
  'migrate',
  'keys',
  'members',
  'worker',
  'ledger',
  'evidence',
  'orgs',
  'export',
  'launch-gates',
  'console-link',
  'sanctions',
  'encryption',
]);
const DATA_DIR_DEFAULT = '.mkoba';
const LOCK_FILE_NAME = 'mkoba.lock';

/** Variables the parent may carry that would change what the child does. */
const CONFIG_VARIABLES = [
  'PORT',
  'HOST',
  'DATABASE_URL',
  'DATABASE_READ_URL',
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
  'MKOBA_EVENT_STREAM_URL',
  'MKOBA_EVENT_STREAM_NAME',
  'MKOBA_EVENT_STREAM_SUBJECT_PREFIX',
  'MKOBA_SHUTDOWN_DRAIN_MS',
  'MKOBA_SMILE_ID_LEASE_MS',
  'MKOBA_COMPILE',
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
  /** Resolves with the first match of `pattern` on stderr; rejects at once if the process exits first. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** The same on stdout. */
  waitForStdout(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<Exit>;
  hasExited(): boolean;
  /** Sends `signal` and waits (bounded) for the process to exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

export interface StartOptions {
  /** Both streams into stdout, in the order the process wrote them (stderr() stays empty). */
  stderrIntoStdout?: boolean;
  /**
   * The test expects the process to stop before it opens a database (a configuration error), so it takes
   * no fresh-database slot: a dozen such processes need not queue behind each other's start-up.
   */
  stopsBeforeOpeningDatabase?: boolean;
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

/**
 * Starts `mkoba ARGS`; a process that will create an embedded database waits for a slot first (see the
 * top of this file).
 */
export async function startMkoba(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: StartOptions = {},
): Promise<MkobaProcess> {
  const releaseSlot =
    !options.stopsBeforeOpeningDatabase && createsDatabase(args, env)
      ? await acquireFreshDatabaseSlot()
      : undefined;
  const spawnOptions: SpawnOptionsWithStdioTuple<'ignore', 'pipe', 'pipe'> = {
    cwd: REPOSITORY_DIR,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  };
  // Two pipes are read in whatever order their data arrives; one pipe keeps the order it was written in.
  const child = options.stderrIntoStdout
    ? spawn('/bin/sh', ['-c', 'exec "$@" 2>&1', 'sh', process.execPath, MKOBA_BIN, ...args], spawnOptions)
    : spawn(process.execPath, [MKOBA_BIN, ...args], spawnOptions);
  if (child.pid === undefined) {
    releaseSlot?.();
    throw new Error('could not spawn mkoba');
  }
  const output = { stdout: '', stderr: '' };
  const listeners = new Set<() => void>();
  const onOutput = () => {
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', (chunk: Buffer) => {
    output.stdout += chunk.toString('utf8');
    onOutput();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output.stderr += chunk.toString('utf8');
    onOutput();
  });
  let hasExited = false;
  const exited = new Promise<Exit>((resolve) => {
    // 'close', not 'exit': only then has everything the process wrote to its pipes been read.
    child.on('close', (code, signal) => {
      hasExited = true;
      running.delete(process_);
      onOutput();
      resolve({ code, signal });
    });
  });
  if (releaseSlot) {
    // The slot is given back once the database exists, the process exits, or its first line shows it is
    // doing something else (a configuration error, a wait for the lock).
    const check = () => {
      const firstLine = output.stderr.split('\n')[0] ?? '';
      const settled =
        hasExited ||
        output.stderr.includes(`\n${CREATED_DATABASE_LEAD} `) ||
        (output.stderr.includes('\n') && !firstLine.startsWith(`${CREATING_DATABASE_LEAD} `));
      if (settled) {
        listeners.delete(check);
        releaseSlot();
      }
    };
    listeners.add(check);
  }
  const waitFor = (stream: 'stdout' | 'stderr', pattern: RegExp, timeoutMs: number) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const printed = () => `stdout:\n${output.stdout}\nstderr:\n${output.stderr}`;
      const check = () => {
        const match = output[stream].match(pattern);
        if (match) return done(() => resolve(match));
        if (hasExited) {
          done(() => reject(new Error(`mkoba exited before printing ${pattern} on ${stream}; ${printed()}`)));
        }
      };
      const timer = setTimeout(
        () =>
          done(() => reject(new Error(`no ${pattern} on ${stream} within ${timeoutMs} ms; ${printed()}`))),
        timeoutMs,
      );
      const done = (settle: () => void) => {
        clearTimeout(timer);
        listeners.delete(check);
        settle();
      };
      listeners.add(check);
      check();
    });
  const process_: MkobaProcess = {
    child,
    pid: child.pid,
    stdout: () => output.stdout,
    stderr: () => output.stderr,
    exited,
    hasExited: () => hasExited,
    waitForStderr: (pattern, timeoutMs = READINESS_LAST_RESORT_MS) => waitFor('stderr', pattern, timeoutMs),
    waitForStdout: (pattern, timeoutMs = READINESS_LAST_RESORT_MS) => waitFor('stdout', pattern, timeoutMs),
    async stop(signal = 'SIGTERM') {
      if (!hasExited) child.kill(signal);
      return withTimeout(exited, EXIT_AFTER_KILL_TIMEOUT_MS * 2, `mkoba did not exit after ${signal}`);
    },
  };
  running.add(process_);
  return process_;
}

function dataDirOf(env: NodeJS.ProcessEnv): string {
  return path.resolve(REPOSITORY_DIR, env.MKOBA_DATA_DIR || DATA_DIR_DEFAULT);
}

/** Whether `mkoba ARGS` will create an embedded database: it opens one, and none exists nor is being made. */
function createsDatabase(args: string[], env: NodeJS.ProcessEnv): boolean {
  const command = args[0];
  if (command === undefined || !DATABASE_COMMANDS.has(command) || env.DATABASE_URL) return false;
  const dataDir = dataDirOf(env);
  return !pgliteDatabaseExists(dataDir) && !lockedByLiveProcess(dataDir);
}

/** A live process holds the data directory's lock (a killed one's lock is taken over by the next). */
function lockedByLiveProcess(dataDir: string): boolean {
  let pid: unknown;
  try {
    pid = (JSON.parse(readFileSync(path.join(dataDir, LOCK_FILE_NAME), 'utf8')) as { pid?: unknown }).pid;
  } catch {
    return false;
  }
  if (typeof pid !== 'number') return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function slotAddress(slot: number): string {
  const name = `mkoba-e2e-fresh-database-${slot}`;
  return process.platform === 'linux' ? `\0${name}` : path.join(tmpdir(), `${name}.sock`);
}

/** Holds one of FRESH_DATABASE_SLOTS until the returned function is called; waits (bounded) for one. */
async function acquireFreshDatabaseSlot(): Promise<() => void> {
  const deadline = Date.now() + COMMAND_TIMEOUT_MS;
  for (;;) {
    for (let slot = 0; slot < FRESH_DATABASE_SLOTS; slot++) {
      const held = await listenOn(slotAddress(slot));
      if (held) {
        // Not kept alive by the slot: a test file that is done may exit holding it; the kernel frees it.
        held.unref();
        let released = false;
        return () => {
          if (!released) held.close();
          released = true;
        };
      }
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `no fresh-database slot of ${FRESH_DATABASE_SLOTS} came free in ${COMMAND_TIMEOUT_MS} ms`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, FRESH_DATABASE_SLOT_POLL_INTERVAL_MS));
  }
}

/** A server listening on `address`, or undefined when another process holds it. */
function listenOn(address: string): Promise<net.Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EADDRINUSE') return reject(error);
      if (address.startsWith('\0')) return resolve(undefined);
      // A socket file: held if someone answers on it, else left behind by a process that died.
      const probe = net.connect(address);
      probe.once('connect', () => {
        probe.destroy();
        resolve(undefined);
      });
      probe.once('error', () => {
        try {
          unlinkSync(address);
        } catch {
          // Another waiter removed it first.
        }
        resolve(undefined);
      });
    });
    server.listen(address, () => resolve(server));
  });
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
  options: StartOptions = {},
): Promise<Completed> {
  const process_ = await startMkoba(args, env, options);
  const startedAt = Date.now();
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

  async start(args: string[], env: NodeJS.ProcessEnv, options: StartOptions = {}): Promise<MkobaProcess> {
    const started = await startMkoba(args, env, options);
    this.started.add(started);
    return started;
  }

  run(args: string[], env: NodeJS.ProcessEnv, options: StartOptions = {}): Promise<Completed> {
    return runMkoba(args, env, COMMAND_TIMEOUT_MS, (started) => this.started.add(started), options);
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

/**
 * Polls until `condition` holds; rejects after `timeoutMs`, and at once (with its output) if `process_`,
 * the process expected to make it hold, exits first.
 */
export async function waitUntil(
  condition: () => boolean,
  timeoutMs: number,
  what: string,
  process_?: MkobaProcess,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (process_?.hasExited() && !condition()) {
      throw new Error(
        `mkoba exited while waiting for ${what}; stdout:\n${process_.stdout()}\nstderr:\n${process_.stderr()}`,
      );
    }
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

/** The banner's last line: it is on stdout once the server listens. */
export const BANNER_READY_PATTERN = new RegExp(`^${BANNER_LAST_LINE}$`, 'm');

export async function waitForBanner(server: MkobaProcess): Promise<Banner> {
  await server.waitForStdout(BANNER_READY_PATTERN);
  const text = server.stdout();
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
