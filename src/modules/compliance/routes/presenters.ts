/** Wire forms of the compliance surface. */

import type { AmlAlert } from '../../../domain/amlAlerts.ts';
import type { AmlRule } from '../../../domain/decisions/aml.ts';
import type { ReviewCase } from '../../../domain/reviews.ts';
import { maskedSubmission } from '../../../domain/verifications.ts';
import { isoOrNull } from '../../../http/presenters.ts';
import { amlRuleFields } from '../domain.ts';
import type { Verification } from '../useCases/verifications.ts';

export function presentReview(review: ReviewCase) {
  return {
    object: 'review',
    id: review.id,
    kind: review.kind,
    status: review.status,
    transfer: review.transferId,
    deposit: review.depositId,
    customer: review.customerId,
    wallet: review.walletId,
    findings: review.findings,
    note: review.note,
    decided_by: review.decidedBy,
    created_at: review.createdAt.toISOString(),
    decided_at: isoOrNull(review.decidedAt),
  };
}

export function presentAmlRule(rule: AmlRule) {
  return {
    object: 'aml_rule',
    ...amlRuleFields(rule),
    created_at: rule.createdAt.toISOString(),
    updated_at: rule.updatedAt.toISOString(),
  };
}

export function presentAmlAlert(alert: AmlAlert) {
  return {
    object: 'aml_alert',
    id: alert.id,
    status: alert.status,
    rule: alert.ruleId,
    rule_type: alert.ruleType,
    rule_version: alert.ruleVersion,
    action: alert.action,
    transfer: alert.transferId,
    conversion_quote: alert.conversionQuoteId,
    wallet: alert.walletId,
    customer: alert.customerId,
    reason: alert.reason,
    observed: alert.observed,
    disposition: alert.disposition,
    note: alert.note,
    resolved_by: alert.resolvedBy,
    created_at: alert.createdAt.toISOString(),
    resolved_at: isoOrNull(alert.resolvedAt),
  };
}

/** The deciders shown as `provider`: the sandbox's simulated provider, Smile ID, and the age rule before it. */
const PROVIDER_DECIDERS = new Set(['sandbox_provider', 'smile_id', 'age_rule']);

/** What the integrator sees of a verification: id numbers masked, nothing of the sanctions list. */
export function presentVerification(v: Verification) {
  return {
    object: 'verification',
    id: v.id,
    customer: v.customerId,
    type: v.submission.type,
    status: v.status,
    reason: v.reason,
    submission: maskedSubmission(v.submission),
    decided_by: v.decidedBy === null ? null : PROVIDER_DECIDERS.has(v.decidedBy) ? 'provider' : 'operator',
    created_at: v.createdAt.toISOString(),
    decided_at: isoOrNull(v.decidedAt),
  };
}
