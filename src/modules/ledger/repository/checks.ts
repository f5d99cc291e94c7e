/** Queries that look for broken ledger invariants; each returns the offending rows (none when healthy). */
import type { Queryable } from '../../../store/store.ts';

/** Entries whose postings do not balance per currency and phase. */
export async function unbalancedEntries(
  db: Queryable,
): Promise<{ entryId: string; currency: string; net: string }[]> {
  const rows = await db.query(
    `SELECT entry_id, currency, SUM(CASE side WHEN 'debit' THEN amount_minor ELSE -amount_minor END)::text AS net
       FROM postings
      GROUP BY entry_id, currency, phase, releases_hold
     HAVING SUM(CASE side WHEN 'debit' THEN amount_minor ELSE -amount_minor END) <> 0`,
  );
  return rows.map((r) => ({ entryId: String(r.entry_id), currency: String(r.currency), net: String(r.net) }));
}

/** Accounts whose stored sums differ from a replay of their postings. */
export async function accountsDifferingFromReplay(
  db: Queryable,
): Promise<{ accountId: string; stored: string; replayed: string }[]> {
  const rows = await db.query(
    `WITH replay AS (
       SELECT account_id,
         SUM(CASE WHEN side = 'debit' AND phase = 'pending' THEN amount_minor
                  WHEN side = 'debit' AND (phase = 'voided' OR (phase = 'posted' AND releases_hold)) THEN -amount_minor
                  ELSE 0 END) AS debits_pending,
         SUM(CASE WHEN side = 'debit' AND phase = 'posted' THEN amount_minor ELSE 0 END) AS debits_posted,
         SUM(CASE WHEN side = 'credit' AND phase = 'pending' THEN amount_minor
                  WHEN side = 'credit' AND (phase = 'voided' OR (phase = 'posted' AND releases_hold)) THEN -amount_minor
                  ELSE 0 END) AS credits_pending,
         SUM(CASE WHEN side = 'credit' AND phase = 'posted' THEN amount_minor ELSE 0 END) AS credits_posted
       FROM postings GROUP BY account_id
     )
     SELECT a.id,
            concat_ws('/', a.debits_pending, a.debits_posted, a.credits_pending, a.credits_posted) AS stored,
            concat_ws('/', COALESCE(r.debits_pending, 0), COALESCE(r.debits_posted, 0),
                           COALESCE(r.credits_pending, 0), COALESCE(r.credits_posted, 0)) AS replayed
       FROM ledger_accounts a LEFT JOIN replay r ON r.account_id = a.id
      WHERE a.debits_pending <> COALESCE(r.debits_pending, 0) OR a.debits_posted <> COALESCE(r.debits_posted, 0)
         OR a.credits_pending <> COALESCE(r.credits_pending, 0) OR a.credits_posted <> COALESCE(r.credits_posted, 0)`,
  );
  return rows.map((r) => ({
    accountId: String(r.id),
    stored: String(r.stored),
    replayed: String(r.replayed),
  }));
}

/** Wallets whose available balance is below zero (no product allows an overdraft yet). */
export async function overdrawnWallets(db: Queryable): Promise<{ walletId: string; available: string }[]> {
  const rows = await db.query(
    `SELECT id, (credits_posted - debits_posted - debits_pending)::text AS available FROM ledger_accounts
      WHERE kind = 'wallet' AND credits_posted - debits_posted - debits_pending < 0`,
  );
  return rows.map((r) => ({ walletId: String(r.id), available: String(r.available) }));
}

/** Transfers in a final status that still have a hold nobody posted or voided. */
export async function terminalTransfersWithOpenHolds(
  db: Queryable,
): Promise<{ transferId: string; status: string }[]> {
  const rows = await db.query(
    `SELECT t.id, t.status FROM transfers t JOIN journal_entries h ON h.transfer_id = t.id AND h.kind = 'hold'
      WHERE t.status IN ('settled', 'failed', 'canceled', 'returned', 'rejected', 'expired')
        AND NOT EXISTS (SELECT 1 FROM journal_entries r WHERE r.hold_entry_id = h.id)`,
  );
  return rows.map((r) => ({ transferId: String(r.id), status: String(r.status) }));
}

/** Holds released more than once. */
export async function holdsReleasedTwice(
  db: Queryable,
): Promise<{ holdEntryId: string; releases: number }[]> {
  const rows = await db.query(
    `SELECT hold_entry_id, COUNT(*)::int AS releases FROM journal_entries
      WHERE hold_entry_id IS NOT NULL GROUP BY hold_entry_id HAVING COUNT(*) > 1`,
  );
  return rows.map((r) => ({ holdEntryId: String(r.hold_entry_id), releases: Number(r.releases) }));
}

/**
 * Transfers whose first entry (their hold, or the direct entry of one final at once) does not carry what the
 * transfer says: the paying wallet debited amount + fee, and the fee credited to a fee income account.
 */
export async function transfersWithUnpostedFees(
  db: Queryable,
): Promise<{ transferId: string; expected: string; found: string }[]> {
  const rows = await db.query(
    `WITH first_entries AS (
       SELECT e.transfer_id,
              SUM(CASE WHEN p.side = 'debit' AND p.account_id = t.source_wallet_id THEN p.amount_minor ELSE 0 END)
                AS debited,
              SUM(CASE WHEN p.side = 'credit' AND a.kind = 'fee_income' THEN p.amount_minor ELSE 0 END) AS fee
         FROM transfers t
         JOIN journal_entries e ON e.transfer_id = t.id AND e.kind IN ('hold', 'direct')
         JOIN postings p ON p.entry_id = e.id
         JOIN ledger_accounts a ON a.id = p.account_id
        WHERE t.direction = 'outbound'
        GROUP BY e.transfer_id
     )
     SELECT t.id, concat_ws('/', t.amount_minor + t.fee_minor, t.fee_minor) AS expected,
            concat_ws('/', f.debited, f.fee) AS found
       FROM transfers t JOIN first_entries f ON f.transfer_id = t.id
      WHERE f.debited <> t.amount_minor + t.fee_minor OR f.fee <> t.fee_minor`,
  );
  return rows.map((r) => ({
    transferId: String(r.id),
    expected: String(r.expected),
    found: String(r.found),
  }));
}

/**
 * Lending accounts that disagree with the loans: per organization and currency, the loan receivable's debit
 * balance must be the principal its active loans still owe, and each income account's credit balance what
 * the loans' repayments allocated to it (interest, fee, penalty).
 */
export async function loanAccountsDifferingFromLoans(
  db: Queryable,
): Promise<{ organizationId: string; currency: string; kind: string; ledger: string; loans: string }[]> {
  const rows = await db.query(
    `WITH owed AS (
       SELECT l.organization_id, l.currency, 'loan_receivable' AS kind,
              SUM(i.principal_minor - i.principal_paid_minor) AS amount
         FROM loans l JOIN loan_instalments i ON i.loan_id = l.id
        WHERE l.status = 'active'
        GROUP BY l.organization_id, l.currency
       UNION ALL
       SELECT l.organization_id, l.currency, k.kind,
              SUM(CASE k.kind WHEN 'loan_interest_income' THEN r.interest_minor
                              WHEN 'loan_fee_income' THEN r.fee_minor ELSE r.penalty_minor END)
         FROM loan_repayments r JOIN loans l ON l.id = r.loan_id
        CROSS JOIN (VALUES ('loan_interest_income'), ('loan_fee_income'), ('loan_penalty_income')) AS k (kind)
        GROUP BY l.organization_id, l.currency, k.kind
     ),
     booked AS (
       SELECT organization_id, currency, kind,
              CASE kind WHEN 'loan_receivable' THEN debits_posted - credits_posted
                        ELSE credits_posted - debits_posted END AS amount
         FROM ledger_accounts
        WHERE kind IN ('loan_receivable', 'loan_interest_income', 'loan_fee_income', 'loan_penalty_income')
     )
     SELECT COALESCE(b.organization_id, o.organization_id) AS organization_id,
            COALESCE(b.currency, o.currency) AS currency, COALESCE(b.kind, o.kind) AS kind,
            COALESCE(b.amount, 0)::text AS ledger, COALESCE(o.amount, 0)::text AS loans
       FROM booked b
       FULL JOIN owed o ON o.organization_id = b.organization_id AND o.currency = b.currency AND o.kind = b.kind
      WHERE COALESCE(b.amount, 0) <> COALESCE(o.amount, 0)`,
  );
  return rows.map((r) => ({
    organizationId: String(r.organization_id),
    currency: String(r.currency),
    kind: String(r.kind),
    ledger: String(r.ledger),
    loans: String(r.loans),
  }));
}
