/**
 * PGlite lets one process at a time open a data directory; a second would corrupt it. Whoever opens it
 * first creates mkoba.lock (pid, role, control socket). Others see the lock: a CLI command hands its work
 * to the serving process over the socket, a second server stops at once with a clear message, and anyone
 * facing another CLI command waits (bounded) for it to finish. A lock whose process is gone is stale and
 * is taken over.
 *
 * The lock file appears complete or not at all (written aside, then hard-linked into place), and a stale
 * lock is removed only by the one process holding mkoba.lock.takeover, after it has checked that the lock
 * is still the stale one: so two processes racing for a directory can never both win.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const LOCK_FILE_NAME = 'mkoba.lock';
const TAKEOVER_FILE_NAME = 'mkoba.lock.takeover';
/** Unix socket paths are limited to about 107 bytes; longer ones go to the temp directory. */
const SOCKET_PATH_LENGTH_MAX = 100;
const LOCK_POLL_INTERVAL_MS = 100;
/** A takeover marker this old belongs to a process that died between its two steps. */
const TAKEOVER_MARKER_STALE_MS = 10_000;
/** File systems without hard links; there the lock is created with an exclusive open instead. */
const HARD_LINK_UNSUPPORTED_CODES = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

export interface LockOwner {
  pid: number;
  role: 'serve' | 'cli';
  socket: string | undefined;
  /** ISO time the lock was taken: tells apart two owners that got the same pid. */
  startedAt: string;
}

export interface HeldLock {
  owner: LockOwner;
  release(): void;
}

/** Lock files this process holds, so that a lock naming our own pid can be told apart from a leftover. */
const lockFilesHeldHere = new Set<string>();

export function controlSocketPath(dataDir: string): string {
  const candidate = path.join(dataDir, 'control.sock');
  if (candidate.length <= SOCKET_PATH_LENGTH_MAX) return candidate;
  const digest = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  return path.join(tmpdir(), `mkoba-${digest}.sock`);
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

function isAlive(owner: LockOwner, lockFile: string): boolean {
  // Containers restart with the same pids, so a lock naming our own pid that we do not hold is a leftover.
  if (owner.pid === process.pid) return lockFilesHeldHere.has(lockFile);
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
}

/** Creates `file` holding `text` unless it exists; readers never see it half-written. */
function createExclusive(file: string, text: string): boolean {
  const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  const fd = openSync(aside, 'wx', 0o600);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(aside, file);
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    if (!HARD_LINK_UNSUPPORTED_CODES.has(errorCode(error) ?? '')) throw error;
    return createExclusiveWithoutLink(file, text);
  } finally {
    rmSync(aside, { force: true });
  }
}

function createExclusiveWithoutLink(file: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return true;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(text) as LockOwner;
    return typeof owner.pid === 'number' && Number.isInteger(owner.pid) && owner.pid > 0 ? owner : undefined;
  } catch {
    return undefined;
  }
}

/** Removes the lock if it still reads `staleText`; false when another process is busy taking it over. */
function removeStaleLock(dataDir: string, staleText: string): boolean {
  const lockFile = path.join(dataDir, LOCK_FILE_NAME);
  const marker = path.join(dataDir, TAKEOVER_FILE_NAME);
  if (!createExclusive(marker, `${process.pid}`)) {
    try {
      if (Date.now() - statSync(marker).mtimeMs > TAKEOVER_MARKER_STALE_MS) rmSync(marker, { force: true });
    } catch {
      // The other process finished its takeover meanwhile.
    }
    return false;
  }
  try {
    // Only a marker holder removes another process's lock, so an unchanged text is still the stale lock.
    if (readText(lockFile) === staleText) rmSync(lockFile, { force: true });
    return true;
  } finally {
    rmSync(marker, { force: true });
  }
}

/** `retryNow` after removing a stale lock; otherwise someone else is mid-way and we poll. */
type Attempt = { held: HeldLock } | { other: LockOwner } | { contended: true; retryNow: boolean };

function attemptLock(dataDir: string, owner: LockOwner): Attempt {
  const lockFile = path.join(dataDir, LOCK_FILE_NAME);
  const text = JSON.stringify(owner);
  if (createExclusive(lockFile, text)) {
    lockFilesHeldHere.add(lockFile);
    return {
      held: {
        owner,
        release() {
          lockFilesHeldHere.delete(lockFile);
          try {
            if (readText(lockFile) === text) rmSync(lockFile, { force: true });
          } catch {
            // Unreadable now: nothing of ours to remove.
          }
        },
      },
    };
  }
  const currentText = readText(lockFile);
  if (currentText === undefined) return { contended: true, retryNow: true }; // released meanwhile
  const current = parseOwner(currentText);
  // A lock file that does not parse was cut short by a crash (only possible without hard links): stale.
  if (current && isAlive(current, lockFile)) return { other: current };
  return { contended: true, retryNow: removeStaleLock(dataDir, currentText) };
}

export interface AcquireOptions {
  /** How long to wait for an owner that `shouldWaitFor` accepts. */
  waitMs: number;
  /** Whether this owner is worth waiting for (a short CLI command), or not (a server). */
  shouldWaitFor: (other: LockOwner) => boolean;
  /** Called once, when waiting starts. */
  onWait?: ((other: LockOwner) => void) | undefined;
}

/** Takes the lock, or returns the live owner that holds it (at once, or after waiting for it in vain). */
export async function acquireDataDirLock(
  dataDir: string,
  owner: LockOwner,
  options: AcquireOptions,
): Promise<HeldLock | LockOwner> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const deadline = Date.now() + options.waitMs;
  let waitAnnounced = false;
  for (;;) {
    const attempt = attemptLock(dataDir, owner);
    if ('held' in attempt) return attempt.held;
    if ('other' in attempt) {
      if (!options.shouldWaitFor(attempt.other) || Date.now() >= deadline) return attempt.other;
      if (!waitAnnounced) options.onWait?.(attempt.other);
      waitAnnounced = true;
    } else if (attempt.retryNow) {
      continue;
    }
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_INTERVAL_MS));
  }
}

export function isHeldLock(value: HeldLock | LockOwner): value is HeldLock {
  return 'release' in value;
}
