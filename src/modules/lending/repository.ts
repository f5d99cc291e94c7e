/** Loan products, loans, their instalments and repayments. */
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Currency } from '../../domain/money.ts';
import { type KeysetFilter, listNewestFirst, toBigInt, toDate } from '../../store/repositories/rows.ts';
import type { Queryable } from '../../store/store.ts';
import type {
  ArrearsBucket,
  Instalment,
  Loan,
  LoanAmortisation,
  LoanProduct,
  LoanRepayment,
  LoanRepaymentSource,
  LoanStatus,
} from './domain.ts';

const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
const date = (v: unknown) => (v === null || v === undefined ? null : toDate(v));
const big = (v: unknown) => (v === null || v === undefined ? null : toBigInt(v));
/** A `date` column read as `YYYY-MM-DD` (the SELECTs cast it to text). */
const day = (v: unknown) => (v === null || v === undefined ? null : String(v).slice(0, 10));

// --- Products --------------------------------------------------------------------------------------------

const PRODUCT_COLUMNS =
  'id, organization_id, name, currency, interest_rate_bps, term_months, amortisation, origination_fee_bps, grace_period_months, penalty_rate_bps, min_principal_minor, max_principal_minor, created_by, created_at';

function productFromRow(row: Record<string, unknown>): LoanProduct {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    name: String(row.name),
    currency: row.currency as Currency,
    interestRateBps: Number(row.interest_rate_bps),
    termMonths: Number(row.term_months),
    amortisation: row.amortisation as LoanAmortisation,
    originationFeeBps: Number(row.origination_fee_bps),
    gracePeriodMonths: Number(row.grace_period_months),
    penaltyRateBps: Number(row.penalty_rate_bps),
    minPrincipalMinor: toBigInt(row.min_principal_minor),
    maxPrincipalMinor: toBigInt(row.max_principal_minor),
    createdAt: toDate(row.created_at),
  };
}

export async function insertLoanProduct(
  db: Queryable,
  p: LoanProduct,
  createdBy: string | null,
): Promise<void> {
  await db.query(
    `INSERT INTO loan_products (${PRODUCT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [
      p.id,
      p.organizationId,
      p.name,
      p.currency,
      p.interestRateBps,
      p.termMonths,
      p.amortisation,
      p.originationFeeBps,
      p.gracePeriodMonths,
      p.penaltyRateBps,
      p.minPrincipalMinor,
      p.maxPrincipalMinor,
      createdBy,
      p.createdAt,
    ],
  );
}

export async function findLoanProduct(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<LoanProduct | undefined> {
  const [row] = await db.query(
    `SELECT ${PRODUCT_COLUMNS} FROM loan_products WHERE organization_id = $1 AND id = $2`,
    [organizationId, id],
  );
  return row ? productFromRow(row) : undefined;
}

export async function listLoanProducts(
  db: Queryable,
  organizationId: string,
  filter: KeysetFilter,
  rowsMax: number,
): Promise<LoanProduct[]> {
  const rows = await listNewestFirst(db, {
    table: 'loan_products',
    columns: PRODUCT_COLUMNS,
    prefix: ID_PREFIXES.loanProduct,
    organizationId,
    filter,
    equal: [],
    rowsMax,
  });
  return rows.map(productFromRow);
}

// --- Loans -----------------------------------------------------------------------------------------------

const LOAN_COLUMNS = `id, organization_id, product_id, customer_id, wallet_id, currency, principal_minor,
  interest_rate_bps, term_months, amortisation, origination_fee_bps, grace_period_months, penalty_rate_bps,
  status, status_reason, policy_version, policy_rule, policy_decision, approval_id, disbursement_entry_id,
  disbursed_at, disbursed_on::text AS disbursed_on, processed_through::text AS processed_through,
  penalty_basis_minor_days::text AS penalty_basis_minor_days, penalty_accrued_minor, penalty_paid_minor,
  days_past_due, arrears_bucket, write_off_entry_id, written_off_minor, write_off_reason, created_by,
  created_at, updated_at, closed_at`;

function loanFromRow(row: Record<string, unknown>): Loan {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    productId: String(row.product_id),
    customerId: String(row.customer_id),
    walletId: String(row.wallet_id),
    currency: row.currency as Currency,
    principalMinor: toBigInt(row.principal_minor),
    interestRateBps: Number(row.interest_rate_bps),
    termMonths: Number(row.term_months),
    amortisation: row.amortisation as LoanAmortisation,
    originationFeeBps: Number(row.origination_fee_bps),
    gracePeriodMonths: Number(row.grace_period_months),
    penaltyRateBps: Number(row.penalty_rate_bps),
    status: row.status as LoanStatus,
    statusReason: text(row.status_reason),
    policyVersion: Number(row.policy_version),
    policyRule: String(row.policy_rule),
    policyDecision: row.policy_decision as Loan['policyDecision'],
    approvalId: text(row.approval_id),
    disbursementEntryId: text(row.disbursement_entry_id),
    disbursedAt: date(row.disbursed_at),
    disbursedOn: day(row.disbursed_on),
    processedThrough: day(row.processed_through),
    penaltyBasisMinorDays: toBigInt(row.penalty_basis_minor_days),
    penaltyAccruedMinor: toBigInt(row.penalty_accrued_minor),
    penaltyPaidMinor: toBigInt(row.penalty_paid_minor),
    daysPastDue: Number(row.days_past_due),
    arrearsBucket: row.arrears_bucket as ArrearsBucket,
    writeOffEntryId: text(row.write_off_entry_id),
    writtenOffMinor: big(row.written_off_minor),
    writeOffReason: text(row.write_off_reason),
    createdBy: text(row.created_by),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
    closedAt: date(row.closed_at),
  };
}

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

export async function findLoan(
  db: Queryable,
  organizationId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<Loan | undefined> {
  const [row] = await db.query(
    `SELECT ${LOAN_COLUMNS} FROM loans WHERE organization_id = $1 AND id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [organizationId, id],
  );
  return row ? loanFromRow(row) : undefined;
}

export async function listLoans(
  db: Queryable,
  organizationId: string,
  filter: KeysetFilter & { status?: LoanStatus | undefined; walletId?: string | undefined },
  rowsMax: number,
): Promise<Loan[]> {
  const rows = await listNewestFirst(db, {
    table: 'loans',
    columns: LOAN_COLUMNS,
    prefix: ID_PREFIXES.loan,
    organizationId,
    filter,
    equal: [
      ['status', filter.status],
      ['wallet_id', filter.walletId],
    ],
    rowsMax,
  });
  return rows.map(loanFromRow);
}

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

// --- Instalments -----------------------------------------------------------------------------------------

function instalmentFromRow(row: Record<string, unknown>): Instalment {
  return {
    number: Number(row.number),
    dueDate: String(row.due_date).slice(0, 10),
    principalMinor: toBigInt(row.principal_minor),
    interestMinor: toBigInt(row.interest_minor),
    feeMinor: toBigInt(row.fee_minor),
    principalPaidMinor: toBigInt(row.principal_paid_minor),
    interestPaidMinor: toBigInt(row.interest_paid_minor),
    feePaidMinor: toBigInt(row.fee_paid_minor),
  };
}

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

const REPAYMENT_COLUMNS = `id, organization_id, loan_id, source, day::text AS day, amount_minor, penalty_minor,
  fee_minor, interest_minor, principal_minor, journal_entry_id, created_by, created_at`;

function repaymentFromRow(row: Record<string, unknown>): LoanRepayment {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    loanId: String(row.loan_id),
    source: row.source as LoanRepaymentSource,
    day: String(row.day).slice(0, 10),
    amountMinor: toBigInt(row.amount_minor),
    penaltyMinor: toBigInt(row.penalty_minor),
    feeMinor: toBigInt(row.fee_minor),
    interestMinor: toBigInt(row.interest_minor),
    principalMinor: toBigInt(row.principal_minor),
    journalEntryId: String(row.journal_entry_id),
    createdBy: text(row.created_by),
    createdAt: toDate(row.created_at),
  };
}

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
    `SELECT ${REPAYMENT_COLUMNS} FROM loan_repayments WHERE loan_id = $1${after} ORDER BY id DESC LIMIT $2`,
    params,
  );
  return rows.map(repaymentFromRow);
}
