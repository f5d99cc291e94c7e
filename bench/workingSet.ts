/**
 * The transfer case's working set on PostgreSQL, seeded in bulk with SQL into the server's own schema:
 * thousands of customers and wallets through the API would take minutes of set-up (three requests a
 * source wallet), and the point is the size of the set, not its creation. The rows are the ones the API's
 * create routes write (`insertCustomer`, `insertWallet`: a customer, a wallet and its ledger account, and the
 * wallet's account details where the organization issues them; the routes write no event or evidence
 * record for a creation either). Funding stays a real posting: one sandbox funding through the API credits
 * source 0, and one balanced journal entry from the account it debited (the rail's settlement account)
 * credits every other source, so `ledger verify` holds afterwards. Then the seeded tables are analyzed, as
 * in a database in service.
 *
 * Ids keep the API's layout (prefix and 26 base32 characters); source i is wallet i, its destination
 * wallet sources + i, and both belong to customer i mod customers (or to the one business customer).
 */
import type { Store } from '../src/store/store.ts';
import { TRANSFER_CURRENCY } from './transferSql.ts';

const ID_SUFFIX_LENGTH = 26;

export interface WorkingSet {
  sources: number;
  /** Customers the wallets are spread over; 1 with `business`. */
  customers: number;
  /** One verified business customer owns every wallet. */
  business: boolean;
  /** A prefix that keeps these ids apart from anything else in the schema (lowercase letters). */
  tag: string;
}

const padded = (prefix: string, tag: string, n: string) =>
  `'${prefix}_${tag}' || lpad((${n})::text, ${ID_SUFFIX_LENGTH - tag.length}, '0')`;

/** The wallet ids, in order: sources first, then their destinations. */
export function workingSetWallets(set: WorkingSet): string[] {
  return Array.from(
    { length: 2 * set.sources },
    (_, g) => `wallet_${set.tag}${String(g).padStart(ID_SUFFIX_LENGTH - set.tag.length, '0')}`,
  );
}

/** Customers, wallets and ledger accounts; returns the wallet ids. */
export async function seedWorkingSet(
  store: Store,
  organizationId: string,
  set: WorkingSet,
): Promise<string[]> {
  if (!/^[a-z]{1,6}$/.test(set.tag)) throw new Error(`working set tag must be 1-6 lowercase letters`);
  const customer = (n: string) => padded('cus', set.tag, n);
  const wallet = (n: string) => padded('wallet', set.tag, n);
  const customers = set.business ? 1 : set.customers;
  await store.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO customers (id, organization_id, type, name, kyc_status, metadata, created_at, updated_at)
       SELECT ${customer('g')}, $1, $2, 'Bench Customer ' || g, $3, '{}'::jsonb, now(), now()
         FROM generate_series(0, $4::int - 1) AS g`,
      [
        organizationId,
        set.business ? 'business' : 'individual',
        set.business ? 'verified' : 'unverified',
        customers,
      ],
    );
    await tx.query(
      `INSERT INTO wallets (id, organization_id, owner_id, currency, status, metadata, created_at, updated_at)
       SELECT ${wallet('g')}, $1, ${customer('(g % $2::int)')}, $3, 'active', '{}'::jsonb, now(), now()
         FROM generate_series(0, 2 * $4::int - 1) AS g`,
      [organizationId, customers, TRANSFER_CURRENCY, set.sources],
    );
    await tx.query(
      `INSERT INTO ledger_accounts (id, organization_id, kind, wallet_id, currency, created_at, updated_at)
       SELECT ${wallet('g')}, $1, 'wallet', ${wallet('g')}, $2, now(), now()
         FROM generate_series(0, 2 * $3::int - 1) AS g`,
      [organizationId, TRANSFER_CURRENCY, set.sources],
    );
    // Where the organization issues account details (the sandbox's does), each wallet gets its number under
    // the organization's bank as the create route's hook gives it: 12 digits ending in an ISO 7064 MOD 11-2
    // check digit (a base whose check would be 'X' is skipped, so more bases are tried than wallets).
    await tx.query(
      `INSERT INTO wallet_account_details (wallet_id, organization_id, account_number, bank_code, bank_name, created_at)
       SELECT ${wallet('n.k - 1')}, $1, n.account_number, s.bank_code, s.bank_name, now()
         FROM digital_account_settings s,
              (SELECT row_number() OVER (ORDER BY g) AS k, c.account_number
                 FROM generate_series(0, 2 * $2::int * 11 / 10 + 10) AS g,
                      LATERAL (SELECT b.base || d AS account_number
                                 FROM (SELECT '9' || lpad(g::text, 10, '0') AS base) AS b, generate_series(0, 9) AS d
                                WHERE mkoba_iso7064_mod11_2_valid(b.base || d) LIMIT 1) AS c) AS n
        WHERE s.organization_id = $1 AND n.k <= 2 * $2::int`,
      [organizationId, set.sources],
    );
  });
  return workingSetWallets(set);
}

/**
 * Credits sources 1.. with `fundsMinor` each from the account that source 0's (API) funding debited: one
 * journal entry, its postings, and the account sums, in one transaction.
 */
export async function fundWorkingSet(
  store: Store,
  organizationId: string,
  set: WorkingSet,
  fundsMinor: bigint,
): Promise<void> {
  const [first] = workingSetWallets(set);
  await store.transaction(async (tx) => {
    const [from] = await tx.query<{ account_id: string }>(
      `SELECT p.account_id FROM postings p
         JOIN postings w ON w.entry_id = p.entry_id AND w.account_id = $1 AND w.side = 'credit'
        WHERE p.side = 'debit' LIMIT 1`,
      [first],
    );
    if (!from) throw new Error('source 0 was not funded through the API');
    const entry = `je_${set.tag}${'0'.repeat(ID_SUFFIX_LENGTH - set.tag.length)}`;
    const rest = set.sources - 1;
    const total = fundsMinor * BigInt(rest);
    await tx.query(
      `INSERT INTO journal_entries (id, organization_id, transfer_id, kind, hold_entry_id, currency, created_at)
       VALUES ($1, $2, NULL, 'direct', NULL, $3, now())`,
      [entry, organizationId, TRANSFER_CURRENCY],
    );
    await tx.query(
      `INSERT INTO postings (entry_id, line, account_id, side, phase, releases_hold, amount_minor, currency)
       SELECT $1, 1, $2, 'debit', 'posted', false, $3::bigint, $4
       UNION ALL
       SELECT $1, g + 1, ${padded('wallet', set.tag, 'g')}, 'credit', 'posted', false, $5::bigint, $4
         FROM generate_series(1, $6::int) AS g`,
      [entry, from.account_id, total, TRANSFER_CURRENCY, fundsMinor, rest],
    );
    await tx.query(
      'UPDATE ledger_accounts SET debits_posted = debits_posted + $2::bigint, updated_at = now() WHERE id = $1',
      [from.account_id, total],
    );
    await tx.query(
      `UPDATE ledger_accounts SET credits_posted = credits_posted + $1::bigint, updated_at = now()
        WHERE id IN (SELECT ${padded('wallet', set.tag, 'g')} FROM generate_series(1, $2::int) AS g)`,
      [fundsMinor, rest],
    );
  });
  // Only the tables seeded here: an ANALYZE of the near-empty transfers or journal entries would make every
  // connection plan its foreign-key checks on them as scans of one page, kept while the tables grow.
  await store.exec(
    'ANALYZE customers; ANALYZE wallets; ANALYZE ledger_accounts; ANALYZE wallet_account_details',
  );
}

/** The history runs over the 90 days before the run (the AML windows reach back 30), the newest a minute old. */
const HISTORY_SPAN_MS = 90 * 86_400_000;
const HISTORY_END_BEFORE_MS = 60_000;
const ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** Each history transfer moves 1.00, as the measured ones do. */
const HISTORY_AMOUNT_MINOR = 100;

/**
 * `rows` settled wallet-to-wallet transfers already in the ledger, spread evenly over the last 90 days:
 * transfer i moves from source i mod N to its destination, with its journal entry and two postings, and the
 * account sums moved to match (so `ledger verify` holds). Ids have the API's layout (time first), so the
 * queries that page or bound by id see them where the API's own would be. No events: nothing reads them
 * on the way in.
 */
export async function seedHistory(
  store: Store,
  organizationId: string,
  set: WorkingSet,
  rows: number,
): Promise<void> {
  const timeChars = Array.from(
    { length: 10 },
    (_, i) => `substr('${ID_ALPHABET}', ((ms >> ${5 * (9 - i)}) & 31)::int + 1, 1)`,
  ).join(' || ');
  const endMs = Date.now() - HISTORY_END_BEFORE_MS;
  const stepMs = Math.floor(HISTORY_SPAN_MS / Math.max(1, rows));
  const wallet = (n: string) => padded('wallet', set.tag, n);
  await store.transaction(async (tx) => {
    await tx.query(`CREATE FUNCTION pg_temp.history_id(prefix text, ms bigint, seed text) RETURNS text
      LANGUAGE sql IMMUTABLE AS $$ SELECT prefix || '_' || ${timeChars} || substr(md5(seed), 1, 16) $$`);
    const source = `(SELECT g, ${wallet('g % $2::int')} AS src, ${wallet('$2::int + g % $2::int')} AS dst,
        (${endMs}::bigint - ($3::int - g)::bigint * ${stepMs}) AS ms FROM generate_series(1, $3::int) AS g) AS h`;
    await tx.query(
      `INSERT INTO transfers (id, organization_id, direction, source_wallet_id, destination, destination_wallet_id,
              amount_minor, currency, rail, status, ledger_state, metadata, created_at, updated_at, settled_at)
       SELECT pg_temp.history_id('tr', h.ms, 't' || h.g), $1, 'outbound', h.src,
              jsonb_build_object('type', 'wallet', 'wallet', h.dst), h.dst, ${HISTORY_AMOUNT_MINOR}, $4, 'internal',
              'settled', 'posted', '{}'::jsonb, to_timestamp(h.ms / 1000.0), to_timestamp(h.ms / 1000.0),
              to_timestamp(h.ms / 1000.0)
         FROM ${source}`,
      [organizationId, set.sources, rows, TRANSFER_CURRENCY],
    );
    await tx.query(
      `INSERT INTO journal_entries (id, organization_id, transfer_id, kind, hold_entry_id, currency, created_at)
       SELECT pg_temp.history_id('je', h.ms, 'e' || h.g), $1, pg_temp.history_id('tr', h.ms, 't' || h.g),
              'direct', NULL, $4, to_timestamp(h.ms / 1000.0)
         FROM ${source}`,
      [organizationId, set.sources, rows, TRANSFER_CURRENCY],
    );
    await tx.query(
      `INSERT INTO postings (entry_id, line, account_id, side, phase, releases_hold, amount_minor, currency)
       SELECT pg_temp.history_id('je', h.ms, 'e' || h.g), l.line, CASE l.line WHEN 1 THEN h.src ELSE h.dst END,
              CASE l.line WHEN 1 THEN 'debit' ELSE 'credit' END, 'posted', false, ${HISTORY_AMOUNT_MINOR}, $1
         FROM ${source}, (VALUES (1), (2)) AS l(line)`,
      [TRANSFER_CURRENCY, set.sources, rows],
    );
    await tx.query(
      `UPDATE ledger_accounts a SET debits_posted = a.debits_posted + c.n * ${HISTORY_AMOUNT_MINOR}, updated_at = now()
         FROM (SELECT ${wallet('g % $1::int')} AS id, count(*) AS n FROM generate_series(1, $2::int) AS g GROUP BY 1) AS c
        WHERE a.id = c.id`,
      [set.sources, rows],
    );
    await tx.query(
      `UPDATE ledger_accounts a SET credits_posted = a.credits_posted + c.n * ${HISTORY_AMOUNT_MINOR}, updated_at = now()
         FROM (SELECT ${wallet('$1::int + g % $1::int')} AS id, count(*) AS n FROM generate_series(1, $2::int) AS g
                GROUP BY 1) AS c
        WHERE a.id = c.id`,
      [set.sources, rows],
    );
  });
  await store.exec('ANALYZE transfers; ANALYZE journal_entries; ANALYZE postings');
}
