/**
 * The one lock order (src/store/lockOrder.ts), checked in every test: within the ledger accounts stage, an
 * account a transaction locks for the first time must sort after every account it already holds; one it
 * holds may be locked again. A later statement that locks an account sorting before one held is the
 * classic two-transaction deadlock (one holds x and wants w, the other holds w and wants x), so the check
 * throws on it. The two paths that once broke it take their locks in one statement: the sandbox seed's
 * fundings, and a custody payout's settle with the network fee its partner reported (the fee's accounts
 * are locked with the settle's own, on a real Fireblocks simulator, over real HTTP).
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemDeps } from '../src/app/deps.ts';
import { seedSandbox } from '../src/app/seed.ts';
import { lockAccounts } from '../src/modules/ledger/index.ts';
import { runCustodySweepPassOnce } from '../src/modules/railPartners/custodyWorkers.ts';
import { fireblocksRequest } from '../src/modules/railPartners/partners/fireblocks/connection.ts';
import {
  closeRailPartnerDirectory,
  railPartnerDirectory,
} from '../src/modules/railPartners/useCases/directory.ts';
import { runDepositWorkerOnce } from '../src/modules/stablecoins/workers.ts';
import { runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import { payoutRailResolver } from '../src/railWork.ts';
import { type FireblocksSimulator, startFireblocksSimulator } from '../src/simulators/fireblocks/index.ts';
import {
  enforceLockOrder,
  LockOrderViolation,
  lockingAccounts,
  lockingStage,
} from '../src/store/lockOrder.ts';
import type { Queryable, Row, Store } from '../src/store/store.ts';
import { eventually } from './support/eventually.ts';
import { simulatorConfig } from './support/fireblocks.ts';
import { api, BACKENDS, openTestDatabase, startTestApp, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';

/** A statement that locks ledger accounts (`lockAccounts`): its first parameter is the ids, sorted. */
const ACCOUNT_LOCK = /FROM\s+ledger_accounts[\s\S]*FOR\s+UPDATE/i;

/**
 * The store with every transaction's account lock statements recorded, one list of ids per statement, in
 * the order the transaction sent them. Locks taken through a transaction's wrapper are the transaction's.
 */
function recordingAccountLocks(store: Store): { store: Store; transactions: string[][][] } {
  const transactions: string[][][] = [];
  const recorded = (tx: Queryable, locks: string[][]): Queryable => {
    const record = (sql: string, params: readonly unknown[] | undefined) => {
      if (ACCOUNT_LOCK.test(sql)) locks.push([...((params?.[0] as string[] | undefined) ?? [])]);
    };
    const wrapped: Queryable & { lockOwner?: object } = {
      query<R extends Row>(sql: string, params?: readonly unknown[]): Promise<R[]> {
        record(sql, params);
        return tx.query<R>(sql, params);
      },
      exec: (sql) => tx.exec(sql),
    };
    const many = tx.queryMany?.bind(tx);
    if (many) {
      wrapped.queryMany = (statements) => {
        for (const s of statements) record(s.text, s.params);
        return many(statements);
      };
    }
    Object.defineProperty(wrapped, 'lockOwner', {
      get: () => (tx as { lockOwner?: object }).lockOwner ?? tx,
    });
    return wrapped;
  };
  const wrapped: Store = {
    ...store,
    driver: store.driver,
    query: (sql, params) => store.query(sql, params),
    exec: (sql) => store.exec(sql),
    close: () => store.close(),
    transaction: (fn) =>
      store.transaction((tx) => {
        const locks: string[][] = [];
        transactions.push(locks);
        return fn(recorded(tx, locks));
      }),
  };
  return { store: wrapped, transactions };
}

/** The accounts a transaction's lock statements lock first that sort before one it already held. */
function outOfOrder(statements: readonly string[][]): string[] {
  const held = new Set<string>();
  let last: string | undefined;
  const early: string[] = [];
  for (const ids of statements) {
    for (const id of ids) {
      if (!held.has(id) && last !== undefined && id < last) early.push(id);
    }
    for (const id of ids) {
      held.add(id);
      if (last === undefined || id > last) last = id;
    }
  }
  return early;
}

describe('the lock order of ledger accounts', () => {
  it('throws when a later statement locks an account that sorts before one held', () => {
    const tx = {};
    lockingAccounts(tx, ['acct_b', 'wallet_x']);
    expect(() => lockingAccounts(tx, ['acct_a'])).toThrow(LockOrderViolation);
    expect(() => lockingAccounts(tx, ['acct_a'])).toThrow(/acct_a locked after account wallet_x/);
    // Out of order together with accounts held or later: the early one still throws.
    expect(() => lockingAccounts(tx, ['acct_a', 'wallet_x', 'wallet_y'])).toThrow(LockOrderViolation);
  });

  it('lets a transaction lock held accounts again, and accounts that sort after every one held', () => {
    const tx = {};
    lockingAccounts(tx, ['acct_b', 'wallet_x']);
    expect(() => lockingAccounts(tx, ['acct_b'])).not.toThrow();
    expect(() => lockingAccounts(tx, ['wallet_x', 'acct_b'])).not.toThrow();
    expect(() => lockingAccounts(tx, ['acct_b', 'wallet_x', 'wallet_y'])).not.toThrow();
    expect(() => lockingAccounts(tx, ['wallet_z'])).not.toThrow();
    // Each transaction has its own: another may lock what sorts first.
    expect(() => lockingAccounts({}, ['acct_a'])).not.toThrow();
  });

  it('after the evidence chain head, a held account may be locked again but no new one', () => {
    const tx = {};
    lockingAccounts(tx, ['wallet_x']);
    lockingStage(tx, 'evidence_chain');
    expect(() => lockingAccounts(tx, ['wallet_x'])).not.toThrow();
    expect(() => lockingAccounts(tx, ['wallet_y'])).toThrow(/after the evidence_chain lock/);
  });

  it('checks nothing where the order is not enforced (outside tests)', () => {
    enforceLockOrder(false);
    try {
      const tx = {};
      lockingAccounts(tx, ['wallet_x']);
      expect(() => lockingAccounts(tx, ['acct_a'])).not.toThrow();
    } finally {
      enforceLockOrder(true);
    }
  });
});

describe.each(BACKENDS)('the lock order on %s', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a transaction that locks wallets in two statements must take them in id order', async () => {
    const org = await newOrganization(t);
    const [first, second, third] = (
      await Promise.all([
        fundedWallet(t, '10.00', 'KES', org.key),
        fundedWallet(t, '10.00', 'KES', org.key),
        fundedWallet(t, '10.00', 'KES', org.key),
      ])
    ).sort() as [string, string, string];
    // The second statement locks an account sorting before the one the first locked: refused, rolled back.
    await expect(
      t.deps.store.transaction(async (tx) => {
        await lockAccounts(tx, [second]);
        await lockAccounts(tx, [first]);
      }),
    ).rejects.toThrow(LockOrderViolation);
    // Held accounts again, and then one that sorts after them all: in order.
    const locked = await t.deps.store.transaction(async (tx) => {
      await lockAccounts(tx, [second, first]);
      await lockAccounts(tx, [first]);
      await lockAccounts(tx, [third, second]);
      return [...(await lockAccounts(tx, [first, second, third])).keys()];
    });
    expect(locked).toEqual([first, second, third]);
  });
});

describe.each(BACKENDS)('the sandbox seed on %s', (backend) => {
  it('locks every account its fundings post to in one statement, before the first funding', async () => {
    const db = await openTestDatabase(backend);
    try {
      const recording = recordingAccountLocks(db.store);
      const deps = systemDeps(recording.store, 'sandbox');
      const seeded = await seedSandbox(deps, undefined);
      closeRailPartnerDirectory(deps);
      expect(seeded.seeded).toBe(true);
      const [seed] = recording.transactions.filter((locks) => locks.length > 0);
      const [all, ...later] = seed ?? [];
      // Five wallets in three currencies: the wallets and the three settlement accounts, together.
      expect(all?.filter((id) => id.startsWith('wallet_'))).toHaveLength(5);
      expect(all?.filter((id) => id.startsWith('acct_'))).toHaveLength(3);
      for (const ids of later) expect(all).toEqual(expect.arrayContaining(ids));
    } finally {
      await db.close();
    }
  });
});

describe.each(BACKENDS)('a custody payout settled with a network fee on %s', (backend) => {
  let t: TestApp;
  let sim: FireblocksSimulator;
  let recording: ReturnType<typeof recordingAccountLocks>;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    sim = await startFireblocksSimulator({ stepMs: 5, networkFee: '0.25', tenantId: randomUUID() });
    // The fee paid in the stablecoin itself: posted to the ledger (rail fee against the payout's float).
    sim.setNetworkFee('0.25', 'asset');
    recording = recordingAccountLocks(t.deps.store);
    t.deps.store = recording.store;
  });
  afterAll(async () => {
    await sim?.close();
    await t?.close();
  });

  it('locks the fee’s accounts with the payout’s own, and a sweep’s, in one statement', async () => {
    const org = await newOrganization(t);
    const partner = await api(t, 'POST', '/v1/rail-partners', {
      key: org.key,
      body: {
        partner: 'fireblocks',
        settings: {
          base_url: sim.baseUrl,
          source_vault_account_id: await payoutVault(sim),
          webhook_public_key: sim.webhookPublicKey,
        },
        credentials: { api_key: sim.credentials.apiKey, private_key: sim.credentials.secretKey },
      },
    });
    expect(partner.statusCode, partner.body).toBe(201);
    sim.setWebhookUrl(`${partner.data.callback_url}/webhook`);
    const wallet = await fundedWallet(t, '500.000000', 'USDC', org.key);
    const created = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: {
        source: wallet,
        destination: {
          type: 'crypto_address',
          asset: 'USDC',
          network: 'ethereum',
          address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
        },
        amount: '40.000000',
        currency: 'USDC',
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    await runRailWorkerOnce(t.deps, payoutRailResolver(railPartnerDirectory(t.deps), 'production'), {
      log: () => {},
    });
    await sim.whenIdle();
    await eventually(
      async () => (await api(t, 'GET', `/v1/transfers/${created.data.id}`, { key: org.key })).data,
      (transfer) => transfer.status === 'settled',
    );

    const railAccount = async (kind: string) =>
      (
        (await api(t, 'GET', `/v1/ledger/accounts?kind=${kind}&currency=USDC`, { key: org.key })).data
          .data as any[]
      ).find((a) => a.rail === 'digital_asset');
    const fee = await railAccount('rail_fee');
    const clearing = await railAccount('rail_clearing');
    expect(fee).toMatchObject({ net_posted: '-0.250000' });
    expect(clearing).toMatchObject({ net_posted: '40.250000' });
    // The one transaction that settled the payout and booked its fee.
    const settling = recording.transactions.filter((locks) => locks.some((ids) => ids.includes(fee.id)));
    expect(settling).toHaveLength(1);
    const [locks = []] = settling;
    const first = locks.findIndex((ids) => ids.includes(wallet));
    expect(locks[first]).toEqual(expect.arrayContaining([wallet, clearing.id, fee.id]));
    // Every later lock statement finds its accounts held: none is locked out of order.
    for (const ids of locks.slice(first + 1)) expect(locks[first]).toEqual(expect.arrayContaining(ids));
    expect(outOfOrder(locks)).toEqual([]);
    await expectLedgerHealthy(t);

    // A custody sweep of a deposit, its fee paid in the stablecoin too: the fee's accounts are locked with
    // the sweep's, before the sweep's evidence takes the chain head.
    const depositor = await fundedWallet(t, '0', 'USDC', org.key);
    const issued = await api(t, 'POST', `/v1/wallets/${depositor}/deposit-addresses`, {
      key: org.key,
      body: { network: 'ethereum' },
    });
    expect(issued.statusCode, issued.body).toBe(201);
    const name = encodeURIComponent(`mkoba ${depositor}`);
    const found = await fireblocksRequest(
      simulatorConfig(sim),
      'GET',
      `/vault/accounts_paged?namePrefix=${name}`,
    );
    const vault = (found.body as { accounts: Array<{ id: string }> }).accounts[0]?.id ?? '';
    sim.deposit({ vaultAccountId: vault, assetId: 'USDC', amount: '60' });
    await sim.whenIdle();
    await eventually(
      async () =>
        (await api(t, 'GET', '/v1/deposits?status=pending', { key: org.key })).data.data as unknown[],
      (list) => list.length === 0,
    );
    for (let i = 0; i < 3; i++) await runDepositWorkerOnce(t.deps, { log: () => {} });
    // The simulator takes a fee paid in the asset from the vault the sweep emptied, below zero, which a
    // further pass could not read: the vault is set back to zero once the sweep is on chain.
    const sweepFees = () =>
      t.db.store.query(
        "SELECT * FROM custody_network_fees WHERE subject_type = 'sweep' AND organization_id = $1",
        [org.organizationId],
      );
    for (let i = 0; i < 3 && (await sweepFees()).length === 0; i++) {
      await runCustodySweepPassOnce(t.deps, railPartnerDirectory(t.deps));
      await sim.whenIdle();
      sim.setBalance(vault, 'USDC', '0');
    }
    const [sweepFee, ...moreSweepFees] = await sweepFees();
    expect(moreSweepFees).toEqual([]);
    expect(sweepFee).toMatchObject({ currency: 'USDC', exception_id: null });
    expect(sweepFee?.journal_entry_id).toEqual(expect.any(String));
    const trust = (
      (await api(t, 'GET', '/v1/ledger/accounts?kind=trust&currency=USDC', { key: org.key })).data
        .data as any[]
    )[0];
    const sweeping = recording.transactions.filter((txLocks) =>
      txLocks.some((ids) => ids.includes(fee.id) && ids.includes(trust.id)),
    );
    expect(sweeping).toHaveLength(1);
    for (const txLocks of sweeping) {
      const [sweepLock, ...laterLocks] = txLocks;
      expect(sweepLock).toEqual(expect.arrayContaining([trust.id, fee.id]));
      for (const ids of laterLocks) expect(sweepLock).toEqual(expect.arrayContaining(ids));
    }
    expect(await railAccount('rail_fee')).toMatchObject({ net_posted: '-0.500000' });
    await expectLedgerHealthy(t);
  });
});

/** A Fireblocks vault holding USDC that payouts leave from. */
async function payoutVault(sim: FireblocksSimulator): Promise<string> {
  const config = simulatorConfig(sim);
  const vault = await fireblocksRequest(config, 'POST', '/vault/accounts', { name: 'treasury' });
  const id = (vault.body as { id: string }).id;
  await fireblocksRequest(config, 'POST', `/vault/accounts/${id}/USDC`);
  sim.setBalance(id, 'USDC', '100000');
  return id;
}
