/**
 * A wallet's balances as of an instant, read from the ledger.
 *
 * A wallet's account (same id as the wallet) keeps running sums that are current at all times; entries are
 * append-only and stamped with `created_at`. So a past balance is the current one less what entries created
 * at or after the instant moved, and only the account's postings since are read, index-only from
 * postings_account_entry_idx (which carries each posting's side, phase and amount), with the entries' own
 * `created_at` read only for the two hours of ids around the instant (entryIdWindow).
 */
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Queryable } from '../store.ts';
import { idBoundsOfCreated, toBigInt } from './rows.ts';

/**
 * The ids that may belong to entries created around an instant: an entry's id carries the millisecond it was
 * made, within ID_TIME_SKEW_MS_MAX of its `created_at` (rows.ts), so every entry with an id below `lo` was
 * created before the instant and every one above `hi` at or after it. Only the entries between (two hours of
 * them) need their `created_at` read. `lo` '' and `hi` past every id when a bound would include them all.
 */
export function entryIdWindow(at: Date): { lo: string; hi: string } {
  const bounds = idBoundsOfCreated(ID_PREFIXES.journalEntry, { createdGte: at, createdLte: at });
  return { lo: bounds.idGte ?? '', hi: bounds.idLte ?? `${ID_PREFIXES.journalEntry}_~` };
}

/**
 * SQL for what the account's entries created at or after an instant moved, summed by `expression` over
 * their postings `p`: the postings above the instant's id window straight from the covering index
 * postings_account_entry_idx (no entry read), plus those inside it whose entry's `created_at` says so.
 * `$1` is the account; `at`, `lo` and `hi` name the instant's parameters.
 */
export function sinceSql(expression: string, filter: string, at: string, lo: string, hi: string): string {
  return `((SELECT coalesce(sum(${expression}), 0) FROM postings p
             WHERE p.account_id = $1 AND ${filter} AND p.entry_id > ${hi})
         + (SELECT coalesce(sum(${expression}), 0) FROM postings p JOIN journal_entries e ON e.id = p.entry_id
             WHERE p.account_id = $1 AND ${filter} AND p.entry_id >= ${lo} AND p.entry_id <= ${hi}
               AND e.created_at >= ${at}))`;
}

export const POSTED_NET = "CASE WHEN p.side = 'credit' THEN p.amount_minor ELSE -p.amount_minor END";

/** What a posting did to the held sum (debits pending): a hold adds, its release or its posting takes off. */
export const PENDING_DELTA = `CASE WHEN p.phase = 'pending' THEN p.amount_minor
                            WHEN p.phase = 'voided' OR p.releases_hold THEN -p.amount_minor ELSE 0 END`;

/**
 * A wallet account's posted and held balance as of `asOf`: entries created strictly before it count. One
 * statement, so the current sums and the entries since are one snapshot. Undefined for no such account.
 */
export async function walletBalanceAsOf(
  db: Queryable,
  walletId: string,
  asOf: Date,
): Promise<{ currentMinor: bigint; pendingMinor: bigint } | undefined> {
  const { lo, hi } = entryIdWindow(asOf);
  const [row] = await db.query(
    `SELECT (a.credits_posted - a.debits_posted - ${sinceSql(POSTED_NET, "p.phase = 'posted'", '$2', '$3', '$4')})::text AS current_minor,
            (a.debits_pending - ${sinceSql(PENDING_DELTA, "p.side = 'debit'", '$2', '$3', '$4')})::text AS pending_minor
       FROM ledger_accounts a
      WHERE a.id = $1 AND a.kind = 'wallet'`,
    [walletId, asOf, lo, hi],
  );
  return (
    row && {
      currentMinor: toBigInt(row.current_minor),
      pendingMinor: toBigInt(row.pending_minor),
    }
  );
}
