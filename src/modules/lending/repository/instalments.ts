/** A loan's instalments (its schedule and what was paid of each) and its repayments. */
import { rowTable } from '../../../store/repositories/records.ts';
import { castToText, rowMapper, stored } from '../../../store/repositories/rowMappers.ts';
import {
  type KeysetFilter,
  nullableText,
  toBigInt,
  toDate,
  toDay,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { Instalment, LoanRepayment } from '../domain/loans.ts';

const instalmentFromRow = rowMapper<Instalment>({
  number: Number,
  dueDate: toDay,
  principalMinor: toBigInt,
  interestMinor: toBigInt,
  feeMinor: toBigInt,
  principalPaidMinor: toBigInt,
  interestPaidMinor: toBigInt,
  feePaidMinor: toBigInt,
});

export async function insertInstalments(
  db: Queryable,
  loanId: string,
  instalments: readonly Instalment[],
): Promise<void> {
  if (instalments.length === 0) return;
  const params: unknown[] = [loanId];
  const values = instalments.map((i) => {
    params.push(i.number, i.dueDate, i.principalMinor, i.interestMinor, i.feeMinor);
    const n = params.length;
    return `($1, $${n - 4}, $${n - 3}::date, $${n - 2}, $${n - 1}, $${n})`;
  });
  await db.query(
    `INSERT INTO loan_instalments (loan_id, number, due_date, principal_minor, interest_minor, fee_minor)
     VALUES ${values.join(', ')}`,
    params,
  );
}

export async function listInstalments(db: Queryable, loanId: string): Promise<Instalment[]> {
  const rows = await db.query(
    `SELECT number, due_date::text AS due_date, principal_minor, interest_minor, fee_minor, principal_paid_minor,
       interest_paid_minor, fee_paid_minor
     FROM loan_instalments WHERE loan_id = $1 ORDER BY number`,
    [loanId],
  );
  return rows.map(instalmentFromRow);
}

/** Writes what was paid of the instalments given (those a repayment touched). */
export async function saveInstalmentsPaid(
  db: Queryable,
  loanId: string,
  instalments: readonly Instalment[],
): Promise<void> {
  for (const i of instalments) {
    await db.query(
      `UPDATE loan_instalments SET principal_paid_minor = $3, interest_paid_minor = $4, fee_paid_minor = $5
       WHERE loan_id = $1 AND number = $2`,
      [loanId, i.number, i.principalPaidMinor, i.interestPaidMinor, i.feePaidMinor],
    );
  }
}

// --- Repayments ------------------------------------------------------------------------------------------

const REPAYMENTS = rowTable<LoanRepayment>('loan_repayments', {
  id: String,
  organizationId: String,
  loanId: String,
  source: stored,
  day: castToText('day', toDay),
  amountMinor: toBigInt,
  penaltyMinor: toBigInt,
  feeMinor: toBigInt,
  interestMinor: toBigInt,
  principalMinor: toBigInt,
  journalEntryId: String,
  createdBy: nullableText,
  createdAt: toDate,
});

export async function insertRepayment(db: Queryable, r: LoanRepayment): Promise<void> {
  await db.query(
    `INSERT INTO loan_repayments (id, organization_id, loan_id, source, day, amount_minor, penalty_minor, fee_minor,
       interest_minor, principal_minor, journal_entry_id, created_by, created_at)
     VALUES ($1, $2, $3, $4, $5::date, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [
      r.id,
      r.organizationId,
      r.loanId,
      r.source,
      r.day,
      r.amountMinor,
      r.penaltyMinor,
      r.feeMinor,
      r.interestMinor,
      r.principalMinor,
      r.journalEntryId,
      r.createdBy,
      r.createdAt,
    ],
  );
}

export async function listRepayments(
  db: Queryable,
  loanId: string,
  filter: KeysetFilter,
  rowsMax: number,
): Promise<LoanRepayment[]> {
  const params: unknown[] = [loanId, rowsMax];
  let after = '';
  if (filter.startingAfter) {
    params.push(filter.startingAfter);
    after = ` AND id < $${params.length}`;
  }
  const rows = await db.query(
    `SELECT ${REPAYMENTS.columns} FROM loan_repayments WHERE loan_id = $1${after} ORDER BY id DESC LIMIT $2`,
    params,
  );
  return rows.map(REPAYMENTS.fromRow);
}
