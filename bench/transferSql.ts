/**
 * The SQL one `POST /v1/transfers` (wallet to wallet, rail `internal`) makes the database run, written out
 * as one transfer per transaction with no application in between. It was taken from the statements the
 * server issues (logged through a wrapper of the store): the reads before the transaction (API key, source
 * and destination wallet), then the transaction the ledger writer runs for a batch of one (idempotency key
 * lock and look-up, account locks in id order, transfer, journal entry, postings, account sums, two outbox
 * events, the look-up of webhook subscriptions to fan them out to, idempotency record). Differences, all in favour of the database: balances are moved with
 * `sum + amount` instead of values decided in the application, so nothing reads the locked rows back, and
 * there is no funds check.
 *
 * The same text is a pgbench script (`:name` variables, sent as parameters with `-M extended`) and, with
 * `:name` turned into `$n`, the statements of an in-process loop. Like the API's ids, every id is 26
 * characters after its prefix; wallets are `wallet_` + the zero-padded wallet number.
 */

/** Every benchmark transfer moves this much (1.00 KES). */
export const TRANSFER_AMOUNT_MINOR = 100;
export const TRANSFER_AMOUNT_TEXT = '1.00';
export const TRANSFER_CURRENCY = 'KES';
const ID_SUFFIX_LENGTH = 26;
/** The part of a transfer number reserved for the per-client sequence (pgbench and the loop alike). */
export const CLIENT_SEQUENCE_SPAN = 1_000_000_000;

export interface TransferShape {
  /** Number of source wallets; wallets sources..2*sources-1 are the destinations. */
  sources: number;
  /** Concurrent clients; each owns the sources congruent to its number, so distinct transfers never wait. */
  clients: number;
  /** Every transfer leaves wallet 0. */
  hot: boolean;
  /** Send (and store) an Idempotency-Key, as the HTTP run does. */
  idempotency: boolean;
}

/** The wallet number `src` and `dst` of a client's `seq`-th transfer (seq from 1), as the pgbench script computes them. */
export function walletsOf(shape: TransferShape, clientId: number, seq: number): { src: number; dst: number } {
  const perClient = Math.floor(shape.sources / shape.clients);
  if (shape.hot) return { src: 0, dst: shape.sources + ((seq * shape.clients + clientId) % shape.sources) };
  const src = clientId + shape.clients * (seq % perClient);
  return { src, dst: shape.sources + src };
}

const walletId = (variable: string) => `('wallet_' || lpad(:${variable}::text, ${ID_SUFFIX_LENGTH}, '0'))`;
const SRC = walletId('src');
const DST = walletId('dst');
const idOf = (prefix: string, extra = '') =>
  `('${prefix}_' || :tag::text || lpad(:n::text, ${ID_SUFFIX_LENGTH - 4 - extra.length}, '0')${extra})`;
const TRANSFER_ID = idOf('tr');
const ENTRY_ID = idOf('je');
const IDEMPOTENCY_KEY = `('bench-' || :tag::text || '-' || :n::text)`;
const AMOUNT = ':amt::bigint';

/** The transfer as the API presents it: the outbox payload and the stored idempotent response. */
const transferJson = (full: boolean) => `jsonb_build_object(
    ${full ? `'id', ${TRANSFER_ID}, 'object', 'transfer',` : `'transfer_id', ${TRANSFER_ID},`}
    'direction', 'outbound', 'source', ${SRC},
    'destination', jsonb_build_object('type', 'wallet', 'wallet', ${DST}),
    'amount', '${TRANSFER_AMOUNT_TEXT}', 'currency', '${TRANSFER_CURRENCY}', 'rail', 'internal',
    'status', 'settled', 'failure_code', NULL, 'ledger_state', 'posted', 'metadata', '{}'::jsonb
    ${
      full
        ? `, 'status_reason', NULL, 'created_at', now(), 'updated_at', now(), 'processing_at', NULL,
    'settled_at', now(), 'failed_at', NULL, 'canceled_at', NULL, 'returned_at', NULL`
        : ''
    })`;

export interface TransferStatements {
  /** Autocommit reads the API makes before it hands the transfer to the ledger writer. */
  reads: string[];
  /** The statements between BEGIN and COMMIT. */
  transaction: string[];
}

export function transferStatements(shape: TransferShape): TransferStatements {
  const reads = [
    `SELECT id, organization_id, environment, key_hash, display_prefix, scopes, created_at, revoked_at
       FROM api_keys WHERE key_hash = :keyhash::text`,
    ...[SRC, DST].map(
      (wallet) => `SELECT w.id, w.organization_id, w.owner_id, w.currency, w.status, w.metadata, w.created_at,
            w.updated_at, a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted
       FROM wallets w JOIN ledger_accounts a ON a.id = w.id
      WHERE w.organization_id = :org::text AND w.id = ${wallet}`,
    ),
  ];
  const claim = [
    `SELECT pg_try_advisory_xact_lock(hashtextextended('idempotency:' || :org::text || ':' || ${IDEMPOTENCY_KEY}, 0)) AS locked`,
    `SELECT organization_id, idempotency_key, fingerprint, method, path, response_status, response_text, created_at
       FROM idempotency_records WHERE organization_id = :org::text AND idempotency_key = ${IDEMPOTENCY_KEY}`,
  ];
  const write = [
    `SELECT a.id, a.organization_id, a.kind, a.wallet_id, a.rail, a.currency, a.debits_pending, a.debits_posted,
            a.credits_pending, a.credits_posted, a.overdraft_limit_minor, a.created_at, a.updated_at,
            w.status AS wallet_status
       FROM ledger_accounts a LEFT JOIN wallets w ON w.id = a.wallet_id
      WHERE a.id = ANY(ARRAY[${SRC}, ${DST}])
      ORDER BY a.id
        FOR UPDATE OF a`,
    `INSERT INTO transfers (id, organization_id, direction, source_wallet_id, destination, destination_wallet_id,
            amount_minor, currency, rail, network, status, status_reason, failure_code, ledger_state, metadata,
            rail_reference, next_rail_check_at, created_at, updated_at, processing_at, settled_at, failed_at,
            canceled_at, returned_at)
     VALUES (${TRANSFER_ID}, :org::text, 'outbound', ${SRC}, jsonb_build_object('type', 'wallet', 'wallet', ${DST}),
            ${DST}, ${AMOUNT}, '${TRANSFER_CURRENCY}', 'internal', NULL, 'settled', NULL, NULL, 'posted', '{}'::jsonb,
            NULL, NULL, now(), now(), NULL, now(), NULL, NULL, NULL)`,
    `INSERT INTO journal_entries (id, organization_id, transfer_id, kind, hold_entry_id, currency, created_at)
     VALUES (${ENTRY_ID}, :org::text, ${TRANSFER_ID}, 'direct', NULL, '${TRANSFER_CURRENCY}', now())`,
    `INSERT INTO postings (entry_id, line, account_id, side, phase, releases_hold, amount_minor, currency)
     VALUES (${ENTRY_ID}, 1, ${SRC}, 'debit', 'posted', false, ${AMOUNT}, '${TRANSFER_CURRENCY}'),
            (${ENTRY_ID}, 2, ${DST}, 'credit', 'posted', false, ${AMOUNT}, '${TRANSFER_CURRENCY}')`,
    `UPDATE ledger_accounts a
        SET debits_posted = a.debits_posted + v.d, credits_posted = a.credits_posted + v.c, updated_at = now()
       FROM (VALUES (${SRC}, ${AMOUNT}, 0::bigint), (${DST}, 0::bigint, ${AMOUNT})) AS v(id, d, c)
      WHERE a.id = v.id`,
    `INSERT INTO events (id, organization_id, type, resource_id, data, created_at)
     SELECT 'evt_' || :tag::text || lpad(:n::text, ${ID_SUFFIX_LENGTH - 5}, '0') || v.s, :org::text, v.t,
            ${TRANSFER_ID}, ${transferJson(false)}, now()
       FROM (VALUES ('a', 'transfer.created'), ('b', 'transfer.settled')) AS v(s, t)`,
    // The webhook fan-out looks for subscriptions in the same transaction; the benchmark has none.
    `SELECT id, organization_id, events FROM webhook_subscriptions
      WHERE organization_id = ANY(ARRAY[:org::text]) AND status = 'enabled' AND deleted_at IS NULL`,
  ];
  const record = [
    `INSERT INTO idempotency_records (organization_id, idempotency_key, fingerprint, method, path, response_status,
            response_text, created_at)
     VALUES (:org::text, ${IDEMPOTENCY_KEY}, md5(${IDEMPOTENCY_KEY}) || md5(${TRANSFER_ID}), 'POST', '/v1/transfers',
            201, ${transferJson(true)}::text, now())`,
  ];
  return {
    reads,
    transaction: shape.idempotency ? [...claim, ...write, ...record] : write,
  };
}

/** pgbench's `\set` lines that pick `src` and `dst` from `:seq` and `:client_id` as `walletsOf` does. */
export function pgbenchWalletChoice(shape: TransferShape): string[] {
  const perClient = Math.floor(shape.sources / shape.clients);
  return shape.hot
    ? [
        '\\set src 0',
        `\\set dst ${shape.sources} + ((:seq * ${shape.clients} + :client_id) % ${shape.sources})`,
      ]
    : [
        `\\set src :client_id + ${shape.clients} * (:seq % ${perClient})`,
        `\\set dst ${shape.sources} + :src`,
      ];
}

/** The pgbench script: per-client sequence and wallet choice as `\set`, then the statements. */
export function pgbenchScript(shape: TransferShape): string {
  const { reads, transaction } = transferStatements(shape);
  const choose = pgbenchWalletChoice(shape);
  return [
    '\\set seq :seq + 1',
    `\\set n :client_id * ${CLIENT_SEQUENCE_SPAN} + :seq`,
    ...choose,
    ...reads.map((s) => `${s};`),
    'BEGIN;',
    ...transaction.map((s) => `${s};`),
    'COMMIT;',
    '',
  ].join('\n');
}

/** `:name` to `$n`, one parameter per occurrence as pgbench does; `::type` casts are left alone. */
export function toPositional(sql: string): { text: string; names: string[] } {
  const names: string[] = [];
  const text = sql.replace(/(?<![:\w]):([a-z_][a-z0-9_]*)/gi, (_, name: string) => {
    names.push(name);
    return `$${names.length}`;
  });
  return { text, names };
}

/**
 * The benchmark wallets for the raw-SQL runs: 2 * sources wallets of one new customer of the organization,
 * each source holding `fundsMinor` straight in its account sums (no funding entries: the database is
 * thrown away afterwards).
 */
export function seedWalletStatements(organizationId: string, sources: number, fundsMinor: bigint): string[] {
  if (!/^org_[0-9a-z]+$/.test(organizationId))
    throw new Error(`unexpected organization id ${organizationId}`);
  const org = `'${organizationId}'`;
  const customer = `'cus_${'0'.repeat(ID_SUFFIX_LENGTH)}'`;
  const wallets = `SELECT 'wallet_' || lpad(g::text, ${ID_SUFFIX_LENGTH}, '0') AS id, g FROM generate_series(0, ${2 * sources - 1}) AS g`;
  return [
    `INSERT INTO customers (id, organization_id, type, name, kyc_status, created_at, updated_at)
     VALUES (${customer}, ${org}, 'individual', 'Bench Customer', 'verified', now(), now())`,
    `INSERT INTO wallets (id, organization_id, owner_id, currency, status, created_at, updated_at)
     SELECT w.id, ${org}, ${customer}, '${TRANSFER_CURRENCY}', 'active', now(), now() FROM (${wallets}) AS w`,
    `INSERT INTO ledger_accounts (id, organization_id, kind, wallet_id, currency, credits_posted, created_at, updated_at)
     SELECT w.id, ${org}, 'wallet', w.id, '${TRANSFER_CURRENCY}',
            CASE WHEN w.g < ${sources} THEN ${fundsMinor} ELSE 0 END, now(), now()
       FROM (${wallets}) AS w`,
  ];
}
