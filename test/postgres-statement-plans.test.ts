/**
 * How PostgreSQL plans the statements every transfer runs. The statements a transfer runs on every request
 * are prepared once per connection and keep their plan (planning them cost more PostgreSQL CPU than running
 * them); the AML activity read finds a wallet's incoming money through (organization_id,
 * destination_wallet_id, id) even before the transfers table has statistics, where it used to read every
 * settled transfer of the organization. PostgreSQL only: the embedded database plans in process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/variables.ts';
import { loadConfig } from '../src/config.ts';
import { findWalletIdentitiesByIds, findWallets } from '../src/modules/wallets/repository.ts';
import { openPostgresStore } from '../src/store/postgres.ts';
import { findIdempotencyRecord } from '../src/store/repositories/idempotency.ts';
import { readWalletActivity, tallyWalletActivity } from '../src/store/repositories/walletActivity.ts';
import type { Queryable, Row } from '../src/store/store.ts';
import { openTestDatabase, TEST_DATABASE_URL, type TestDatabase } from './support/harness.ts';

/** Settled transfers, and the wallets they are spread over, that the statistics have not seen. */
const UNSEEN_TRANSFERS = 20_000;
const UNSEEN_WALLETS = 2_000;

/** More than the five custom plans PostgreSQL makes before it may settle on a generic one. */
const EXECUTIONS = 8;

/** A Queryable that keeps each statement it is given and answers none. */
function recorder(): { db: Queryable; statements: { sql: string; params: readonly unknown[] }[] } {
  const statements: { sql: string; params: readonly unknown[] }[] = [];
  return {
    statements,
    db: {
      async query<R extends Row>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
        statements.push({ sql, params });
        return [];
      },
      async exec() {},
    },
  };
}

describe('MKOBA_PG_PREPARED_STATEMENTS', () => {
  it("is on by default, 'off' turns it off, and anything else is refused", () => {
    expect(loadConfig({}).postgresPreparedStatements).toBe(true);
    expect(loadConfig({ MKOBA_PG_PREPARED_STATEMENTS: 'on' }).postgresPreparedStatements).toBe(true);
    expect(loadConfig({ MKOBA_PG_PREPARED_STATEMENTS: 'off' }).postgresPreparedStatements).toBe(false);
    expect(() => loadConfig({ MKOBA_PG_PREPARED_STATEMENTS: 'false' })).toThrow(ConfigError);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('statement plans on PostgreSQL', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase('postgres');
  });
  afterAll(async () => {
    await db.close();
  });

  /** The prepared statements of the transaction's connection whose text contains `fragment`. */
  async function preparedOnConnection(
    tx: Queryable,
    fragment: string,
  ): Promise<{ generic_plans: string; custom_plans: string }[]> {
    return tx.query(
      `SELECT generic_plans::text, custom_plans::text FROM pg_prepared_statements
        WHERE statement LIKE '%' || $1 || '%'`,
      [fragment],
    );
  }

  it.each([
    ['one wallet', ['wallet_0000000000000000000000001']],
    [
      'a source and a destination wallet',
      ['wallet_0000000000000000000000001', 'wallet_0000000000000000000000002'],
    ],
  ])('reads %s with a prepared statement whose plan is kept', async (_, ids) => {
    const plans = await db.store.transaction(async (tx) => {
      for (let i = 0; i < EXECUTIONS; i++) await findWallets(tx, 'org_none', ids);
      return preparedOnConnection(tx, ids.length === 1 ? 'w.id = $2' : 'w.id IN ($2, $3)');
    });
    expect(plans).toHaveLength(1);
    for (const plan of plans) expect(Number(plan.generic_plans)).toBeGreaterThan(0);
  });

  it("reads many requests' wallet identities at once by the wallets' primary key, however many wallets", async () => {
    const identities = recorder();
    const wanted = Array.from({ length: 40 }, (_, i) => `wallet_${String(i).padStart(26, '0')}`);
    await findWalletIdentitiesByIds(identities.db, wanted);
    const plan = await db.store.transaction(async (tx) => {
      // Wallets the table's statistics do not know of. Foreign keys and triggers are off for the rows.
      await tx.query('SET LOCAL session_replication_role = replica');
      await tx.query(
        `INSERT INTO wallets (id, organization_id, owner_id, currency, status, metadata, created_at, updated_at)
         SELECT 'wallet_' || lpad(g::text, 26, '0'), 'org_none', 'cus_none', 'KES', 'active', '{}', now(), now()
           FROM generate_series(1, $1::int) AS g`,
        [UNSEEN_TRANSFERS],
      );
      const [statement] = identities.statements;
      const rows = await tx.query<Row>(`EXPLAIN ${statement?.sql}`, statement?.params);
      return rows.map((row) => Object.values(row)[0]).join('\n');
    });
    expect(plan).toContain('wallets_pkey');
    expect(plan).not.toContain('Seq Scan');
  });

  it("reads an Idempotency-Key's record with a prepared statement whose plan is kept", async () => {
    const plans = await db.store.transaction(async (tx) => {
      for (let i = 0; i < EXECUTIONS; i++) await findIdempotencyRecord(tx, 'org_none', `key-${i}`);
      return preparedOnConnection(tx, 'FROM idempotency_records WHERE organization_id = $1');
    });
    expect(plans).toHaveLength(1);
    expect(Number(plans[0]?.generic_plans)).toBeGreaterThan(0);
  });

  it('prepares nothing when preparing is off (a pooler in transaction mode)', async () => {
    const unnamed = await openPostgresStore({
      connectionString: db.url as string,
      poolConnectionsMax: 1,
      preparedStatements: false,
    });
    try {
      const prepared = await unnamed.transaction(async (tx) => {
        for (let i = 0; i < EXECUTIONS; i++) await findIdempotencyRecord(tx, 'org_none', `key-${i}`);
        return tx.query('SELECT name FROM pg_prepared_statements');
      });
      expect(prepared).toEqual([]);
    } finally {
      await unnamed.close();
    }
  });

  it("finds a wallet's incoming money by destination, never by the organization's settled transfers", async () => {
    const since = new Date(Date.now() - 30 * 86_400_000);
    const activity = recorder();
    await readWalletActivity(
      activity.db,
      'org_none',
      [{ walletId: 'wallet_0000000000000000000000001', destination: { type: 'wallet', wallet: 'w' } }],
      since,
      100,
    );
    const tally = recorder();
    await tallyWalletActivity(tally.db, 'org_none', [
      {
        walletId: 'wallet_0000000000000000000000001',
        spec: { direction: 'incoming', windowSeconds: 30 * 86_400 },
        since,
        before: null,
      },
    ]);
    const plans = await db.store.transaction(async (tx) => {
      // Settled transfers between many wallets that the table's statistics do not know of, as in a busy
      // organization's table not analyzed since it was small. Foreign keys and triggers are off for the rows.
      await tx.query('SET LOCAL session_replication_role = replica');
      await tx.query(
        `INSERT INTO transfers (id, organization_id, direction, source_wallet_id, destination, destination_wallet_id,
                                amount_minor, currency, rail, status, ledger_state, created_at, updated_at)
         SELECT 'trf_' || lpad(g::text, 26, '0'), 'org_none', 'outbound', 'wallet_s' || (g % $1::int),
                jsonb_build_object('type', 'wallet', 'wallet', 'wallet_d' || (g % $1::int)), 'wallet_d' || (g % $1::int),
                100, 'KES', 'internal', 'settled', 'posted', now(), now()
           FROM generate_series(1, $2::int) AS g`,
        [UNSEEN_WALLETS, UNSEEN_TRANSFERS],
      );
      const explained: string[] = [];
      for (const statement of [...activity.statements, ...tally.statements]) {
        const rows = await tx.query<Row>(`EXPLAIN ${statement.sql}`, statement.params);
        explained.push(rows.map((row) => Object.values(row)[0]).join('\n'));
      }
      return explained;
    });
    for (const plan of plans) {
      expect(plan).toContain('transfers_destination_idx');
      expect(plan).not.toContain('transfers_status_idx');
    }
  });
});
