/**
 * Lending: loan products, and loans from application to their end. An application is decided by the
 * organization's policy (`loan` rules: allow, deny, or require an approval that members vote on); an
 * approved loan is disbursed once to the borrower's wallet, fixing its schedule from the organization's
 * day; repayments come manually (from the borrower's wallet) and automatically (the day work takes what is
 * due from the wallet, partially when it is short), each allocated penalty, fee, interest, principal and
 * posted to its account through the posting module; the day work also counts the days past due and accrues
 * the penalty; an operator writes a loan off through the ledger. Every path that changes a loan locks its
 * row first, then the ledger accounts, so a manual repayment and the automatic collection of the same day
 * take the money once, and a loan is disbursed once.
 *
 * Past 400 lines: products, applications, disbursement, repayments and the day work share one loan lock
 * and one allocation rule; the day work is the next piece to move out.
 */

import { type ApprovableResource, cancelApprovalOf, newApproval, openApproval } from '../../app/approvals.ts';
import { readCustomerPolicyFacts } from '../../app/customerPolicyFacts.ts';
import type { DayWork, Deps } from '../../app/deps.ts';
import { newEvent, recordEvents } from '../../app/events.ts';
import { appendEvidence } from '../../app/evidence.ts';
import { loadPolicy } from '../../app/policies.ts';
import { PostingSession, refusalError } from '../../app/posting/session.ts';
import { requireProduct } from '../../app/products.ts';
import type { Approval } from '../../domain/approvals.ts';
import { evaluatePolicy, type PolicyDecision } from '../../domain/decisions/policies.ts';
import { AppError, resourceMissing, validationError } from '../../domain/errors.ts';
import type { EventRecord } from '../../domain/events.ts';
import type { EvidenceActor } from '../../domain/evidence.ts';
import { ID_PREFIXES, isId } from '../../domain/ids.ts';
import { type Posting, walletBalances } from '../../domain/ledger.ts';
import {
  type Currency,
  checkSingleAmount,
  formatAmount,
  isCurrency,
  parseAmount,
} from '../../domain/money.ts';
import { type Page, type PageRequest, toPage } from '../../domain/pagination.ts';
import { ensureSystemAccount, type JournalEntry } from '../../store/repositories/ledger.ts';
import { findWallets } from '../../store/repositories/wallets.ts';
import type { Queryable } from '../../store/store.ts';
import { daysAfter, organizationNow, utcDay } from '../testClock/index.ts';
import {
  type Allocation,
  ARREARS_BUCKET_NAMES,
  allocateRepayment,
  arrearsOn,
  checkPrincipal,
  computeSchedule,
  dueOn,
  type Instalment,
  isPaidOff,
  LOAN_PRODUCT_NAME_CHARS_MAX,
  LOAN_WRITE_OFF_REASON_CHARS_MAX,
  type Loan,
  type LoanEventType,
  type LoanProduct,
  type LoanRepayment,
  type LoanRepaymentSource,
  type LoanStatus,
  loanStateError,
  outstandingTotal,
  parseLoanTerms,
  penaltyOwed,
  principalOutstanding,
} from './domain.ts';
import {
  findLoan,
  findLoanProduct,
  insertInstalments,
  insertLoan,
  insertLoanProduct,
  insertRepayment,
  listInstalments,
  listLoanProducts,
  listLoans,
  listRepayments,
  loansWithDaysToDo,
  organizationsWithActiveLoans,
  saveInstalmentsPaid,
  saveLoan,
} from './repository.ts';

/** Loans one transaction of the day work brings up to date at most before the next page is read. */
export const LOAN_DAY_WORK_LOANS_PER_PAGE = 100;

// ---- products ----

export interface LoanProductInput {
  name: string;
  currency: string;
  interest_rate_bps: number;
  term_months: number;
  amortisation: string;
  origination_fee_bps?: number | undefined;
  grace_period_months?: number | undefined;
  penalty_rate_bps?: number | undefined;
  min_principal: string | number;
  max_principal: string | number;
}

export async function createLoanProduct(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: LoanProductInput,
  createdBy: string | null,
  sources: { minPrincipal?: string | undefined; maxPrincipal?: string | undefined } = {},
): Promise<LoanProduct> {
  const name = input.name.trim();
  if (name.length === 0 || name.length > LOAN_PRODUCT_NAME_CHARS_MAX) {
    throw validationError(
      'name',
      `name must be 1 to ${LOAN_PRODUCT_NAME_CHARS_MAX} characters`,
      'invalid_length',
    );
  }
  if (!isCurrency(input.currency)) {
    throw validationError('currency', 'currency is not a supported currency', 'invalid_value');
  }
  const currency = input.currency as Currency;
  const terms = parseLoanTerms(input, currency);
  const minPrincipalMinor = checkSingleAmount(
    parseAmount(input.min_principal, currency, 'min_principal', sources.minPrincipal),
    currency,
    'min_principal',
  );
  const maxPrincipalMinor = checkSingleAmount(
    parseAmount(input.max_principal, currency, 'max_principal', sources.maxPrincipal),
    currency,
    'max_principal',
  );
  if (maxPrincipalMinor < minPrincipalMinor) {
    throw validationError('max_principal', 'max_principal must be at least min_principal', 'out_of_range');
  }
  const product: LoanProduct = {
    id: deps.newId('loanProduct'),
    organizationId,
    name,
    ...terms,
    minPrincipalMinor,
    maxPrincipalMinor,
    createdAt: deps.now(),
  };
  await insertLoanProduct(tx, product, createdBy);
  return product;
}

export async function getLoanProduct(deps: Deps, organizationId: string, id: string): Promise<LoanProduct> {
  const product = await findLoanProduct(deps.store, organizationId, id);
  if (!product) throw resourceMissing('loan product', id);
  return product;
}

export async function listOrganizationLoanProducts(
  deps: Deps,
  organizationId: string,
  request: PageRequest,
): Promise<Page<LoanProduct>> {
  return toPage(
    await listLoanProducts(deps.store, organizationId, request, request.limit + 1),
    request.limit,
  );
}

// ---- views and events ----

/** A loan with its schedule as it stands. */
export interface LoanView {
  loan: Loan;
  instalments: Instalment[];
  /** The organization's today, for what is overdue. */
  today: string;
}

export async function loanView(db: Queryable, deps: Deps, loan: Loan): Promise<LoanView> {
  return {
    loan,
    instalments: await listInstalments(db, loan.id),
    today: utcDay(await organizationNow(db, deps, loan.organizationId)),
  };
}

const amount = (minor: bigint, currency: Currency) => formatAmount(minor, currency);

export function loanEventData(view: LoanView): Record<string, unknown> {
  const { loan, instalments } = view;
  return {
    loan_id: loan.id,
    status: loan.status,
    status_reason: loan.statusReason,
    product: loan.productId,
    customer: loan.customerId,
    wallet: loan.walletId,
    principal: amount(loan.principalMinor, loan.currency),
    currency: loan.currency,
    principal_outstanding: amount(principalOutstanding(instalments), loan.currency),
    total_outstanding: amount(
      outstandingTotal(loan.penaltyAccruedMinor - loan.penaltyPaidMinor, instalments),
      loan.currency,
    ),
    days_past_due: loan.daysPastDue,
    arrears_bucket: loan.arrearsBucket,
  };
}

function loanEvent(deps: Deps, type: LoanEventType, view: LoanView, now: Date, extra = {}): EventRecord {
  return newEvent(
    deps,
    {
      organizationId: view.loan.organizationId,
      type,
      resourceId: view.loan.id,
      data: { ...loanEventData(view), ...extra },
    },
    now,
  );
}

export function repaymentData(r: LoanRepayment, currency: Currency): Record<string, unknown> {
  return {
    repayment_id: r.id,
    source: r.source,
    day: r.day,
    amount: amount(r.amountMinor, currency),
    allocation: {
      penalty: amount(r.penaltyMinor, currency),
      fee: amount(r.feeMinor, currency),
      interest: amount(r.interestMinor, currency),
      principal: amount(r.principalMinor, currency),
    },
    journal_entry: r.journalEntryId,
  };
}

// ---- application and decision ----

export interface LoanApplicationInput {
  product: string;
  wallet: string;
  principal: string | number;
}

/** The policy's decision on an application, read before the transaction (the policy cache, the customer). */
export async function decideLoanApplication(
  deps: Deps,
  organizationId: string,
  input: LoanApplicationInput,
  principalText?: string,
): Promise<{ product: LoanProduct; principalMinor: bigint; customerId: string; decision: PolicyDecision }> {
  if (!isId(ID_PREFIXES.loanProduct, input.product)) {
    throw validationError('product', 'product must be a loan product id (lp_…)', 'invalid_format');
  }
  if (!isId(ID_PREFIXES.wallet, input.wallet)) {
    throw validationError('wallet', 'wallet must be a wallet id (wallet_…)', 'invalid_format');
  }
  const product = await findLoanProduct(deps.store, organizationId, input.product);
  if (!product) throw resourceMissing('loan product', input.product, 'product');
  const wallet = (await findWallets(deps.store, organizationId, [input.wallet])).get(input.wallet);
  if (!wallet) throw resourceMissing('wallet', input.wallet, 'wallet');
  if (wallet.currency !== product.currency) {
    throw validationError(
      'wallet',
      `wallet holds ${wallet.currency}; product ${product.id} lends ${product.currency}`,
      'currency_mismatch',
    );
  }
  if (wallet.status !== 'active') {
    throw new AppError({
      status: 409,
      code: 'wallet_not_active',
      title: 'Wallet not active',
      detail: `Wallet ${wallet.id} is ${wallet.status}; a loan is lent to an active wallet.`,
      param: 'wallet',
    });
  }
  const principalMinor = checkSingleAmount(
    parseAmount(input.principal, product.currency, 'principal', principalText),
    product.currency,
    'principal',
  );
  checkPrincipal(product, principalMinor);
  const policy = await loadPolicy(deps, organizationId);
  const customer = (await readCustomerPolicyFacts(deps, organizationId, wallet.ownerId)) ?? {};
  const decision = evaluatePolicy(policy, {
    operation: 'loan',
    facts: { principalMinor, currency: product.currency, walletId: wallet.id, ...customer },
  });
  return { product, principalMinor, customerId: wallet.ownerId, decision };
}

/**
 * A loan application, decided by the policy in the same transaction it is recorded: approved at once
 * (`allow`), rejected (`deny`), or waiting `pending_approval` with an approval opened. Recorded as evidence.
 */
export async function applyForLoan(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  decided: Awaited<ReturnType<typeof decideLoanApplication>>,
  walletId: string,
  createdBy: string,
  actor: EvidenceActor,
): Promise<LoanView> {
  await requireProduct(deps, organizationId, 'digital_banking', undefined, tx);
  const { product, principalMinor, decision } = decided;
  const now = deps.now();
  const status: LoanStatus =
    decision.decision === 'allow'
      ? 'approved'
      : decision.decision === 'deny'
        ? 'rejected'
        : 'pending_approval';
  let loan: Loan = {
    id: deps.newId('loan'),
    organizationId,
    productId: product.id,
    customerId: decided.customerId,
    walletId,
    currency: product.currency,
    principalMinor,
    interestRateBps: product.interestRateBps,
    termMonths: product.termMonths,
    amortisation: product.amortisation,
    originationFeeBps: product.originationFeeBps,
    gracePeriodMonths: product.gracePeriodMonths,
    penaltyRateBps: product.penaltyRateBps,
    status,
    statusReason: decision.decision === 'deny' ? 'policy_denied' : null,
    policyVersion: decision.policyVersion,
    policyRule: decision.rule,
    policyDecision: decision.decision,
    approvalId: null,
    disbursementEntryId: null,
    disbursedAt: null,
    disbursedOn: null,
    processedThrough: null,
    penaltyBasisMinorDays: 0n,
    penaltyAccruedMinor: 0n,
    penaltyPaidMinor: 0n,
    daysPastDue: 0,
    arrearsBucket: 'current',
    writeOffEntryId: null,
    writtenOffMinor: null,
    writeOffReason: null,
    createdBy,
    createdAt: now,
    updatedAt: now,
    closedAt: null,
  };
  let approval: Approval | undefined;
  if (decision.decision === 'require_approval') {
    approval = newApproval(deps, {
      organizationId,
      resourceType: 'loan',
      resourceId: loan.id,
      decision,
      initiatedBy: createdBy,
      now,
    });
    loan = { ...loan, approvalId: approval.id };
  }
  if (approval) await openApproval(tx, deps, approval);
  await insertLoan(tx, loan);
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'loan.decision',
      actor,
      customerId: loan.customerId,
      walletId,
      data: {
        loan_id: loan.id,
        product: product.id,
        principal: amount(principalMinor, product.currency),
        currency: product.currency,
        decision: decision.decision,
        policy_version: decision.policyVersion,
        rule: decision.rule,
        matched: decision.matched,
      },
    },
  ]);
  const view: LoanView = { loan, instalments: [], today: '' };
  const events = [loanEvent(deps, 'loan.applied', view, now)];
  if (status === 'approved') events.push(loanEvent(deps, 'loan.approved', view, now));
  if (status === 'rejected') events.push(loanEvent(deps, 'loan.rejected', view, now));
  await recordEvents(tx, deps, events);
  return loanView(tx, deps, loan);
}

/** The loan's approval was decided (the caller holds the loan's lock): it is approved, or rejected. */
export async function decideLoanApproval(
  tx: Queryable,
  deps: Deps,
  approval: Approval,
): Promise<LoanStatus | null> {
  const loan = await findLoan(tx, approval.organizationId, approval.resourceId);
  if (loan?.status !== 'pending_approval') return loan?.status ?? null;
  if (approval.status === 'pending') return loan.status;
  const now = deps.now();
  const approved = approval.status === 'approved';
  const next: Loan = {
    ...loan,
    status: approved ? 'approved' : 'rejected',
    statusReason: approved ? null : `approval_${approval.status}`,
    updatedAt: now,
  };
  await saveLoan(tx, next);
  await recordEvents(tx, deps, [
    loanEvent(
      deps,
      approved ? 'loan.approved' : 'loan.rejected',
      { loan: next, instalments: [], today: '' },
      now,
    ),
  ]);
  return next.status;
}

export async function lockLoan(tx: Queryable, organizationId: string, id: string): Promise<Loan> {
  const loan = await findLoan(tx, organizationId, id, { forUpdate: true });
  if (!loan) throw resourceMissing('loan', id);
  return loan;
}

/**
 * Withdraws an application before it is disbursed (`pending_approval` or `approved`): a pending approval is
 * canceled with it (the loan is locked first, as every path that decides an approval does). Nothing moved,
 * so nothing is posted.
 */
export async function cancelLoan(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  actor: EvidenceActor,
): Promise<LoanView> {
  const loan = await lockLoan(tx, organizationId, id);
  if (loan.status !== 'pending_approval' && loan.status !== 'approved') {
    throw loanStateError(loan.id, loan.status, 'canceled');
  }
  const now = deps.now();
  if (loan.status === 'pending_approval') await cancelApprovalOf(tx, deps, loan.id, actor);
  const canceled: Loan = {
    ...loan,
    status: 'canceled',
    statusReason: 'canceled',
    updatedAt: now,
    closedAt: now,
  };
  await saveLoan(tx, canceled);
  const view: LoanView = { loan: canceled, instalments: [], today: '' };
  await recordEvents(tx, deps, [loanEvent(deps, 'loan.canceled', view, now)]);
  return loanView(tx, deps, canceled);
}

// ---- ledger accounts ----

interface LoanAccounts {
  receivable: string;
  interest: string;
  fee: string;
  penalty: string;
}

function systemAccount(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  kind: 'loan_receivable' | 'loan_interest_income' | 'loan_fee_income' | 'loan_penalty_income' | 'loan_loss',
  currency: Currency,
): Promise<string> {
  // Lending never leaves the platform: its accounts are on the internal rail.
  return ensureSystemAccount(tx, {
    id: deps.newId('ledgerAccount'),
    organizationId,
    kind,
    rail: 'internal',
    currency,
    now: deps.now(),
  });
}

async function loanAccounts(tx: Queryable, deps: Deps, loan: Loan): Promise<LoanAccounts> {
  return {
    receivable: await systemAccount(tx, deps, loan.organizationId, 'loan_receivable', loan.currency),
    interest: await systemAccount(tx, deps, loan.organizationId, 'loan_interest_income', loan.currency),
    fee: await systemAccount(tx, deps, loan.organizationId, 'loan_fee_income', loan.currency),
    penalty: await systemAccount(tx, deps, loan.organizationId, 'loan_penalty_income', loan.currency),
  };
}

function entry(deps: Deps, organizationId: string, postings: Posting[], now: Date): JournalEntry {
  return {
    id: deps.newId('journalEntry'),
    organizationId,
    transferId: null,
    kind: 'direct',
    holdEntryId: null,
    createdAt: now,
    postings,
  };
}

function posted(
  accountId: string,
  side: 'debit' | 'credit',
  amountMinor: bigint,
  currency: Currency,
): Posting {
  return { accountId, side, phase: 'posted', releasesHold: false, amountMinor, currency };
}

/** A repayment's entry: the wallet pays the whole; each part goes to its account. */
function repaymentPostings(loan: Loan, accounts: LoanAccounts, a: Allocation): Posting[] {
  const total = a.penaltyMinor + a.feeMinor + a.interestMinor + a.principalMinor;
  const lines = [posted(loan.walletId, 'debit', total, loan.currency)];
  const parts: [string, bigint][] = [
    [accounts.penalty, a.penaltyMinor],
    [accounts.fee, a.feeMinor],
    [accounts.interest, a.interestMinor],
    [accounts.receivable, a.principalMinor],
  ];
  for (const [account, part] of parts)
    if (part > 0n) lines.push(posted(account, 'credit', part, loan.currency));
  return lines;
}

// ---- disbursement ----

/**
 * Disburses an approved loan once: the receivable pays the principal into the borrower's wallet, and the
 * schedule is fixed from the organization's today. A second disbursement finds the loan active: a 409.
 */
export async function disburseLoan(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
): Promise<LoanView> {
  await requireProduct(deps, organizationId, 'digital_banking', undefined, tx);
  const loan = await lockLoan(tx, organizationId, id);
  if (loan.status !== 'approved') throw loanStateError(loan.id, loan.status, 'disbursed');
  const now = deps.now();
  const today = utcDay(await organizationNow(tx, deps, organizationId));
  const receivable = await systemAccount(tx, deps, organizationId, 'loan_receivable', loan.currency);
  const session = new PostingSession(tx);
  await session.lock([receivable, loan.walletId]);
  const disbursement = entry(
    deps,
    organizationId,
    [
      posted(receivable, 'debit', loan.principalMinor, loan.currency),
      posted(loan.walletId, 'credit', loan.principalMinor, loan.currency),
    ],
    now,
  );
  const gate = session.release('loan_disbursement', { destination: loan.walletId });
  if (gate.outcome === 'refuse') throw refusalError(gate.refusal, 'disbursement', 'wallet');
  const refusal = session.tryPost(disbursement);
  if (refusal) throw refusalError(refusal, 'disbursement', 'wallet');
  await session.flush(now);
  const instalments: Instalment[] = computeSchedule(loan, loan.principalMinor, today).map((i) => ({
    ...i,
    principalPaidMinor: 0n,
    interestPaidMinor: 0n,
    feePaidMinor: 0n,
  }));
  await insertInstalments(tx, loan.id, instalments);
  const active: Loan = {
    ...loan,
    status: 'active',
    disbursementEntryId: disbursement.id,
    disbursedAt: now,
    disbursedOn: today,
    processedThrough: today,
    updatedAt: now,
  };
  await saveLoan(tx, active);
  const view: LoanView = { loan: active, instalments, today };
  await recordEvents(tx, deps, [
    loanEvent(deps, 'loan.disbursed', view, now, {
      disbursed_on: today,
      journal_entry: disbursement.id,
      instalments: instalments.length,
      first_due_date: instalments[0]?.dueDate ?? null,
    }),
  ]);
  return view;
}

// ---- repayments ----

interface LoanProgress {
  loan: Loan;
  instalments: Instalment[];
  changed: Set<number>;
  repayments: LoanRepayment[];
  events: EventRecord[];
}

/**
 * Applies one allocated repayment to the loan in memory (the caller posts its entry): what it paid of the
 * penalty and the instalments, its record and event; the loan is paid off when nothing is left.
 */
function applyRepayment(
  deps: Deps,
  progress: LoanProgress,
  allocation: Allocation,
  entryId: string,
  source: LoanRepaymentSource,
  day: string,
  createdBy: string | null,
  now: Date,
): LoanRepayment {
  const total =
    allocation.penaltyMinor + allocation.feeMinor + allocation.interestMinor + allocation.principalMinor;
  const before = new Map(progress.instalments.map((i) => [i.number, i]));
  for (const i of allocation.instalments) {
    const old = before.get(i.number);
    if (
      old &&
      (old.feePaidMinor !== i.feePaidMinor ||
        old.interestPaidMinor !== i.interestPaidMinor ||
        old.principalPaidMinor !== i.principalPaidMinor)
    ) {
      progress.changed.add(i.number);
    }
  }
  progress.instalments = allocation.instalments;
  progress.loan = {
    ...progress.loan,
    penaltyPaidMinor: progress.loan.penaltyPaidMinor + allocation.penaltyMinor,
    updatedAt: now,
  };
  const repayment: LoanRepayment = {
    id: deps.newId('loanRepayment'),
    organizationId: progress.loan.organizationId,
    loanId: progress.loan.id,
    source,
    day,
    amountMinor: total,
    penaltyMinor: allocation.penaltyMinor,
    feeMinor: allocation.feeMinor,
    interestMinor: allocation.interestMinor,
    principalMinor: allocation.principalMinor,
    journalEntryId: entryId,
    createdBy,
    createdAt: now,
  };
  progress.repayments.push(repayment);
  const arrears = arrearsOn(progress.instalments, day);
  progress.loan = { ...progress.loan, daysPastDue: arrears.daysPastDue, arrearsBucket: arrears.bucket };
  if (isPaidOff(progress.loan, progress.instalments)) {
    progress.loan = { ...progress.loan, status: 'paid_off', closedAt: now };
  }
  const view = { loan: progress.loan, instalments: progress.instalments, today: day };
  progress.events.push(
    loanEvent(deps, 'loan.repayment_received', view, now, {
      repayment: repaymentData(repayment, progress.loan.currency),
    }),
  );
  if (progress.loan.status === 'paid_off') progress.events.push(loanEvent(deps, 'loan.paid_off', view, now));
  return repayment;
}

async function saveProgress(tx: Queryable, deps: Deps, progress: LoanProgress): Promise<void> {
  await saveInstalmentsPaid(
    tx,
    progress.loan.id,
    progress.instalments.filter((i) => progress.changed.has(i.number)),
  );
  for (const r of progress.repayments) await insertRepayment(tx, r);
  await saveLoan(tx, progress.loan);
  await recordEvents(tx, deps, progress.events);
}

/**
 * A repayment from the borrower's wallet, allocated penalty, fees, interest, principal (instalment by
 * instalment, oldest first; beyond what is due it pays the next instalments early). More than the loan's
 * outstanding total is refused; so is more than the wallet has.
 */
export async function repayLoan(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  input: { amount: string | number },
  createdBy: string | null,
  amountText?: string,
): Promise<{ repayment: LoanRepayment; view: LoanView }> {
  const today = utcDay(await organizationNow(tx, deps, organizationId));
  // Days the day work has not done yet are done first (collection, arrears, penalty), so the repayment is
  // allocated against the loan as it stands today.
  const loan = await catchUpLockedLoan(tx, deps, await lockLoan(tx, organizationId, id), today);
  if (loan.status !== 'active') throw loanStateError(loan.id, loan.status, 'repaid');
  const amountMinor = checkSingleAmount(
    parseAmount(input.amount, loan.currency, 'amount', amountText),
    loan.currency,
  );
  const instalments = await listInstalments(tx, loan.id);
  const penaltyOutstanding = loan.penaltyAccruedMinor - loan.penaltyPaidMinor;
  const outstanding = outstandingTotal(penaltyOutstanding, instalments);
  if (amountMinor > outstanding) {
    throw new AppError({
      status: 422,
      code: 'repayment_exceeds_outstanding',
      title: 'More than is owed',
      detail: `Loan ${loan.id} has ${formatAmount(outstanding, loan.currency)} ${loan.currency} outstanding; a repayment pays at most that.`,
      param: 'amount',
    });
  }
  const now = deps.now();
  const accounts = await loanAccounts(tx, deps, loan);
  const session = new PostingSession(tx);
  await session.lock([loan.walletId, accounts.receivable, accounts.interest, accounts.fee, accounts.penalty]);
  const allocation = allocateRepayment(penaltyOutstanding, instalments, amountMinor);
  const posting = entry(deps, organizationId, repaymentPostings(loan, accounts, allocation), now);
  const refusal = session.tryPost(posting);
  if (refusal) throw refusalError(refusal, 'repayment', 'amount');
  await session.flush(now);
  const progress: LoanProgress = { loan, instalments, changed: new Set(), repayments: [], events: [] };
  const repayment = applyRepayment(deps, progress, allocation, posting.id, 'manual', today, createdBy, now);
  await saveProgress(tx, deps, progress);
  return { repayment, view: { loan: progress.loan, instalments: progress.instalments, today } };
}

// ---- the day work: automatic collection, arrears, penalty ----

/**
 * Brings one loan's days up to `throughDay`, each day once and in order, in the caller's transaction: on
 * each day, what is due (the penalty, and every instalment due that day or before) is taken from the wallet,
 * as much as it has; then what is still overdue counts a day past due and accrues that day's penalty; a move
 * to a worse arrears bucket emits `loan.overdue`.
 */
async function catchUpLoan(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  throughDay: string,
): Promise<void> {
  await catchUpLockedLoan(tx, deps, await lockLoan(tx, organizationId, id), throughDay);
}

/** The same, for a loan the caller has locked; returns the loan as it stands after. */
async function catchUpLockedLoan(tx: Queryable, deps: Deps, loan: Loan, throughDay: string): Promise<Loan> {
  const organizationId = loan.organizationId;
  if (loan.status !== 'active' || loan.processedThrough === null || loan.processedThrough >= throughDay) {
    return loan;
  }
  const now = deps.now();
  const accounts = await loanAccounts(tx, deps, loan);
  const session = new PostingSession(tx);
  await session.lock([loan.walletId, accounts.receivable, accounts.interest, accounts.fee, accounts.penalty]);
  const progress: LoanProgress = {
    loan,
    instalments: await listInstalments(tx, loan.id),
    changed: new Set(),
    repayments: [],
    events: [],
  };
  for (const day of daysAfter(loan.processedThrough, throughDay)) {
    const current = progress.loan;
    const penaltyOutstanding = current.penaltyAccruedMinor - current.penaltyPaidMinor;
    const due = dueOn(penaltyOutstanding, progress.instalments, day);
    if (due > 0n) {
      const sums = session.sumsOf(current.walletId);
      const available = sums ? walletBalances(sums).availableMinor : 0n;
      const take = available < due ? available : due;
      if (take > 0n) {
        const allocation = allocateRepayment(penaltyOutstanding, progress.instalments, take);
        const posting = entry(deps, organizationId, repaymentPostings(current, accounts, allocation), now);
        // A wallet that may not pay (frozen, closed) is not collected from; the loan falls into arrears.
        const gate = session.release('loan_instalment', { source: current.walletId });
        if (gate.outcome === 'release' && !session.tryPost(posting)) {
          applyRepayment(deps, progress, allocation, posting.id, 'automatic', day, null, now);
        }
      }
    }
    if (progress.loan.status !== 'active') {
      progress.loan = { ...progress.loan, processedThrough: day };
      break;
    }
    const arrears = arrearsOn(progress.instalments, day);
    const basis = progress.loan.penaltyBasisMinorDays + arrears.penaltyBaseMinor;
    const previousBucket = progress.loan.arrearsBucket;
    progress.loan = {
      ...progress.loan,
      penaltyBasisMinorDays: basis,
      penaltyAccruedMinor: penaltyOwed(basis, progress.loan.penaltyRateBps),
      daysPastDue: arrears.daysPastDue,
      arrearsBucket: arrears.bucket,
      processedThrough: day,
      updatedAt: now,
    };
    if (ARREARS_BUCKET_NAMES.indexOf(arrears.bucket) > ARREARS_BUCKET_NAMES.indexOf(previousBucket)) {
      progress.events.push(
        loanEvent(deps, 'loan.overdue', { ...progress, today: day }, now, {
          day,
          overdue: amount(arrears.overdueMinor, progress.loan.currency),
          penalty_accrued: amount(progress.loan.penaltyAccruedMinor, progress.loan.currency),
        }),
      );
    }
  }
  await session.flush(now);
  await saveProgress(tx, deps, progress);
  return progress.loan;
}

/** Every active loan of the organization brought up to `throughDay`, each loan in its own transaction. */
export async function catchUpLoans(deps: Deps, organizationId: string, throughDay: string): Promise<void> {
  for (;;) {
    const ids = await loansWithDaysToDo(deps.store, organizationId, throughDay, LOAN_DAY_WORK_LOANS_PER_PAGE);
    for (const id of ids) {
      await deps.store.transaction((tx) => catchUpLoan(tx, deps, organizationId, id, throughDay));
    }
    if (ids.length < LOAN_DAY_WORK_LOANS_PER_PAGE) return;
  }
}

/** Organizations with active loans, for the day worker (src/modules/testClock/useCases/dayWork.ts). */
export function loanOrganizations(deps: Deps, after: string | undefined, limit: number): Promise<string[]> {
  return organizationsWithActiveLoans(deps.store, after, limit);
}

/** Lending's day work: due-date collection from the borrower's wallet, days past due, penalty. */
export const LOAN_DAY_WORK: DayWork = {
  name: 'loan_collection',
  organizations: loanOrganizations,
  catchUp: catchUpLoans,
};

// ---- write-off ----

/**
 * An operator writes an active loan off: the principal still owed moves from the receivable to loan
 * losses; interest, fees and penalty not paid were never income (income is booked when it is paid), so
 * they are recorded as forgone in the evidence, not posted. The loan ends `written_off`.
 */
export async function writeOffLoan(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  input: { reason: string },
  actor: EvidenceActor,
): Promise<LoanView> {
  const reason = input.reason.trim();
  if (reason.length === 0 || reason.length > LOAN_WRITE_OFF_REASON_CHARS_MAX) {
    throw validationError(
      'reason',
      `reason must be 1 to ${LOAN_WRITE_OFF_REASON_CHARS_MAX} characters`,
      'invalid_length',
    );
  }
  const today = utcDay(await organizationNow(tx, deps, organizationId));
  // Brought up to today first, so the write-off records the arrears as they stand.
  const loan = await catchUpLockedLoan(tx, deps, await lockLoan(tx, organizationId, id), today);
  if (loan.status !== 'active') throw loanStateError(loan.id, loan.status, 'written off');
  const now = deps.now();
  const instalments = await listInstalments(tx, loan.id);
  const principal = principalOutstanding(instalments);
  let writeOffEntryId: string | null = null;
  if (principal > 0n) {
    const receivable = await systemAccount(tx, deps, organizationId, 'loan_receivable', loan.currency);
    const loss = await systemAccount(tx, deps, organizationId, 'loan_loss', loan.currency);
    const session = new PostingSession(tx);
    await session.lock([receivable, loss]);
    const writeOff = entry(
      deps,
      organizationId,
      [
        posted(loss, 'debit', principal, loan.currency),
        posted(receivable, 'credit', principal, loan.currency),
      ],
      now,
    );
    const refusal = session.tryPost(writeOff);
    if (refusal) throw refusalError(refusal, 'write-off');
    await session.flush(now);
    writeOffEntryId = writeOff.id;
  }
  const unpaid = instalments.reduce(
    (s, i) => ({
      fee: s.fee + i.feeMinor - i.feePaidMinor,
      interest: s.interest + i.interestMinor - i.interestPaidMinor,
    }),
    { fee: 0n, interest: 0n },
  );
  const ended: Loan = {
    ...loan,
    status: 'written_off',
    statusReason: 'written_off',
    writeOffEntryId,
    writtenOffMinor: principal,
    writeOffReason: reason,
    updatedAt: now,
    closedAt: now,
  };
  await saveLoan(tx, ended);
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'loan.write_off',
      actor,
      customerId: loan.customerId,
      walletId: loan.walletId,
      data: {
        loan_id: loan.id,
        reason,
        day: today,
        days_past_due: loan.daysPastDue,
        arrears_bucket: loan.arrearsBucket,
        principal_written_off: amount(principal, loan.currency),
        interest_forgone: amount(unpaid.interest, loan.currency),
        fee_forgone: amount(unpaid.fee, loan.currency),
        penalty_forgone: amount(loan.penaltyAccruedMinor - loan.penaltyPaidMinor, loan.currency),
        currency: loan.currency,
        journal_entry: writeOffEntryId,
      },
    },
  ]);
  const view: LoanView = { loan: ended, instalments, today };
  await recordEvents(tx, deps, [
    loanEvent(deps, 'loan.written_off', view, now, {
      reason,
      written_off: amount(principal, loan.currency),
      journal_entry: writeOffEntryId,
    }),
  ]);
  return view;
}

// ---- reads ----

export async function getLoan(deps: Deps, organizationId: string, id: string): Promise<LoanView> {
  const loan = await findLoan(deps.store, organizationId, id);
  if (!loan) throw resourceMissing('loan', id);
  return loanView(deps.store, deps, loan);
}

export async function listOrganizationLoans(
  deps: Deps,
  organizationId: string,
  request: PageRequest & { status?: LoanStatus | undefined; walletId?: string | undefined },
): Promise<Page<LoanView>> {
  const page = toPage(await listLoans(deps.store, organizationId, request, request.limit + 1), request.limit);
  const today = utcDay(await organizationNow(deps.store, deps, organizationId));
  const data: LoanView[] = [];
  for (const loan of page.data) {
    data.push({ loan, instalments: await listInstalments(deps.store, loan.id), today });
  }
  return { ...page, data };
}

export async function listLoanRepayments(
  deps: Deps,
  organizationId: string,
  id: string,
  request: PageRequest,
): Promise<{ loan: Loan; page: Page<LoanRepayment> }> {
  const loan = await findLoan(deps.store, organizationId, id);
  if (!loan) throw resourceMissing('loan', id);
  return {
    loan,
    page: toPage(await listRepayments(deps.store, loan.id, request, request.limit + 1), request.limit),
  };
}

/** A loan application as an approval's resource. */
export const LOAN_APPROVALS: ApprovableResource & { type: 'loan' } = {
  type: 'loan',
  async lock(tx, organizationId, resourceId) {
    await findLoan(tx, organizationId, resourceId, { forUpdate: true });
    return { settle: (tx, deps, approval) => decideLoanApproval(tx, deps, approval) };
  },
};
