import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/app/admin.ts';
import { api, BACKENDS, startTestApp, TEST_DATABASE_URL, type TestApp } from '../support/harness.ts';
import { drainRails, fundedWallet, mobileMoney } from '../support/ledger.ts';
import { E2E_TEST_TIMEOUT_MS, mkobaEnv, runMkoba } from './mkobaProcess.ts';

async function someActivity(t: TestApp): Promise<string> {
  const wallet = await fundedWallet(t, '500.00');
  for (const phone of ['+254700000000', '+254700000001', '+254700000003']) {
    await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney(phone), amount: '10.00', currency: 'KES' },
    });
  }
  await drainRails(t);
  return wallet;
}

describe.each(BACKENDS)('ledger verify on %s', (backend) => {
  let t: TestApp;
  let wallet: string;
  beforeAll(async () => {
    t = await startTestApp(backend);
    wallet = await someActivity(t);
  });
  afterAll(() => t.close());

  it('finds nothing wrong with a ledger the service wrote', async () => {
    expect(await runAdminCommand(t.deps, { name: 'ledger.verify' })).toEqual({
      name: 'ledger.verify',
      violations: [],
    });
  });

  it('the database itself refuses sums that take a wallet below zero', async () => {
    await expect(
      t.db.store.query('UPDATE ledger_accounts SET debits_posted = debits_posted + 100000 WHERE id = $1', [
        wallet,
      ]),
    ).rejects.toThrow(/ledger_accounts_wallet_floor_check/);
  });

  it('names an account whose stored sums differ from the replay of its postings, and a negative wallet', async () => {
    // The database refuses a negative wallet (previous test): verify must still find one in a database
    // whose constraint is gone, such as one edited by hand.
    await t.db.store.query('ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_wallet_floor_check');
    await t.db.store.query(
      'UPDATE ledger_accounts SET debits_posted = debits_posted + 100000 WHERE id = $1',
      [wallet],
    );
    const result = await runAdminCommand(t.deps, { name: 'ledger.verify' });
    if (result.name !== 'ledger.verify') throw new Error('wrong result');
    const invariants = result.violations.map((v) => v.invariant).sort();
    expect(invariants).toEqual(['balance_equals_replay', 'wallet_not_negative']);
    expect(result.violations.every((v) => v.detail.includes(wallet))).toBe(true);
    await t.db.store.query(
      'UPDATE ledger_accounts SET debits_posted = debits_posted - 100000 WHERE id = $1',
      [wallet],
    );
    await t.db.store.query(`ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_wallet_floor_check CHECK (
      kind <> 'wallet' OR credits_posted::numeric - debits_posted - debits_pending + overdraft_limit_minor >= 0)`);
  });

  it('refuses to change or delete journal entries and postings', async () => {
    await expect(t.db.store.query('DELETE FROM postings')).rejects.toThrow(/append-only/);
    await expect(t.db.store.query("UPDATE journal_entries SET kind = 'direct'")).rejects.toThrow(
      /append-only/,
    );
  });
});

describe.runIf(TEST_DATABASE_URL)('mkoba ledger verify as a command', () => {
  let t: TestApp;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    t = await startTestApp('postgres');
    await someActivity(t);
    const url = t.db.url as string;
    env = mkobaEnv({ DATABASE_URL: url });
  });
  afterAll(() => t.close());

  it('exits 0 when every invariant holds and 1 naming each violation when one breaks', {
    timeout: E2E_TEST_TIMEOUT_MS,
  }, async () => {
    const healthy = await runMkoba(['ledger', 'verify'], env);
    expect(healthy.stderr).toContain('all invariants hold');
    expect(healthy.code).toBe(0);

    const [account] = await t.db.store.query<{ id: string }>(
      "SELECT id FROM ledger_accounts WHERE kind = 'rail_clearing' LIMIT 1",
    );
    await t.db.store.query('UPDATE ledger_accounts SET credits_posted = credits_posted + 1 WHERE id = $1', [
      account?.id,
    ]);
    const broken = await runMkoba(['ledger', 'verify'], env);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain(`balance_equals_replay: account ${account?.id}`);
    expect(broken.stderr).toContain('1 violation');
  });
});
