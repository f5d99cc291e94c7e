/**
 * PGlite lets one process at a time open a data directory; a second would corrupt it. Whoever opens it
 * first writes mkoba.lock (pid, role, control socket). Others see the lock: a CLI command hands its work
 * to the serving process over the socket; anything else waits briefly, then stops with a clear message.
 * A lock whose process is gone is stale and is taken over.
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const LOCK_FILE_NAME = 'mkoba.lock';
/** Unix socket paths are limited to about 107 bytes; longer ones go to the temp directory. */
const SOCKET_PATH_LENGTH_MAX = 100;
const LOCK_POLL_INTERVAL_MS = 100;

export interface LockOwner {
  pid: number;
  role: 'serve' | 'cli';
  socket: string | undefined;
}

export interface HeldLock {
  owner: LockOwner;
  release(): void;
}

export function controlSocketPath(dataDir: string): string {
  const candidate = path.join(dataDir, 'control.sock');
  if (candidate.length <= SOCKET_PATH_LENGTH_MAX) return candidate;
  const digest = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  return path.join(tmpdir(), `mkoba-${digest}.sock`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function readLockOwner(dataDir: string): LockOwner | undefined {
  const file = path.join(dataDir, LOCK_FILE_NAME);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const owner = JSON.parse(text) as LockOwner;
    if (typeof owner.pid === 'number' && isAlive(owner.pid)) return owner;
  } catch {
    // A lock file cut short by a crash is as stale as one whose process died.
  }
  try {
    unlinkSync(file);
  } catch {
    // Someone else removed it first.
  }
  return undefined;
}

export function tryAcquireDataDirLock(dataDir: string, owner: LockOwner): HeldLock | LockOwner {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE_NAME);
  for (;;) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, JSON.stringify(owner));
      closeSync(fd);
      return {
        owner,
        release() {
          try {
            if (readFileSync(file, 'utf8') === JSON.stringify(owner)) unlinkSync(file);
          } catch {
            // Already gone.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const current = readLockOwner(dataDir);
    if (current) return current;
  }
}

export function isHeldLock(value: HeldLock | LockOwner): value is HeldLock {
  return 'release' in value;
}

/** Waits up to waitMs for the lock; returns the other owner if it is still held then. */
export async function acquireDataDirLock(
  dataDir: string,
  owner: LockOwner,
  waitMs: number,
  giveUpEarly: (other: LockOwner) => boolean = () => false,
): Promise<HeldLock | LockOwner> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const result = tryAcquireDataDirLock(dataDir, owner);
    if (isHeldLock(result) || giveUpEarly(result) || Date.now() >= deadline) return result;
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_INTERVAL_MS));
  }
}
