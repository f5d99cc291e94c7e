/**
 * The ledger's side of the safeguarding check, read as of the end of a day: customer wallet balances, the
 * trust ledger account's balance, and since when the organization has had wallets in each currency.
 */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type { Currency } from '../../../domain/money.ts';
import { idBoundsOfCreated, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

/**
 * The first time each currency had a wallet in the organization, for the currencies that have one: one
 * probe per currency into ledger_accounts_wallet_currency_idx, however many wallets there are.
 */
export async function walletCurrenciesSince(
  db: Queryable,
  organizationId: string,
  currencies: readonly Currency[],
): Promise<Map<Currency, Date>> {
  const rows = await db.query(
    `SELECT c.currency,
            (SELECT min(a.created_at) FROM ledger_accounts a
              WHERE a.organization_id = $1 AND a.kind = 'wallet' AND a.currency = c.currency) AS first_at
       FROM unnest($2::text[]) AS c(currency)`,
    [organizationId, [...currencies]],
  );
  const since = new Map<Currency, Date>();
  for (const row of rows) {
    if (row.first_at !== null && row.first_at !== undefined) {
      since.set(row.currency as Currency, toDate(row.first_at));
    }
  }
  return since;
}

/**
 * The condition that bounds journal entry ids (in `column`) to those that can have been created at or after
 * `asOf` (idBoundsOfCreated), its value added to `params`; empty when no id bound applies.
 */
function entryIdBoundSince(asOf: Date, params: unknown[], column: string): string {
  const { idGte } = idBoundsOfCreated(ID_PREFIXES.journalEntry, { createdGte: asOf });
  if (idGte === undefined) return '';
  params.push(idGte);
  return `AND ${column} >= $${params.length}`;
}

/** Reads a balance in a currency as of `asOf`, exactly, in minor units. */
type BalanceAsOfReader = (
  db: Queryable,
  organizationId: string,
  currency: Currency,
  asOf: Date,
) => Promise<bigint>;

/**
 * A reader of a balance as of a past instant, by one statement that answers what it holds now
 * (`current_minor`) and what posted since (`since_minor`): the first less the second. The statement takes
 * the organization ($1), the currency ($2) and `asOf` ($3), and is given the bound on the entry ids in
 * `entryIdColumn` to place (entryIdBoundSince).
 */
function balanceAsOfReader(
  entryIdColumn: string,
  statement: (entryIdBound: string) => string,
): BalanceAsOfReader {
  return async (db, organizationId, currency, asOf) => {
    const params: unknown[] = [organizationId, currency, asOf];
    const idBound = entryIdBoundSince(asOf, params, entryIdColumn);
    const [row] = await db.query(statement(idBound), params);
    return BigInt(String(row?.current_minor ?? '0')) - BigInt(String(row?.since_minor ?? '0'));
  };
}

/**
 * Customer money in a currency as of `asOf`, exactly, in minor units: the posted balances of every wallet
 * of the organization in that currency, less what entries created at or after `asOf` posted to them. The
 * running sums are current; entries are append-only and stamped, so the past is the present minus what
 * came since, and only the entries since are read (journal_entries_organization_idx over the id range that
 * encloses them, see idBoundsOfCreated). One statement, so both halves read the same snapshot.
 */
export const customerMoneyAsOf: BalanceAsOfReader = balanceAsOfReader(
  'e.id',
  (idBound) =>
    `SELECT
       (SELECT coalesce(sum(a.credits_posted - a.debits_posted), 0)::text FROM ledger_accounts a
         WHERE a.organization_id = $1 AND a.kind = 'wallet' AND a.currency = $2) AS current_minor,
       (SELECT coalesce(sum(CASE WHEN p.side = 'credit' THEN p.amount_minor ELSE -p.amount_minor END), 0)::text
          FROM journal_entries e
          JOIN postings p ON p.entry_id = e.id
          JOIN ledger_accounts a ON a.id = p.account_id
         WHERE e.organization_id = $1 AND e.currency = $2 AND e.created_at >= $3 ${idBound}
           AND p.phase = 'posted' AND a.kind = 'wallet') AS since_minor`,
);

/**
 * What the organization's trust ledger account in a currency held as of `asOf`, exactly, in minor units (an
 * asset: posted debits less posted credits; 0 when it has none yet). Read like customerMoneyAsOf: the
 * account's running sums less what entries created at or after `asOf` posted to it, in one statement. The
 * account is found by ledger_accounts_system_idx and its postings since by postings_account_entry_idx, over
 * the entry id range that encloses those times.
 */
export const ledgerTrustBalanceAsOf: BalanceAsOfReader = balanceAsOfReader(
  'p.entry_id',
  (idBound) =>
    `WITH trust AS (
       SELECT id, debits_posted, credits_posted FROM ledger_accounts
        WHERE organization_id = $1 AND kind = 'trust' AND currency = $2
     )
     SELECT
       (SELECT coalesce(sum(debits_posted - credits_posted), 0)::text FROM trust) AS current_minor,
       (SELECT coalesce(sum(CASE WHEN p.side = 'debit' THEN p.amount_minor ELSE -p.amount_minor END), 0)::text
          FROM trust
          JOIN postings p ON p.account_id = trust.id
          JOIN journal_entries e ON e.id = p.entry_id
         WHERE p.phase = 'posted' AND e.created_at >= $3 ${idBound}) AS since_minor`,
);
