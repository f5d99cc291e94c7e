/**
 * One command's decision inside the ledger writer's batch: tier limits, route limits and pilot caps, then
 * compliance (a block refuses, a review holds the funds for an operator) and the authorization policy, then
 * the posting rule over the session's locked sums. It sends no statement: it posts into the batch's session,
 * counts what it accepts into the batch's guards, and returns the new transfer with what the batch writes
 * beside it, or the refusal.
 */

import type { Deps } from '../../../../app/deps.ts';
import { transferEvent } from '../../../../app/events.ts';
import { SYSTEM_ACTOR } from '../../../../app/evidence.ts';
import type { Approval } from '../../../../domain/approvals.ts';
import { AWAITING_APPROVAL_STATUS_REASON } from '../../../../domain/approvals.ts';
import { evaluatePolicy, type PolicyDecision } from '../../../../domain/decisions/policies.ts';
import {
  decideTransferCompliance,
  type RuleHit,
  type TransferComplianceDecision,
} from '../../../../domain/decisions/transferCompliance.ts';
import { AppError } from '../../../../domain/errors.ts';
import type { EventRecord } from '../../../../domain/events.ts';
import type { EvidenceDraft } from '../../../../domain/evidence.ts';
import { formatAmount } from '../../../../domain/money.ts';
import { IN_REVIEW_STATUS_REASON, openReviewCase, type ReviewCase } from '../../../../domain/reviews.ts';
import { feeOf, type Transfer } from '../../../../domain/transferRecord.ts';
import type { Destination } from '../../../../domain/transfers.ts';
import { approvalEvent, newApproval } from '../../../authorization/index.ts';
import type { AmlAlertDraft } from '../../../compliance/index.ts';
import { type PostingSession, refusalError, transferPostings } from '../../../ledger/index.ts';
import type { AmlBatchMonitor } from './amlMonitor.ts';
import type { LimitGuard } from './limitGuard.ts';
import type { PilotCapGuard } from './pilotCapGuard.ts';
import type { RouteLimitGuard } from './routeLimitGuard.ts';
import type { TransferCommand, WriterCommand } from './writerCommands.ts';

/** What every decision of one batch reads and counts into: set up once per batch, after its locks. */
export interface BatchDecisionContext {
  deps: Deps;
  session: PostingSession;
  monitor: AmlBatchMonitor;
  limits: LimitGuard;
  routeLimits: RouteLimitGuard | undefined;
  pilotCaps: PilotCapGuard | undefined;
  now: Date;
}

/** What deciding one command produced. */
export interface Decided {
  outcome: AppError | { transfer: Transfer; events: EventRecord[] };
  evidence?: EvidenceDraft | undefined;
  review?: ReviewCase | undefined;
  alerts?: AmlAlertDraft[] | undefined;
  approval?: Approval | undefined;
}

/**
 * One command's decision: compliance first (a block refuses, a review holds the funds for an operator),
 * then the posting rule over the session's sums. Returns the new transfer and what it writes beside it,
 * or the refusal; either may carry the decision's evidence.
 */
export function decideCommand(batch: BatchDecisionContext, command: WriterCommand): Decided {
  if (command.kind === 'refusal') return { outcome: command.error };
  const { limits, routeLimits, pilotCaps, monitor, now } = batch;
  const overLimit = limits.check(command) ?? routeLimits?.check(command) ?? pilotCaps?.check(command);
  if (overLimit) return { outcome: overLimit };
  const aml = monitor.evaluate(command, now);
  const compliance = decideTransferCompliance({ screening: command.screening, ...aml });
  const authorization = compliance.outcome === 'block' ? undefined : authorize(command, monitor, now);
  if (compliance.outcome === 'block' || !authorization) {
    return {
      outcome: complianceBlocked(compliance.blockedBy),
      evidence: decisionEvidence(command, compliance, authorization, undefined),
    };
  }
  if (authorization.decision === 'deny') {
    return {
      outcome: policyDenied(authorization),
      evidence: decisionEvidence(command, compliance, authorization, undefined),
    };
  }
  return decideAllowed(batch, command, compliance, authorization);
}

/** The authorization policy's decision, over the facts known with the source wallet locked. */
function authorize(command: TransferCommand, monitor: AmlBatchMonitor, now: Date): PolicyDecision {
  const t = command.transfer;
  return evaluatePolicy(command.policy, {
    operation: 'transfer',
    facts: {
      amountMinor: t.amountMinor,
      currency: t.currency,
      rail: t.rail,
      destinationType: (t.destination as Destination).type,
      sourceWalletId: command.debitAccountId,
      riskLevel: command.customer?.riskLevel,
      kycStatus: command.customer?.kycStatus,
      counterpartyKnown: monitor.counterpartyKnown(command),
      outgoingWithin: (windowSeconds) => monitor.outgoingWithin(command, windowSeconds, now),
    },
  });
}

/** One record per decided transfer: compliance (screening, AML) and the authorization policy together. */
function decisionEvidence(
  command: TransferCommand,
  compliance: TransferComplianceDecision,
  authorization: PolicyDecision | undefined,
  transferId: string | undefined,
): EvidenceDraft {
  const t = command.transfer;
  return {
    organizationId: t.organizationId,
    kind: 'transfer.decision',
    actor: SYSTEM_ACTOR,
    transferId,
    walletId: command.debitAccountId,
    customerId: command.sourceCustomerId,
    data: {
      ...compliance.evidence,
      authorization: authorization
        ? {
            decision: authorization.decision,
            policy_version: authorization.policyVersion,
            rule: authorization.rule,
            matched: authorization.matched,
          }
        : null,
      created_by: t.createdBy,
      amount: formatAmount(t.amountMinor, t.currency),
      currency: t.currency,
    },
  };
}

/**
 * A transfer compliance and policy let through: posted (or held) if the ledger allows, then held for review,
 * waiting for an approval, settled at once, or pending for its rail; and counted in what later commands of
 * the batch see.
 */
function decideAllowed(
  batch: BatchDecisionContext,
  command: TransferCommand,
  compliance: TransferComplianceDecision,
  authorization: PolicyDecision,
): Decided {
  const { deps, monitor, limits, routeLimits, pilotCaps, now } = batch;
  const t = command.transfer;
  const held = compliance.outcome === 'review';
  // A transfer held for review waits for its approval once the review clears.
  const awaitingApproval =
    !held && authorization.decision === 'require_approval' && command.coveredByApproval === undefined;
  const direct = command.settleAtOnce && !held && !awaitingApproval;
  const refusal = postTransferEntry(batch, command, direct);
  if (refusal) return { outcome: refusal };
  const approval: Approval | undefined = awaitingApproval
    ? newApproval(deps, {
        organizationId: t.organizationId,
        resourceType: 'transfer',
        resourceId: t.id,
        decision: authorization,
        initiatedBy: t.createdBy ?? 'system',
        now,
      })
    : undefined;
  const transfer = decidedTransfer(command, authorization, approval, held, direct, now);
  const events = [transferEvent(deps, 'transfer.created', transfer, now)];
  if (approval) events.push(approvalEvent(deps, approval, now));
  if (direct) events.push(transferEvent(deps, 'transfer.settled', transfer, now));
  const review = compliance.review && reviewCaseOf(deps, command, compliance.review, now);
  monitor.accepted(command, transfer, now);
  limits.accepted(command);
  routeLimits?.accepted(command);
  pilotCaps?.accepted(command);
  const alerts = compliance.alerts.map((hit) => ({
    organizationId: t.organizationId,
    transferId: t.id,
    walletId: command.debitAccountId,
    customerId: command.sourceCustomerId,
    hit,
  }));
  return {
    outcome: { transfer, events },
    evidence: decisionEvidence(command, compliance, authorization, t.id),
    review,
    alerts,
    approval,
  };
}

/**
 * The release gate for a movement that waited, then the transfer's entry in the session: posted when it
 * settles at once, else held. Returns the refusal of either, or undefined once the entry is in.
 */
function postTransferEntry(
  { deps, session, now }: BatchDecisionContext,
  command: TransferCommand,
  direct: boolean,
): AppError | undefined {
  const t = command.transfer;
  const fee = feeOf(t);
  if (fee > 0n && command.feeAccountId === undefined) throw new Error(`fee of ${t.id} without an account`);
  if (command.released) {
    const creditsWallet = session.account(command.creditAccountId)?.kind === 'wallet';
    const gate = session.release(command.released, {
      source: command.debitAccountId,
      destination: creditsWallet ? command.creditAccountId : undefined,
    });
    if (gate.outcome === 'refuse') return refusalError(gate.refusal, 'transfer', gate.side);
  }
  // The fee rides in the transfer's own entry: held with the amount, posted or released with it.
  const refusal = session.tryPost({
    id: deps.newId('journalEntry'),
    organizationId: t.organizationId,
    transferId: t.id,
    kind: direct ? 'direct' : 'hold',
    holdEntryId: null,
    createdAt: now,
    postings: transferPostings(
      direct ? 'posted' : 'pending',
      command.debitAccountId,
      command.creditAccountId,
      t.amountMinor,
      t.currency,
      fee > 0n ? { accountId: command.feeAccountId as string, amountMinor: fee } : undefined,
    ),
  });
  if (refusal) {
    const fromSource = refusal.accountId === command.debitAccountId;
    const param = !fromSource ? 'destination' : refusal.code === 'wallet_not_active' ? 'source' : 'amount';
    return refusalError(refusal, 'transfer', param);
  }
  return undefined;
}

/** The accepted transfer as decided: in review, awaiting its approval, settled at once, or pending for its rail. */
function decidedTransfer(
  command: TransferCommand,
  authorization: PolicyDecision,
  approval: Approval | undefined,
  held: boolean,
  direct: boolean,
  now: Date,
): Transfer {
  const base: Transfer = {
    ...command.transfer,
    createdAt: now,
    updatedAt: now,
    authorization: {
      decision: authorization.decision,
      policyVersion: authorization.policyVersion,
      rule: authorization.rule,
    },
    approvalId: approval?.id ?? command.coveredByApproval ?? null,
  };
  return held
    ? {
        ...base,
        status: 'in_review',
        statusReason: IN_REVIEW_STATUS_REASON,
        ledgerState: 'pending',
        nextRailCheckAt: null,
      }
    : approval
      ? {
          ...base,
          status: 'pending_approval',
          statusReason: AWAITING_APPROVAL_STATUS_REASON,
          ledgerState: 'pending',
          nextRailCheckAt: null,
        }
      : direct
        ? { ...base, status: 'settled', ledgerState: 'posted', settledAt: now }
        : { ...base, status: 'pending', ledgerState: 'pending', nextRailCheckAt: now };
}

/** The open case of a transfer compliance holds for review. */
function reviewCaseOf(
  deps: Deps,
  command: TransferCommand,
  review: NonNullable<TransferComplianceDecision['review']>,
  now: Date,
): ReviewCase {
  const t = command.transfer;
  return openReviewCase(
    {
      id: deps.newId('review'),
      organizationId: t.organizationId,
      kind: review.kind,
      transferId: t.id,
      customerId: command.sourceCustomerId,
      walletId: command.debitAccountId,
      findings: review.findings,
    },
    now,
  );
}

function policyDenied(decision: PolicyDecision): AppError {
  return new AppError({
    status: 422,
    code: 'policy_denied',
    title: 'Denied by policy',
    detail: `This transfer was denied by the organization's policy (version ${decision.policyVersion}, rule '${decision.rule}'); nothing was written.`,
    param: 'amount',
    extensions: { rule: decision.rule, policy_version: String(decision.policyVersion) },
  });
}

function complianceBlocked(rule: RuleHit | undefined): AppError {
  return new AppError({
    status: 422,
    code: 'compliance_blocked',
    title: 'Blocked by compliance',
    detail: `This transfer was blocked by the organization's AML rule${rule ? ` '${rule.ruleName}'` : ''}; nothing was written. Contact your compliance team.`,
    param: 'amount',
  });
}
