/**
 * The data set of the explain case: generated inside PostgreSQL with INSERT … SELECT generate_series, so a
 * million rows per big table take a minute or two, not an hour of API calls. Ids have the real layout
 * (prefix, 10 base32 characters of milliseconds, 16 of randomness) and created_at is the id's millisecond.
 *
 * Five organizations share the rows by `i % 100`: org 0 holds 60 %, orgs 1–3 13 % each, org 4 1 %, so the
 * per-organization conditions select something. Wallet `w` belongs to the organization of `w % 100`, so a
 * transfer picks wallets of its own organization by keeping its residue. Wallet 0 (org 0) is a hot source.
 *
 * SQL lives here (and in bench/transferSql.ts) only because a data generator is SQL by definition; the
 * queries measured are the repositories' own, from src/store.
 */
import type { Queryable, Store } from '../src/store/store.ts';

export const EXPLAIN_ORGANIZATIONS = 5;
/** The history spans 90 days, ending a minute before the run starts. */
export const HISTORY_SPAN_MS = 90 * 86_400_000;
/** Of all deliveries: pending and not yet due; succeeded; exhausted; the rest pending and due (per mille). */
const DELIVERY_NOT_DUE_PER_MILLE = 600;
const DELIVERY_SUCCEEDED_PER_MILLE = 975;
const DELIVERY_EXHAUSTED_PER_MILLE = 985;
/** The many-subscriptions scenario: subscriptions of one more organization, each with a small backlog. */
export const MANY_SUBSCRIPTIONS = 5_000;
const MANY_DELIVERIES_EACH = 20;
const MANY_DUE_EACH = 2;

export interface DataShape {
  /** Transfers, events and journal entries each (postings are twice as many); deliveries about as many. */
  rows: number;
  wallets: number;
  customers: number;
  startMs: number;
  endMs: number;
}

export function dataShape(rows: number, endMs: number): DataShape {
  // Multiples of 100 (wallets and half as many customers) keep each in the organization of its residue.
  const wallets = Math.max(1_000, Math.round(rows / 10 / 200) * 200);
  return { rows, wallets, customers: wallets / 2, startMs: endMs - HISTORY_SPAN_MS, endMs };
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** The SQL helper functions, created in the bench schema (dropped with it). */
function helperFunctions(shape: DataShape): string {
  const timeChars = Array.from(
    { length: 10 },
    (_, i) => `substr('${ALPHABET}', ((ms >> ${5 * (9 - i)}) & 31)::int + 1, 1)`,
  ).join(' || ');
  const walletStepMs = Math.floor((30 * 86_400_000) / shape.wallets);
  return `
    CREATE FUNCTION bench_id(prefix text, ms bigint, seed text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
      SELECT prefix || '_' || ${timeChars} || substr(md5(seed), 1, 16)
    $$;
    CREATE FUNCTION bench_ts(ms bigint) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $$
      SELECT to_timestamp(ms / 1000.0)
    $$;
    CREATE FUNCTION bench_hash(i bigint, salt int) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
      SELECT (hashint8(i * 7 + salt) & 2147483647)::bigint
    $$;
    CREATE FUNCTION bench_org(i bigint) RETURNS int LANGUAGE sql IMMUTABLE AS $$
      SELECT CASE WHEN i % 100 < 60 THEN 0 WHEN i % 100 < 73 THEN 1 WHEN i % 100 < 86 THEN 2
                  WHEN i % 100 < 99 THEN 3 ELSE 4 END
    $$;
    CREATE FUNCTION bench_org_id(o int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
      SELECT bench_id('org', ${shape.startMs - 40 * 86_400_000}, 'org' || o)
    $$;
    CREATE FUNCTION bench_wallet_ms(w bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
      SELECT ${shape.startMs - 30 * 86_400_000} + w * ${walletStepMs}
    $$;
    CREATE FUNCTION bench_wallet_id(w bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
      SELECT bench_id('wallet', bench_wallet_ms(w), 'w' || w)
    $$;
    CREATE FUNCTION bench_sub_id(name text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
      SELECT bench_id('whsub', ${shape.startMs - 35 * 86_400_000}, 'sub' || name)
    $$;`;
}

export interface GeneratedIds {
  organizations: string[];
  hotWalletId: string;
  /** A wallet of org 0 with an ordinary number of transfers. */
  walletId: string;
}

/**
 * Creates every row in one transaction, then VACUUM ANALYZE; `step` reports each statement's duration. The
 * migrations' plain indexes are dropped for the load and built again from their own definitions after it
 * (a sorted build takes a fraction of the time of a million random insertions), and with a superuser the
 * foreign-key triggers are off for the load (the generator keeps every reference valid).
 */
export async function generateData(
  store: Store,
  shape: DataShape,
  step: (name: string, ms: number) => void,
): Promise<GeneratedIds> {
  const ids = await store.transaction(async (tx) => {
    const [role] = await tx.query<{ superuser: boolean }>(
      'SELECT rolsuper AS superuser FROM pg_roles WHERE rolname = current_user',
    );
    if (role?.superuser) await tx.exec('SET LOCAL session_replication_role = replica');
    await tx.exec("SET LOCAL maintenance_work_mem = '128MB'");
    const indexes = await tx.query<{ name: string; definition: string }>(
      `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
        WHERE schemaname = current_schema()
          AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE connamespace = current_schema()::regnamespace)`,
    );
    for (const index of indexes) await tx.exec(`DROP INDEX ${index.name}`);
    const generated = await insertRows(tx, shape, step);
    const started = performance.now();
    for (const index of indexes) await tx.exec(index.definition);
    step(`${indexes.length} indexes built`, performance.now() - started);
    return generated;
  });
  const started = performance.now();
  await store.exec('VACUUM ANALYZE');
  step('vacuum analyze', performance.now() - started);
  return ids;
}

async function insertRows(
  db: Queryable,
  shape: DataShape,
  step: (name: string, ms: number) => void,
): Promise<GeneratedIds> {
  const n = shape.rows;
  const perWalletResidue = shape.wallets / 100;
  const timed = async (name: string, sql: string) => {
    const started = performance.now();
    await db.exec(sql);
    step(name, performance.now() - started);
  };
  await timed('helper functions', helperFunctions(shape));
  await timed(
    'organizations',
    `INSERT INTO organizations (id, name, created_at)
       SELECT bench_org_id(o), 'Bench org ' || o, bench_ts(${shape.startMs - 40 * 86_400_000})
         FROM generate_series(0, ${EXPLAIN_ORGANIZATIONS - 1}) AS o`,
  );
  await timed(
    'customers',
    `INSERT INTO customers (id, organization_id, type, name, kyc_status, created_at, updated_at)
       SELECT bench_id('cus', ms, 'c' || c), bench_org_id(bench_org(c)), 'individual', 'Customer ' || c, 'verified',
              bench_ts(ms), bench_ts(ms)
         FROM generate_series(0, ${shape.customers - 1}) AS c, LATERAL (SELECT bench_wallet_ms(c) - 1000 AS ms) AS t`,
  );
  await timed(
    'wallets',
    `INSERT INTO wallets (id, organization_id, owner_id, currency, status, created_at, updated_at)
       SELECT bench_wallet_id(w), bench_org_id(bench_org(w)),
              bench_id('cus', bench_wallet_ms(w % ${shape.customers}) - 1000, 'c' || (w % ${shape.customers})),
              'KES', 'active', bench_ts(bench_wallet_ms(w)), bench_ts(bench_wallet_ms(w))
         FROM generate_series(0, ${shape.wallets - 1}) AS w`,
  );
  await timed(
    'ledger accounts',
    // wallet_status is written here: the trigger that copies it is off during the load, with the others.
    `INSERT INTO ledger_accounts (id, organization_id, kind, wallet_id, wallet_status, currency, debits_posted, credits_posted, created_at, updated_at)
       SELECT id, organization_id, 'wallet', id, status, currency, 0, 0, created_at, updated_at FROM wallets;
     INSERT INTO ledger_accounts (id, organization_id, kind, rail, currency, created_at, updated_at)
       SELECT bench_id('acct', ${shape.startMs - 40 * 86_400_000}, 'acct' || o || kind), bench_org_id(o), kind,
              'mpesa', 'KES', bench_ts(${shape.startMs - 40 * 86_400_000}), bench_ts(${shape.startMs - 40 * 86_400_000})
         FROM generate_series(0, ${EXPLAIN_ORGANIZATIONS - 1}) AS o, unnest(ARRAY['rail_settlement', 'rail_clearing']) AS kind`,
  );
  // One plan row per transfer: its time, organization, wallets and status; events, entries and deliveries
  // follow from it.
  await timed(
    'plan of the history',
    `CREATE TABLE bench_plan AS
       SELECT i, ms, bench_org(i) AS org, src,
              CASE WHEN dst0 = src THEN ((dst0 / 100 + 1) % ${perWalletResidue}) * 100 + i % 100 ELSE dst0 END AS dst,
              CASE WHEN h < 900 THEN 'settled' WHEN h < 940 THEN 'failed' WHEN h < 960 THEN 'pending'
                   WHEN h < 975 THEN 'processing' WHEN h < 985 THEN 'canceled' WHEN h < 995 THEN 'returned'
                   ELSE 'pending_approval' END AS status
         FROM (
           SELECT i, ${shape.startMs} + i * ${HISTORY_SPAN_MS}::bigint / ${n} AS ms,
                  CASE WHEN i % 100 IN (0, 20, 40) THEN 0
                       ELSE (bench_hash(i, 1) % ${perWalletResidue}) * 100 + i % 100 END AS src,
                  (bench_hash(i, 2) % ${perWalletResidue}) * 100 + i % 100 AS dst0,
                  bench_hash(i, 3) % 1000 AS h
             FROM generate_series(0, ${n - 1}) AS i
         ) AS p`,
  );
  await timed(
    'transfers',
    `INSERT INTO transfers (id, organization_id, direction, source_wallet_id, destination, destination_wallet_id,
                            amount_minor, currency, rail, status, ledger_state, metadata, next_rail_check_at,
                            created_at, updated_at, settled_at, failed_at, canceled_at)
       SELECT bench_id('tr', ms, 'tr' || i), bench_org_id(org), 'outbound', bench_wallet_id(src),
              jsonb_build_object('type', 'wallet', 'wallet', bench_wallet_id(dst)), bench_wallet_id(dst),
              100 + i % 10000, 'KES', 'internal', status,
              CASE WHEN status IN ('settled', 'returned') THEN 'posted'
                   WHEN status IN ('failed', 'canceled') THEN 'voided' ELSE 'pending' END,
              '{}', CASE WHEN status IN ('pending', 'processing') THEN bench_ts(${shape.endMs} + 3600000) END,
              bench_ts(ms), bench_ts(ms),
              CASE WHEN status IN ('settled', 'returned') THEN bench_ts(ms) END,
              CASE WHEN status = 'failed' THEN bench_ts(ms + 1000) END,
              CASE WHEN status = 'canceled' THEN bench_ts(ms + 1000) END
         FROM bench_plan`,
  );
  await timed(
    'journal entries',
    `INSERT INTO journal_entries (id, organization_id, transfer_id, kind, hold_entry_id, currency, created_at)
       SELECT bench_id('je', ms, 'je' || i), bench_org_id(org), bench_id('tr', ms, 'tr' || i),
              CASE WHEN status IN ('settled', 'returned') THEN 'direct' ELSE 'hold' END, NULL, 'KES', bench_ts(ms)
         FROM bench_plan;
     INSERT INTO journal_entries (id, organization_id, transfer_id, kind, hold_entry_id, currency, created_at)
       SELECT bench_id('je', ms + 1000, 'jev' || i), bench_org_id(org), bench_id('tr', ms, 'tr' || i), 'void',
              bench_id('je', ms, 'je' || i), 'KES', bench_ts(ms + 1000)
         FROM bench_plan WHERE status IN ('failed', 'canceled')`,
  );
  await timed(
    'postings',
    `INSERT INTO postings (entry_id, line, account_id, side, phase, releases_hold, amount_minor, currency)
       SELECT bench_id('je', ms, 'je' || i), line, bench_wallet_id(CASE line WHEN 1 THEN src ELSE dst END),
              CASE line WHEN 1 THEN 'debit' ELSE 'credit' END,
              CASE WHEN status IN ('settled', 'returned') THEN 'posted' ELSE 'pending' END, false, 100 + i % 10000, 'KES'
         FROM bench_plan, generate_series(1, 2) AS line`,
  );
  await timed(
    'events',
    `INSERT INTO events (id, organization_id, type, resource_id, data, created_at)
       SELECT bench_id('evt', ms, 'evt' || i), bench_org_id(org),
              CASE status WHEN 'settled' THEN 'transfer.settled' WHEN 'failed' THEN 'transfer.failed'
                          WHEN 'canceled' THEN 'transfer.canceled' WHEN 'returned' THEN 'transfer.returned'
                          ELSE 'transfer.created' END,
              bench_id('tr', ms, 'tr' || i), jsonb_build_object('id', bench_id('tr', ms, 'tr' || i), 'status', status),
              bench_ts(ms)
         FROM bench_plan`,
  );
  // Org 0 has subscriptions a, b, c (enabled) and d (disabled, its backlog must be skipped); the others one.
  await timed(
    'webhook subscriptions',
    `INSERT INTO webhook_subscriptions (id, organization_id, url, events, payload_format, status, created_at, updated_at)
       SELECT bench_sub_id(name), bench_org_id(o), 'https://hooks.example.com/' || name, ARRAY['*'], 'snake_case',
              CASE name WHEN 'd' THEN 'disabled' ELSE 'enabled' END,
              bench_ts(${shape.startMs - 35 * 86_400_000}), bench_ts(${shape.startMs - 35 * 86_400_000})
         FROM (VALUES (0, 'a'), (0, 'b'), (0, 'c'), (0, 'd'), (1, 'o1'), (2, 'o2'), (3, 'o3'), (4, 'o4')) AS s(o, name)`,
  );
  await timed(
    'webhook deliveries',
    `INSERT INTO webhook_deliveries (id, organization_id, event_id, subscription_id, status, attempts, next_attempt_at,
                                     succeeded_at, created_at)
       SELECT bench_id('whdel', ms, 'del' || i), bench_org_id(org), bench_id('evt', ms, 'evt' || i),
              bench_sub_id(CASE WHEN org = 0 THEN (ARRAY['a', 'b', 'c', 'd'])[(i / 100) % 4 + 1] ELSE 'o' || org END),
              CASE WHEN h < ${DELIVERY_NOT_DUE_PER_MILLE} THEN 'pending'
                   WHEN h < ${DELIVERY_SUCCEEDED_PER_MILLE} THEN 'succeeded'
                   WHEN h < ${DELIVERY_EXHAUSTED_PER_MILLE} THEN 'exhausted' ELSE 'pending' END,
              CASE WHEN h < ${DELIVERY_NOT_DUE_PER_MILLE} THEN 2 ELSE 1 END,
              CASE WHEN h < ${DELIVERY_NOT_DUE_PER_MILLE} THEN bench_ts(${shape.endMs} + 60000 + h * 60000)
                   ELSE bench_ts(ms + 5000) END,
              CASE WHEN h >= ${DELIVERY_NOT_DUE_PER_MILLE} AND h < ${DELIVERY_SUCCEEDED_PER_MILLE} THEN bench_ts(ms + 1000) END,
              bench_ts(ms)
         FROM (SELECT i, ms, org, bench_hash(i, 4) % 1000 AS h FROM bench_plan) AS p`,
  );
  // In flight: two live leases on a (it may take two more), and three leases on b that ran out.
  await timed(
    'leases',
    `UPDATE webhook_deliveries SET status = 'delivering', attempts = attempts + 1,
            lease_expires_at = bench_ts(${shape.endMs} + 600000)
      WHERE id IN (SELECT id FROM webhook_deliveries WHERE subscription_id = bench_sub_id('a') AND status = 'pending'
                      AND next_attempt_at < bench_ts(${shape.endMs}) ORDER BY next_attempt_at DESC LIMIT 2);
     UPDATE webhook_deliveries SET status = 'delivering', attempts = attempts + 1,
            lease_expires_at = bench_ts(${shape.endMs} - 600000)
      WHERE id IN (SELECT id FROM webhook_deliveries WHERE subscription_id = bench_sub_id('b') AND status = 'pending'
                      AND next_attempt_at < bench_ts(${shape.endMs}) ORDER BY next_attempt_at DESC LIMIT 3)`,
  );
  await timed('drop the plan', 'DROP TABLE bench_plan');
  const [ids] = await db.query<{ hot: string; wallet: string }>(
    'SELECT bench_wallet_id(0) AS hot, bench_wallet_id(100) AS wallet',
  );
  const organizations = await db.query<{ id: string }>(
    `SELECT bench_org_id(o) AS id FROM generate_series(0, ${EXPLAIN_ORGANIZATIONS - 1}) AS o`,
  );
  if (!ids) throw new Error('the generated ids could not be read back');
  return { organizations: organizations.map((o) => o.id), hotWalletId: ids.hot, walletId: ids.wallet };
}

/**
 * One more organization with MANY_SUBSCRIPTIONS enabled subscriptions, each with MANY_DELIVERIES_EACH
 * deliveries of which MANY_DUE_EACH are due: the claim must stay bounded with thousands of small backlogs.
 */
export async function addManySubscriptions(db: Queryable, shape: DataShape): Promise<void> {
  const org = `bench_org_id(${EXPLAIN_ORGANIZATIONS})`;
  const at = shape.endMs - 3_600_000;
  await db.exec(
    `INSERT INTO organizations (id, name, created_at) VALUES (${org}, 'Bench org many', bench_ts(${at}));
     INSERT INTO events (id, organization_id, type, resource_id, data, created_at)
       SELECT bench_id('evt', ${at} + k, 'many' || k), ${org}, 'transfer.created', NULL, '{}', bench_ts(${at} + k)
         FROM generate_series(0, ${MANY_DELIVERIES_EACH - 1}) AS k;
     INSERT INTO webhook_subscriptions (id, organization_id, url, events, payload_format, status, created_at, updated_at)
       SELECT bench_sub_id('many' || j), ${org}, 'https://hooks.example.com/many/' || j, ARRAY['*'], 'snake_case',
              'enabled', bench_ts(${at}), bench_ts(${at})
         FROM generate_series(0, ${MANY_SUBSCRIPTIONS - 1}) AS j;
     INSERT INTO webhook_deliveries (id, organization_id, event_id, subscription_id, status, next_attempt_at, created_at)
       SELECT bench_id('whdel', ${at} + k, 'many' || j || '-' || k), ${org}, bench_id('evt', ${at} + k, 'many' || k),
              bench_sub_id('many' || j), 'pending',
              CASE WHEN k < ${MANY_DUE_EACH} THEN bench_ts(${at} + j) ELSE bench_ts(${shape.endMs} + 3600000 + k) END,
              bench_ts(${at} + k)
         FROM generate_series(0, ${MANY_SUBSCRIPTIONS - 1}) AS j, generate_series(0, ${MANY_DELIVERIES_EACH - 1}) AS k;
     ANALYZE webhook_subscriptions;
     ANALYZE webhook_deliveries;
     ANALYZE events;`,
  );
}
