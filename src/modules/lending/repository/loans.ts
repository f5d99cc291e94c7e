/** Loans: their rows, the writes of their life, and the reads of the day work. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import {
  byStatusAndWallet,
  newestFirstLister,
  organizationRecordFinder,
  type RecordTable,
} from '../../../store/repositories/records.ts';
import { rowMapper, stored } from '../../../store/repositories/rowMappers.ts';
import {
  nullableBigInt,
  nullableDate,
  nullableDay,
  nullableText,
  toBigInt,
  toDate,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { Loan, LoanStatus } from '../domain/loans.ts';
import { LOAN_TERMS_FIELDS } from './products.ts';

const LOAN_COLUMNS = `id, organization_id, product_id, customer_id, wallet_id, currency, principal_minor,
  interest_rate_bps, term_months, amortisation, origination_fee_bps, grace_period_months, penalty_rate_bps,
  status, status_reason, policy_version, policy_rule, policy_decision, approval_id, disbursement_entry_id,
  disbursed_at, disbursed_on::text AS disbursed_on, processed_through::text AS processed_through,
  penalty_basis_minor_days::text AS penalty_basis_minor_days, penalty_accrued_minor, penalty_paid_minor,
  days_past_due, arrears_bucket, write_off_entry_id, written_off_minor, write_off_reason, created_by,
  created_at, updated_at, closed_at`;

const loanFromRow = rowMapper<Loan>({
  id: String,
  organizationId: String,
  productId: String,
  customerId: String,
  walletId: String,
  ...LOAN_TERMS_FIELDS,
  principalMinor: toBigInt,
  status: stored,
  statusReason: nullableText,
  policyVersion: Number,
  policyRule: String,
  policyDecision: stored,
  approvalId: nullableText,
  disbursementEntryId: nullableText,
  disbursedAt: nullableDate,
  disbursedOn: nullableDay,
  processedThrough: nullableDay,
  penaltyBasisMinorDays: toBigInt,
  penaltyAccruedMinor: toBigInt,
  penaltyPaidMinor: toBigInt,
  daysPastDue: Number,
  arrearsBucket: stored,
  writeOffEntryId: nullableText,
  writtenOffMinor: nullableBigInt,
  writeOffReason: nullableText,
  createdBy: nullableText,
  createdAt: toDate,
  updatedAt: toDate,
  closedAt: nullableDate,
});

const LOANS: RecordTable<Loan> = {
  name: 'loans',
  columns: LOAN_COLUMNS,
  prefix: ID_PREFIXES.loan,
  fromRow: loanFromRow,
};

export async function insertLoan(db: Queryable, l: Loan): Promise<void> {
  await db.query(
    `INSERT INTO loans (id, organization_id, product_id, customer_id, wallet_id, currency, principal_minor,
       interest_rate_bps, term_months, amortisation, origination_fee_bps, grace_period_months, penalty_rate_bps,
       status, status_reason, policy_version, policy_rule, policy_decision, approval_id, created_by, created_at,
       updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $21)`,
    [
      l.id,
      l.organizationId,
      l.productId,
      l.customerId,
      l.walletId,
      l.currency,
      l.principalMinor,
      l.interestRateBps,
      l.termMonths,
      l.amortisation,
      l.originationFeeBps,
      l.gracePeriodMonths,
      l.penaltyRateBps,
      l.status,
      l.statusReason,
      l.policyVersion,
      l.policyRule,
      l.policyDecision,
      l.approvalId,
      l.createdBy,
      l.createdAt,
    ],
  );
}

/** Writes what changes on a loan after it is created. */
export async function saveLoan(db: Queryable, l: Loan): Promise<void> {
  await db.query(
    `UPDATE loans SET status = $2, status_reason = $3, approval_id = $4, disbursement_entry_id = $5,
       disbursed_at = $6, disbursed_on = $7::date, processed_through = $8::date, penalty_basis_minor_days = $9,
       penalty_accrued_minor = $10, penalty_paid_minor = $11, days_past_due = $12, arrears_bucket = $13,
       write_off_entry_id = $14, written_off_minor = $15, write_off_reason = $16, updated_at = $17,
       closed_at = $18
     WHERE id = $1`,
    [
      l.id,
      l.status,
      l.statusReason,
      l.approvalId,
      l.disbursementEntryId,
      l.disbursedAt,
      l.disbursedOn,
      l.processedThrough,
      l.penaltyBasisMinorDays.toString(),
      l.penaltyAccruedMinor,
      l.penaltyPaidMinor,
      l.daysPastDue,
      l.arrearsBucket,
      l.writeOffEntryId,
      l.writtenOffMinor,
      l.writeOffReason,
      l.updatedAt,
      l.closedAt,
    ],
  );
}

export const findLoan = organizationRecordFinder(LOANS);

export const listLoans = newestFirstLister(LOANS, byStatusAndWallet<LoanStatus>);

/** Active loans of the organization whose days are not done through `throughDay`, oldest first. */
export async function loansWithDaysToDo(
  db: Queryable,
  organizationId: string,
  throughDay: string,
  rowsMax: number,
): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM loans WHERE organization_id = $1 AND status = 'active' AND processed_through < $2::date
     ORDER BY id LIMIT $3`,
    [organizationId, throughDay, rowsMax],
  );
  return rows.map((r) => r.id);
}

/** Organizations with active loans, after `after` in id order. */
export async function organizationsWithActiveLoans(
  db: Queryable,
  after: string | undefined,
  limit: number,
): Promise<string[]> {
  const rows = await db.query<{ organization_id: string }>(
    `SELECT DISTINCT organization_id FROM loans WHERE status = 'active' AND ($1::text IS NULL OR organization_id > $1)
     ORDER BY organization_id LIMIT $2`,
    [after ?? null, limit],
  );
  return rows.map((r) => r.organization_id);
}
