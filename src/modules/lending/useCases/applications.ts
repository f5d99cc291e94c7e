/**
 * Loan applications: decided by the organization's policy (`loan` rules: allow, deny, or require an
 * approval that members vote on) in the transaction that records them, settled by their approval, or
 * withdrawn before disbursement. A loan application is an approval's resource (`LOAN_APPROVALS`).
 */

import { rowLockedApprovableResource } from '../../../app/approvableResources.ts';
import type { Deps } from '../../../app/deps.ts';
import { recordEvents } from '../../../app/events.ts';
import { appendEvidence } from '../../../app/evidence.ts';
import { requireProduct } from '../../../app/products.ts';
import type { Approval } from '../../../domain/approvals.ts';
import { evaluatePolicy, type PolicyDecision } from '../../../domain/decisions/policies.ts';
import { resourceMissing, validationError } from '../../../domain/errors.ts';
import type { EvidenceActor, EvidenceDraft } from '../../../domain/evidence.ts';
import { ID_PREFIXES, isId } from '../../../domain/ids.ts';
import { checkSingleAmount, formatAmount, parseAmount } from '../../../domain/money.ts';
import { walletNotActive } from '../../../domain/wallets.ts';
import type { Queryable } from '../../../store/store.ts';
import { cancelApprovalOf, loadPolicy, newApproval, openApproval } from '../../authorization/index.ts';
import { readCustomerPolicyFacts } from '../../customers/index.ts';
import { findWallets } from '../../wallets/index.ts';
import {
  checkPrincipal,
  type Loan,
  type LoanProduct,
  type LoanStatus,
  loanStateError,
} from '../domain/loans.ts';
import { findLoan, insertLoan, saveLoan } from '../repository/loans.ts';
import { findLoanProduct } from '../repository/products.ts';
import { type LoanView, loanEvent, loanEvidence, loanView, lockLoan } from './loans.ts';

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
  if (wallet.status !== 'active')
    throw walletNotActive(
      `Wallet ${wallet.id} is ${wallet.status}; a loan is lent to an active wallet.`,
      'wallet',
    );
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

/** An application as the policy decided it, before it is recorded. */
type DecidedLoanApplication = Awaited<ReturnType<typeof decideLoanApplication>>;

/**
 * The loan an application records: the product's terms copied onto it, in the status the policy's
 * decision gives it (`approved`, `rejected`, or `pending_approval`), nothing yet disbursed or owed.
 */
function newLoan(
  deps: Deps,
  organizationId: string,
  decided: DecidedLoanApplication,
  walletId: string,
  createdBy: string,
  now: Date,
): Loan {
  const { product, principalMinor, decision } = decided;
  const status: LoanStatus =
    decision.decision === 'allow'
      ? 'approved'
      : decision.decision === 'deny'
        ? 'rejected'
        : 'pending_approval';
  return {
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
}

/** The evidence of the policy's decision on an application. */
function loanDecisionEvidence(
  loan: Loan,
  decided: DecidedLoanApplication,
  actor: EvidenceActor,
): EvidenceDraft {
  const { product, principalMinor, decision } = decided;
  return loanEvidence(loan, 'loan.decision', actor, {
    product: product.id,
    principal: formatAmount(principalMinor, product.currency),
    currency: product.currency,
    decision: decision.decision,
    policy_version: decision.policyVersion,
    rule: decision.rule,
    matched: decision.matched,
  });
}

/**
 * A loan application, decided by the policy in the same transaction it is recorded: approved at once
 * (`allow`), rejected (`deny`), or waiting `pending_approval` with an approval opened. Recorded as evidence.
 */
export async function applyForLoan(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  decided: DecidedLoanApplication,
  walletId: string,
  createdBy: string,
  actor: EvidenceActor,
): Promise<LoanView> {
  await requireProduct(deps, organizationId, 'digital_banking', undefined, tx);
  const { decision } = decided;
  const now = deps.now();
  let loan = newLoan(deps, organizationId, decided, walletId, createdBy, now);
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
  await appendEvidence(tx, deps, [loanDecisionEvidence(loan, decided, actor)]);
  const view: LoanView = { loan, instalments: [], today: '' };
  const events = [loanEvent(deps, 'loan.applied', view, now)];
  if (loan.status === 'approved') events.push(loanEvent(deps, 'loan.approved', view, now));
  if (loan.status === 'rejected') events.push(loanEvent(deps, 'loan.rejected', view, now));
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

/** A loan application as an approval's resource. */
export const LOAN_APPROVALS = rowLockedApprovableResource('loan', findLoan, decideLoanApproval);
