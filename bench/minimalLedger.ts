/**
 * The minimal-ledger baseline of the transfer case: the smallest SQL ledger an integrator would write, in a
 * schema of its own, driven by pgbench. One transaction per transfer: insert the transfer, its two entries,
 * update the two balances (no idempotency, no events, no controls). It picks the same source and
 * destination wallets as the other SQL runs (`walletsOf` in transferSql.ts), so the API's rate divided by
 * this one is what an integrator comparing ledgers would see.
 */
import { pgbenchWalletChoice, type TransferShape } from './transferSql.ts';

/** The schema, in the search_path's schema: accounts numbered as the benchmark's wallets. */
export function minimalLedgerSchema(sources: number, fundsMinor: bigint): string[] {
  return [
    `CREATE TABLE ml_accounts (id bigint PRIMARY KEY, balance bigint NOT NULL,
       updated_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE ml_transfers (id bigserial PRIMARY KEY,
       source_id bigint NOT NULL REFERENCES ml_accounts, destination_id bigint NOT NULL REFERENCES ml_accounts,
       amount bigint NOT NULL CHECK (amount > 0), created_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE ml_entries (id bigserial PRIMARY KEY, transfer_id bigint NOT NULL REFERENCES ml_transfers,
       account_id bigint NOT NULL REFERENCES ml_accounts, amount bigint NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now())`,
    `INSERT INTO ml_accounts (id, balance)
     SELECT g, CASE WHEN g < ${sources} THEN ${fundsMinor} ELSE 0 END FROM generate_series(0, ${2 * sources - 1}) AS g`,
    'ANALYZE ml_accounts',
  ];
}

/** The pgbench script: the wallet choice of the other SQL runs, then one transaction of four statements. */
export function minimalLedgerScript(shape: TransferShape): string {
  return [
    '\\set seq :seq + 1',
    ...pgbenchWalletChoice(shape),
    'BEGIN;',
    'INSERT INTO ml_transfers (source_id, destination_id, amount) VALUES (:src, :dst, :amt) RETURNING id AS tid \\gset',
    'INSERT INTO ml_entries (transfer_id, account_id, amount) VALUES (:tid, :src, -(:amt::bigint)), (:tid, :dst, :amt);',
    // One statement, rows locked in id order (the source is always the lower id): no deadlock on a hot source.
    `UPDATE ml_accounts SET balance = balance + CASE WHEN id = :src THEN -:amt::bigint ELSE :amt::bigint END,
       updated_at = now() WHERE id IN (:src, :dst);`,
    'COMMIT;',
    '',
  ].join('\n');
}
