/**
 * KYC and KYB verifications. A submission is screened (before the transaction: it needs no lock), then, in
 * one transaction with the customer locked: recorded, decided by the environment's provider (the sandbox's
 * magic numbers) or left for an operator, or held by a screening hit for review; the customer's
 * `kyc_status` follows; each change is an event and each decision evidence.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvent } from '../../../app/events.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import { getById, lockById } from '../../../app/reads.ts';
import { tierOf } from '../../../domain/decisions/limits.ts';
import { invalidStateTransition, resourceMissing } from '../../../domain/errors.ts';
import type { EvidenceActor, EvidenceValue } from '../../../domain/evidence.ts';
import { type Page, type PageRequest, toPage } from '../../../domain/pagination.ts';
import { openReviewCase } from '../../../domain/reviews.ts';
import {
  decideVerification,
  maskedSubmission,
  maySubmitVerification,
  type ProviderOutcome,
  type VerificationReason,
  type VerificationSubmission,
} from '../../../domain/verifications.ts';
import type { Queryable } from '../../../store/store.ts';
import { type Customer, findCustomer, getCustomer, saveCustomerCompliance } from '../../customers/index.ts';
import { findOpenReviewOfVerification, insertReviewCases } from '../repository/reviews.ts';
import {
  claimDueVerifications,
  findVerification,
  insertVerification,
  listVerifications,
  saveVerificationDecision,
  type Verification,
} from '../repository/verifications.ts';
import { screenParties } from './sanctions/screenParty.ts';
import { AGE_RULE_DECIDER, underageOutcome } from './smileId/mapping.ts';
import { hasSmileId, queueSmileIdJob } from './smileId/queue.ts';
import { hitFinding } from './transferScreening.ts';
import { verificationProviderFor } from './verificationProvider.ts';

/** The customer with this id, its row locked for the transaction; 404 when there is none. */
const lockCustomer = lockById(findCustomer, 'customer');
/** The verification with this id, its row locked for the transaction; 404 when there is none. */
const lockVerification = lockById(findVerification, 'verification');

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { Verification } from '../repository/verifications.ts';

/** Due deferred decisions one worker pass takes at most. */
export const VERIFICATION_WORKER_BATCH_ROWS = 100;

/** What screening found in a submission's names. */
export interface SubmissionScreening {
  listVersionId: string | null;
  decision: 'clear' | 'hit';
  screened: { name: string; hits: ReturnType<typeof hitFinding>[] }[];
}

/** The names a submission asks to screen: the legal name, and each beneficial owner of a business. */
export async function screenSubmission(
  deps: Deps,
  submission: VerificationSubmission,
): Promise<SubmissionScreening> {
  const parties =
    submission.type === 'individual'
      ? [
          {
            name: submission.legal_name,
            type: 'person' as const,
            country: submission.address.country,
            dateOfBirth: submission.date_of_birth,
          },
        ]
      : [
          { name: submission.legal_name, type: 'entity' as const, country: submission.country },
          ...submission.beneficial_owners.map((o) => ({
            name: o.name,
            type: 'person' as const,
            dateOfBirth: o.date_of_birth,
          })),
        ];
  // One list version for every party, so that the one version recorded is the one each was screened by.
  const results = await screenParties(deps, parties);
  const listVersionId = results[0]?.listVersionId ?? null;
  const screened: SubmissionScreening['screened'] = parties.map((party, i) => ({
    name: party.name,
    hits: (results[i]?.hits ?? []).map(hitFinding),
  }));
  return { listVersionId, decision: screened.some((s) => s.hits.length > 0) ? 'hit' : 'clear', screened };
}

function verificationEventData(v: Verification, customer: Customer): Record<string, unknown> {
  return {
    verification_id: v.id,
    customer_id: v.customerId,
    status: v.status,
    reason: v.reason,
    kyc_status: customer.kycStatus,
    tier: tierOf(customer.kycStatus, customer.type),
  };
}

/** Moves the customer's status with the verification, and writes the event of the change. */
async function recordChange(tx: Queryable, deps: Deps, v: Verification, customer: Customer, now: Date) {
  const updated: Customer = {
    ...customer,
    kycStatus: v.status,
    sanctionsHit: customer.sanctionsHit || v.reason === 'sanctions_match',
    updatedAt: now,
  };
  await saveCustomerCompliance(tx, updated);
  await recordEvent(tx, deps, now, {
    organizationId: v.organizationId,
    type: 'customer.verification.updated',
    resourceId: v.id,
    data: verificationEventData(v, updated),
  });
}

/** Who decided, as a provider records it: its name, and the result code it answered with. */
export interface ProviderDecider {
  name: string;
  resultCode?: string;
}

function resultEvidence(v: Verification, actor: EvidenceActor, resultCode?: string) {
  return {
    organizationId: v.organizationId,
    kind: 'verification.result' as const,
    actor,
    customerId: v.customerId,
    data: {
      verification_id: v.id,
      status: v.status,
      reason: v.reason,
      decided_by: v.decidedBy,
      ...(resultCode === undefined ? {} : { provider_result_code: resultCode }),
      submission: maskedSubmission(v.submission) as { readonly [key: string]: EvidenceValue },
    },
  };
}

/** Applies a provider's outcome to a pending verification (now, or deferred to `decide_at`). */
function applyOutcome(v: Verification, outcome: ProviderOutcome, decidedBy: string, now: Date): Verification {
  if (outcome.status === 'pending') {
    return { ...v, decideAt: new Date(now.getTime() + outcome.decideAfterMs), decidedBy: null };
  }
  return {
    ...v,
    status: decideVerification(v.status, outcome.status),
    reason: outcome.status === 'verified' ? null : outcome.reason,
    decidedBy,
    decideAt: null,
    decidedAt: now,
  };
}

export async function submitVerification(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  customerId: string,
  submission: VerificationSubmission,
  screening: SubmissionScreening,
): Promise<Verification> {
  const customer = await lockCustomer(tx, organizationId, customerId);
  if (!maySubmitVerification(customer.kycStatus)) {
    throw invalidStateTransition(
      'Invalid state transition',
      `Customer ${customer.id} has a verification pending; submit again once it is decided.`,
    );
  }
  const now = deps.now();
  let verification: Verification = {
    id: deps.newId('verification'),
    organizationId,
    customerId,
    status: 'pending',
    reason: null,
    submission,
    screening: {
      list_version: screening.listVersionId,
      decision: screening.decision,
      screened: screening.screened,
    },
    decidedBy: null,
    decideAt: null,
    createdAt: now,
    decidedAt: null,
  };
  // An organization that configured Smile ID has it decide (queued below), after Mkoba's own age rule;
  // otherwise the environment's provider.
  const smileId = screening.decision === 'clear' && (await hasSmileId(tx, organizationId));
  const provider = verificationProviderFor(deps.environment);
  const underage = smileId ? underageOutcome(submission, now) : undefined;
  if (underage) verification = applyOutcome(verification, underage, AGE_RULE_DECIDER, now);
  if (screening.decision === 'clear' && !smileId && provider) {
    verification = applyOutcome(verification, provider.decide(submission, now), provider.name, now);
  }
  await insertVerification(tx, verification);
  if (smileId && verification.status === 'pending') await queueSmileIdJob(tx, deps, verification);
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'screening.result',
      actor: SYSTEM_ACTOR,
      customerId,
      data: { verification_id: verification.id, ...verification.screening },
    },
    ...(verification.status === 'pending' ? [] : [resultEvidence(verification, SYSTEM_ACTOR)]),
  ]);
  if (screening.decision === 'hit') await openScreeningReview(tx, deps, verification, now);
  await recordChange(tx, deps, verification, customer, now);
  return verification;
}

/** Holds a submission whose names screening matched for an operator: a `screening` case on the verification. */
async function openScreeningReview(tx: Queryable, deps: Deps, verification: Verification, now: Date) {
  await insertReviewCases(tx, [
    openReviewCase(
      {
        id: deps.newId('review'),
        organizationId: verification.organizationId,
        kind: 'screening',
        customerId: verification.customerId,
        verificationId: verification.id,
        findings: { screening: verification.screening },
      },
      now,
    ),
  ]);
}

/** An operator's decision on a pending verification (production's only path; the sandbox's too). */
export async function decideVerificationByOperator(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  decision:
    | { status: 'verified' }
    | { status: 'rejected' | 'documents_required'; reason: VerificationReason },
  actor: EvidenceActor,
): Promise<Verification> {
  const verification = await lockVerification(tx, organizationId, id);
  if (verification.status === 'pending' && (await findOpenReviewOfVerification(tx, verification.id))) {
    throw invalidStateTransition(
      'Screening review open',
      `Verification ${verification.id} is held by a screening match: decide its review case first.`,
    );
  }
  return finishVerification(tx, deps, verification, decision, actor);
}

async function finishVerification(
  tx: Queryable,
  deps: Deps,
  verification: Verification,
  outcome: ProviderOutcome,
  actor: EvidenceActor,
  decider?: ProviderDecider,
): Promise<Verification> {
  const customer = await findCustomer(tx, verification.organizationId, verification.customerId, {
    forUpdate: true,
  });
  if (!customer) throw resourceMissing('customer', verification.customerId);
  const now = deps.now();
  const decidedBy = decider?.name ?? (actor.type === 'system' ? 'sandbox_provider' : actor.id);
  const decided = applyOutcome(verification, outcome, decidedBy, now);
  await saveVerificationDecision(tx, decided);
  if (decided.status !== 'pending') {
    await appendEvidence(tx, deps, [resultEvidence(decided, actor, decider?.resultCode)]);
    await recordChange(tx, deps, decided, customer, now);
  }
  return decided;
}

/**
 * A screening review of a verification decided: cleared, the verification goes to the provider (or waits
 * for an operator where there is none); rejected, it is rejected as a sanctions match.
 */
export async function continueAfterScreening(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  verificationId: string,
  cleared: boolean,
  actor: EvidenceActor,
): Promise<void> {
  const verification = await findVerification(tx, organizationId, verificationId, { forUpdate: true });
  if (verification?.status !== 'pending') return;
  if (!cleared) {
    await finishVerification(
      tx,
      deps,
      verification,
      { status: 'rejected', reason: 'sanctions_match' },
      actor,
    );
    return;
  }
  if (await hasSmileId(tx, organizationId)) {
    const underage = underageOutcome(verification.submission, deps.now());
    if (underage === undefined) await queueSmileIdJob(tx, deps, verification);
    else await finishVerification(tx, deps, verification, underage, SYSTEM_ACTOR, { name: AGE_RULE_DECIDER });
    return;
  }
  const provider = verificationProviderFor(deps.environment);
  if (provider) {
    await finishVerification(
      tx,
      deps,
      verification,
      provider.decide(verification.submission, deps.now()),
      SYSTEM_ACTOR,
    );
  }
}

/** A provider's decision on a pending verification (Smile ID's result); none once it is decided. */
export async function decideVerificationByProvider(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  verificationId: string,
  outcome: ProviderOutcome,
  decider: ProviderDecider,
): Promise<Verification | undefined> {
  const verification = await findVerification(tx, organizationId, verificationId, { forUpdate: true });
  if (verification?.status !== 'pending') return undefined;
  return finishVerification(tx, deps, verification, outcome, SYSTEM_ACTOR, decider);
}

/** One pass of the sandbox provider's deferred decisions; returns how many it decided. */
export async function runDueVerifications(deps: Deps): Promise<number> {
  const provider = verificationProviderFor(deps.environment);
  if (!provider) return 0;
  return deps.store.transaction(async (tx) => {
    const due = await claimDueVerifications(tx, deps.now(), VERIFICATION_WORKER_BATCH_ROWS);
    for (const verification of due) {
      await finishVerification(
        tx,
        deps,
        verification,
        provider.decideDeferred(verification.submission),
        SYSTEM_ACTOR,
      );
    }
    return due.length;
  });
}

export const getVerification = getById<Verification>(findVerification, 'verification');

export async function listCustomerVerifications(
  deps: Deps,
  organizationId: string,
  customerId: string,
  page: PageRequest,
): Promise<Page<Verification>> {
  await getCustomer(deps, organizationId, customerId); // 404 unless the customer is the organization's
  return toPage(
    await listVerifications(deps.store, organizationId, customerId, page, page.limit + 1),
    page.limit,
  );
}
