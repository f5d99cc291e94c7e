/**
 * A real `node bin/mkoba.js serve` process for tests that need several servers on one database. The
 * server picks a free port (PORT=0) and prints its URL on stderr; every wait is bounded and stop() ends
 * the child it started, by its own pid.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPOSITORY_DIR = fileURLToPath(new URL('../../', import.meta.url));
const MKOBA_BIN_PATH = path.join('bin', 'mkoba.js');
/** Start-up includes compiling the sources through tsx and migrating; generous on a busy machine. */
export const SERVER_PROCESS_START_TIMEOUT_MS = 60_000;
/** How long a server gets to exit after SIGTERM before it is killed. */
const SERVER_PROCESS_STOP_TIMEOUT_MS = 15_000;
/** The banner line `mkoba serve` prints on stdout once it listens: "… listening on http://127.0.0.1:PORT/v1". */
const LISTENING_PATTERN = /listening on (https?:\/\/[^\s/]+)/;
/** Variables the parent may carry that would change what the child does. */
const INHERITED_CONFIG_VARIABLES = [
  'PORT',
  'HOST',
  'DATABASE_URL',
  'DATABASE_READ_URL',
  'MKOBA_DATA_DIR',
  'MKOBA_ENV',
  'MKOBA_SANDBOX_API_KEY',
  'LOG_LEVEL',
  'PGOPTIONS',
  'MKOBA_ENCRYPTION_KEY',
  'MKOBA_ENCRYPTION_KEYS_PREVIOUS',
  'MKOBA_WEBHOOK_ALLOW_PRIVATE',
];
/** One master key for every server a test run starts: servers sharing a database must share it. */
const SHARED_ENCRYPTION_KEY = randomBytes(32).toString('base64');

export interface ServerProcess {
  url: string;
  pid: number;
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * `repositoryDir`: the checkout whose `bin/mkoba.js` runs (another version of the code, extracted from git,
 * for test/e2e/old-code-new-schema.test.ts); this one by default.
 */
export async function startServerProcess(
  env: Record<string, string>,
  repositoryDir: string = REPOSITORY_DIR,
): Promise<ServerProcess> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'mkoba-server-'));
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of INHERITED_CONFIG_VARIABLES) delete childEnv[name];
  Object.assign(childEnv, {
    PORT: '0',
    HOST: '127.0.0.1',
    MKOBA_DATA_DIR: dataDir,
    MKOBA_ENCRYPTION_KEY: SHARED_ENCRYPTION_KEY,
    ...env,
  });
  const child: ChildProcess = spawn(process.execPath, [path.join(repositoryDir, MKOBA_BIN_PATH), 'serve'], {
    cwd: repositoryDir,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not spawn mkoba serve');
  let stderr = '';
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.on('exit', () => {
      exited = true;
      resolve();
    });
  });
  const stop = async () => {
    if (!exited) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), SERVER_PROCESS_STOP_TIMEOUT_MS);
      await exit;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => fail(`no URL within ${SERVER_PROCESS_START_TIMEOUT_MS} ms`),
      SERVER_PROCESS_START_TIMEOUT_MS,
    );
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`mkoba serve (pid ${pid}): ${why}; stderr:\n${stderr}`));
    };
    let stdout = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const match = LISTENING_PATTERN.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on('exit', (code, signal) => fail(`exited (${code ?? signal}) before listening`));
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { url, pid, stderr: () => stderr, stop };
}
