/**
 * The compliance decision on a new transfer, pure: what screening found about its counterparty and what
 * the AML rules said, combined into one outcome with the findings an operator reviews and the evidence
 * that records it. Precedence: a block refuses; otherwise a screening hit or an AML `review` holds the
 * transfer for review (a screening hit opens the case, being the graver finding); otherwise it is allowed,
 * and any AML `alert` opens alerts beside it.
 */
import type { EvidenceValue } from '../evidence.ts';
import type { ReviewFindings, ReviewKind } from '../reviews.ts';
import type { AmlHit } from './aml.ts';

/** A counterparty's screening, as the screening service reports it (JSON-safe: scores in basis points). */
export interface ScreeningSummary {
  /** The list version screened against; null when no list is loaded. */
  listVersionId: string | null;
  screenedName: string;
  decision: 'clear' | 'hit';
  /** The list entries matched, for the operator and the evidence; never shown to the integrator. */
  hits: readonly { readonly [key: string]: EvidenceValue }[];
}

/** One AML rule's verdict on the transfer. */
export type RuleHit = AmlHit;

export interface TransferComplianceInput {
  screening?: ScreeningSummary | undefined;
  /** Every rule that was evaluated (id and version), hit or not. */
  rulesEvaluated: readonly { id: string; version: number }[];
  hits: readonly RuleHit[];
}

export type TransferComplianceOutcome = 'allow' | 'review' | 'block';

export interface TransferComplianceDecision {
  outcome: TransferComplianceOutcome;
  /** Set when the outcome is `review`: which queue it belongs to and why. */
  review?: { kind: ReviewKind; findings: ReviewFindings };
  /** Rule hits that open AML alerts (alert and review actions; a block writes nothing but evidence). */
  alerts: readonly RuleHit[];
  /** The block's rule, when blocked. */
  blockedBy?: RuleHit;
  /** The whole decision for the evidence chain. */
  evidence: { readonly [key: string]: EvidenceValue };
}

function hitEvidence(hit: RuleHit): { readonly [key: string]: EvidenceValue } {
  return {
    rule_id: hit.ruleId,
    rule_type: hit.ruleType,
    rule_version: hit.ruleVersion,
    action: hit.action,
    reason: hit.reason,
    observed: hit.observed,
  };
}

function screeningEvidence(screening: ScreeningSummary): { readonly [key: string]: EvidenceValue } {
  return {
    list_version: screening.listVersionId,
    screened_name: screening.screenedName,
    decision: screening.decision,
    hits: screening.hits,
  };
}

export function decideTransferCompliance(input: TransferComplianceInput): TransferComplianceDecision {
  const blockedBy = input.hits.find((h) => h.action === 'block');
  const screeningHit = input.screening?.decision === 'hit';
  const amlReview = input.hits.filter((h) => h.action === 'review');
  const outcome: TransferComplianceOutcome = blockedBy
    ? 'block'
    : screeningHit || amlReview.length > 0
      ? 'review'
      : 'allow';
  const evidence = {
    outcome,
    screening: input.screening ? screeningEvidence(input.screening) : null,
    aml: {
      rules_evaluated: input.rulesEvaluated.map((r) => ({ id: r.id, version: r.version })),
      hits: input.hits.map(hitEvidence),
    },
  };
  if (blockedBy) return { outcome, alerts: [], blockedBy, evidence };
  const alerts = input.hits.filter((h) => h.action !== 'block');
  if (outcome === 'review') {
    const review: { kind: ReviewKind; findings: ReviewFindings } =
      screeningHit && input.screening
        ? { kind: 'screening', findings: { screening: screeningEvidence(input.screening) } }
        : { kind: 'aml', findings: { aml_hits: amlReview.map(hitEvidence) } };
    return { outcome, review, alerts, evidence };
  }
  return { outcome, alerts, evidence };
}
