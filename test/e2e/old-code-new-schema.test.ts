/**
 * Old and new code side by side on one schema, as in a rolling deploy (docs/OPERATIONS.md, "Schema changes:
 * expand, then contract"): the code of the commit before the newest migration, taken from git, runs as a
 * real `mkoba serve` against a schema migrated by this checkout's migrations, while this checkout's code
 * serves the same schema. The old server creates a customer, wallets, funds one, transfers, lists, takes
 * a webhook subscription and decides an approval; the new code reads what it wrote and writes beside it,
 * and the old server reads that. The ledger stays whole.
 *
 * It needs the parent commit in this clone's history: a shallow clone without it skips, saying so
 * (.ci/run fetches the history first).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { api, createCustomer, startTestApp, TEST_DATABASE_URL, type TestApp } from '../support/harness.ts';
import { expectLedgerHealthy, fundedWallet, mobileMoney } from '../support/ledger.ts';
import { newOrganization } from '../support/organizations.ts';
import { type ServerProcess, startServerProcess } from '../support/serverProcess.ts';

const REPOSITORY_DIR = fileURLToPath(new URL('../../', import.meta.url));
const MIGRATIONS_PATH = 'src/store/migrations';
/** Two servers start here (each compiling its sources through tsx) on a busy machine. */
const TEST_TIMEOUT_MS = 180_000;

function git(args: string[]): { ok: boolean; out: string } {
  const run = spawnSync('git', args, { cwd: REPOSITORY_DIR, encoding: 'utf8' });
  return { ok: run.status === 0, out: (run.stdout ?? '').trim() };
}

/**
 * The commit before the newest migration: the parent of the commit that added the highest-numbered file
 * in src/store/migrations, or this checkout's HEAD while that file is not committed yet. Undefined, with
 * why, when the history does not hold it (a shallow clone).
 */
function commitBeforeNewestMigration(): { commit?: string; why?: string } {
  const newest = readdirSync(path.join(REPOSITORY_DIR, MIGRATIONS_PATH))
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .at(-1);
  if (!newest) return { why: 'no migrations' };
  const added = git(['log', '-1', '--format=%H', '--diff-filter=A', '--', `${MIGRATIONS_PATH}/${newest}`]);
  if (!added.ok) return { why: 'git log failed: is this a git checkout?' };
  const parent =
    added.out === '' ? git(['rev-parse', 'HEAD']) : git(['rev-parse', '--verify', `${added.out}^`]);
  if (!parent.ok || parent.out === '') {
    const shallow = git(['rev-parse', '--is-shallow-repository']).out === 'true';
    return {
      why: `the commit before ${newest} is not in this clone's history${shallow ? ' (a shallow clone: git fetch --unshallow)' : ''}`,
    };
  }
  return { commit: parent.out };
}

/** The commit's files in a new directory, with this checkout's node_modules linked in. */
function extractCommit(commit: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'mkoba-old-code-'));
  const archive = spawnSync('sh', ['-c', `git archive --format=tar "$0" | tar -x -C "$1"`, commit, dir], {
    cwd: REPOSITORY_DIR,
    encoding: 'utf8',
  });
  if (archive.status !== 0) throw new Error(`git archive ${commit} failed: ${archive.stderr}`);
  symlinkSync(realpathSync(path.join(REPOSITORY_DIR, 'node_modules')), path.join(dir, 'node_modules'));
  return dir;
}

interface Answer {
  status: number;
  data: any;
  text: string;
}

async function call(server: ServerProcess, key: string, method: string, url: string, body?: unknown) {
  const response = await fetch(`${server.url}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, data: text ? JSON.parse(text) : undefined, text } as Answer;
}

const approvalRule = {
  id: 'large_payouts',
  description: 'Payouts of 1,000.00 KES or more need a second pair of eyes',
  match: { amount: [{ currency: 'KES', gte: '1000.00' }] },
  action: 'require_approval',
  approval: { quorum: 1, roles: ['approver'] },
};

describe.runIf(TEST_DATABASE_URL)('the previous release beside this one on the newest schema', () => {
  let t: TestApp | undefined;
  let old: ServerProcess | undefined;
  let oldDir: string | undefined;
  afterAll(async () => {
    await old?.stop();
    await t?.close();
    if (oldDir) rmSync(oldDir, { recursive: true, force: true });
  });

  it('serves the old API on the new schema while the new code serves it too', {
    timeout: TEST_TIMEOUT_MS,
  }, async (context) => {
    const { commit, why } = commitBeforeNewestMigration();
    if (!commit) {
      console.warn(`old code beside new: skipped, ${why}`);
      context.skip(why);
      return;
    }
    // The new code: migrates a fresh schema with this checkout's migrations, and serves it in process.
    t = await startTestApp('postgres', 'sandbox');
    const app = t;
    oldDir = extractCommit(commit);
    const url = new URL(app.db.url as string);
    old = await startServerProcess(
      {
        DATABASE_URL: url.toString(),
        MKOBA_ENV: 'sandbox',
        MKOBA_ENCRYPTION_KEY: app.encryptionKey,
        MKOBA_SANDBOX_SIMULATORS: '0',
        MKOBA_WEBHOOK_ALLOW_PRIVATE: '1',
        MKOBA_RATE_LIMITS: 'off',
      },
      oldDir,
    );
    // The old code found nothing of its own to migrate: the schema is ahead of it.
    expect(old.stderr()).not.toMatch(/applied migrations/);
    const server = old;
    const org = await newOrganization(app);
    const on = (key: string, method: string, path: string, body?: unknown) =>
      call(server, key, method, path, body);

    // The old server writes: a customer, wallets, funding, a transfer, a subscription.
    const customer = await on(org.key, 'POST', '/v1/customers', { type: 'individual', name: 'Old Code' });
    expect(customer.status, customer.text).toBe(201);
    const wallets: string[] = [];
    for (const currency of ['KES', 'KES']) {
      const wallet = await on(org.key, 'POST', '/v1/wallets', { owner: customer.data.id, currency });
      expect(wallet.status, wallet.text).toBe(201);
      wallets.push(wallet.data.id);
    }
    const [source, target] = wallets as [string, string];
    const funded = await on(org.key, 'POST', `/v1/sandbox/wallets/${source}/fund`, { amount: '5000.00' });
    expect(funded.status, funded.text).toBe(201);
    const transfer = await on(org.key, 'POST', '/v1/transfers', {
      source,
      destination: target,
      amount: '12.50',
      currency: 'KES',
      rail: 'internal',
    });
    expect(transfer.status, transfer.text).toBe(201);
    const subscription = await on(org.key, 'POST', '/v1/webhook-subscriptions', {
      url: 'http://127.0.0.1:9/hooks',
      events: ['transfer.created'],
    });
    expect(subscription.status, subscription.text).toBe(201);

    // An approval decided through the old server: a policy, a held payout, a member's vote.
    const policy = await on(org.key, 'PUT', '/v1/policies', { rules: [approvalRule] });
    expect(policy.status, policy.text).toBe(200);
    const initiator = await org.member(['initiator']);
    const approver = await org.member(['approver']);
    const held = await on(initiator.key, 'POST', '/v1/transfers', {
      source,
      destination: mobileMoney('+254711000111'),
      amount: '1000.00',
      currency: 'KES',
    });
    expect(held.status, held.text).toBe(201);
    expect(held.data.status).toBe('pending_approval');
    const vote = await on(approver.key, 'POST', `/v1/approvals/${held.data.approval}/approve`, {});
    expect(vote.status, vote.text).toBe(200);
    expect(vote.data.status).toBe('approved');

    // The old server lists what it wrote.
    const listed = await on(org.key, 'GET', '/v1/transfers?limit=10');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.data.data.map((item: { id: string }) => item.id)).toEqual(
      expect.arrayContaining([transfer.data.id, held.data.id]),
    );
    expect((await on(org.key, 'GET', '/v1/webhook-subscriptions')).status).toBe(200);

    // The new code, at the same time, reads the old server's writes and writes beside them.
    const read = await api(app, 'GET', `/v1/transfers/${held.data.id}`, { key: org.key });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.data.status).not.toBe('pending_approval');
    const newSource = await fundedWallet(app, '100.00', 'KES', org.key);
    const newTransfer = await api(app, 'POST', '/v1/transfers', {
      key: org.key,
      body: { source: newSource, destination: target, amount: '1.00', currency: 'KES', rail: 'internal' },
    });
    expect(newTransfer.statusCode, newTransfer.body).toBe(201);
    expect(await createCustomer(app, org.key, 'New Code')).toMatch(/^cus_/);

    // And the old server reads what the new code wrote.
    const oldRead = await on(org.key, 'GET', `/v1/transfers/${newTransfer.data.id}`);
    expect(oldRead.status, oldRead.text).toBe(200);
    const balance = await on(org.key, 'GET', `/v1/wallets/${target}/balance`);
    expect(balance.status, balance.text).toBe(200);
    expect(balance.data.available).toBe('13.50');
    await expectLedgerHealthy(app);
  });
});
