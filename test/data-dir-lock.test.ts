import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type AcquireOptions,
  acquireDataDirLock,
  type HeldLock,
  isHeldLock,
  LOCK_FILE_NAME,
  type LockOwner,
} from '../src/store/dataDirLock.ts';

const NO_WAIT: AcquireOptions = { waitMs: 0, shouldWaitFor: () => false };

function owner(role: LockOwner['role'], pid = process.pid, startedAt = new Date()): LockOwner {
  return { pid, role, socket: undefined, startedAt: startedAt.toISOString() };
}

/** A lock left behind by an earlier run. */
const YESTERDAY = new Date(Date.now() - 86_400_000);

/** A pid that belonged to a process which has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

describe('the data directory lock', () => {
  let dir: string;
  let lockFile: string;
  const held: HeldLock[] = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mkoba-lock-'));
    lockFile = path.join(dir, LOCK_FILE_NAME);
  });
  afterEach(() => {
    for (const lock of held.splice(0)) lock.release();
    rmSync(dir, { recursive: true, force: true });
  });

  async function acquire(who: LockOwner, options = NO_WAIT): Promise<HeldLock | LockOwner> {
    const result = await acquireDataDirLock(dir, who, options);
    if (isHeldLock(result)) held.push(result);
    return result;
  }

  it('is taken, refused to a second taker while held, and released', async () => {
    const first = await acquire(owner('serve'));
    if (!isHeldLock(first)) throw new Error('not taken');
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: process.pid, role: 'serve' });

    expect(await acquire(owner('cli'))).toMatchObject({ pid: process.pid, role: 'serve' });

    first.release();
    expect(existsSync(lockFile)).toBe(false);
    expect(isHeldLock(await acquire(owner('cli')))).toBe(true);
  });

  it.each([
    ['a process that has exited', () => JSON.stringify(owner('serve', deadPid(), YESTERDAY))],
    [
      'this very pid, left by an earlier process (a restarted container)',
      () => JSON.stringify(owner('serve', process.pid, YESTERDAY)),
    ],
    ['nothing readable', () => '{"pid":'],
  ])('takes over a stale lock naming %s', async (_, staleText) => {
    const text = staleText();
    writeFileSync(lockFile, text);

    expect(isHeldLock(await acquire(owner('serve')))).toBe(true);
    expect(readFileSync(lockFile, 'utf8')).not.toBe(text);
    expect(existsSync(`${lockFile}.takeover`)).toBe(false);
  });

  it('returns a live server at once, and waits (bounded) for a live CLI command', async () => {
    const parent = process.ppid; // alive for as long as this test runs
    const waits: LockOwner[] = [];
    const options: AcquireOptions = {
      waitMs: 300,
      shouldWaitFor: (other) => other.role === 'cli',
      onWait: (other) => waits.push(other),
    };

    writeFileSync(lockFile, JSON.stringify(owner('serve', parent)));
    const startedAt = Date.now();
    expect(await acquire(owner('serve'), options)).toMatchObject({ pid: parent, role: 'serve' });
    expect(Date.now() - startedAt).toBeLessThan(100);
    expect(waits).toEqual([]);

    writeFileSync(lockFile, JSON.stringify(owner('cli', parent)));
    expect(await acquire(owner('serve'), options)).toMatchObject({ pid: parent, role: 'cli' });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(300);
    expect(waits).toMatchObject([{ pid: parent, role: 'cli' }]);
  });
});
