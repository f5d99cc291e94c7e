/**
 * The review queue: operators list open cases and decide them. Clearing sends the held transfer on (to the
 * rail, or settled at once when it is internal); rejecting rejects it and releases its hold, and freezes the
 * paying wallet for a confirmed screening match. A held stablecoin deposit (`travel_rule`) is credited when
 * cleared with the originator's data, and left uncredited, owed back, when rejected. The decision, the
 * transfer's or deposit's change, the freeze, the events and the evidence commit together.
 */

import type { Deps } from '../../../app/deps.ts';
import { appendEvidence } from '../../../app/evidence.ts';
import { getById, listPage, lockById } from '../../../app/reads.ts';
import type { TravelRuleInput } from '../../../domain/decisions/travelRule.ts';
import { invalidStateTransition, validationError } from '../../../domain/errors.ts';
import {
  actorName,
  type EvidenceActor,
  type EvidenceDraft,
  requireMemberActor,
} from '../../../domain/evidence.ts';
import {
  freezesWalletOnReject,
  isOpenReview,
  type ReviewCase,
  type ReviewDecision,
} from '../../../domain/reviews.ts';
import type { Queryable } from '../../../store/store.ts';
import { changeWalletStatus, findWallet } from '../../wallets/index.ts';
import {
  findReviewCase,
  listReviewCases,
  type ReviewFilter,
  saveReviewDecision,
} from '../repository/reviews.ts';
import { continueAfterScreening } from './verifications.ts';

/** The review with this id, its row locked for the transaction; 404 when there is none. */
const lockReviewCase = lockById(findReviewCase, 'review');

export const getReview = getById<ReviewCase>(findReviewCase, 'review');

export const listReviews = listPage<ReviewFilter, ReviewCase>(listReviewCases);

export interface ReviewDecisionInput {
  note?: string | undefined;
  /** Rejecting only: freeze the paying wallet too (default: yes for a screening match, no for AML). */
  freezeWallet?: boolean | undefined;
  /** Clearing a held deposit only: the originator's Travel Rule data the sending institution supplied. */
  travelRule?: TravelRuleInput | undefined;
}

/** Clears or rejects an open case, once: the case row is locked, so two decisions racing resolve one way. */
export async function decideReview(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  decision: ReviewDecision,
  input: ReviewDecisionInput,
  actor: EvidenceActor,
): Promise<ReviewCase> {
  const review = await lockOpenReview(tx, organizationId, id, decision, input, actor);
  const deposit =
    review.depositId === null
      ? undefined
      : await deps.reviewSubjects.deposit(
          tx,
          deps,
          organizationId,
          review.depositId,
          decision,
          input.travelRule,
          review.id,
        );
  const transfer =
    review.transferId === null
      ? undefined
      : await deps.reviewSubjects.transfer(tx, deps, organizationId, review.transferId, decision, actor);
  if (review.verificationId !== null) {
    await continueAfterScreening(
      tx,
      deps,
      organizationId,
      review.verificationId,
      decision === 'clear',
      actor,
    );
  }
  const walletFrozen = await freezeOnReject(tx, deps, review, decision, input, actor);
  const now = deps.now();
  const decided: ReviewCase = {
    ...review,
    status: decision === 'clear' ? 'cleared' : 'rejected',
    note: input.note ?? null,
    decidedBy: actorName(actor),
    decidedAt: now,
  };
  await saveReviewDecision(tx, decided);
  await appendEvidence(tx, deps, [
    dispositionEvidence(review, decision, input, actor, { walletFrozen, transfer, deposit }),
  ]);
  return decided;
}

/** Locks the case and checks it may be decided: by a person, while it is open, with data it can take. */
async function lockOpenReview(
  tx: Queryable,
  organizationId: string,
  id: string,
  decision: ReviewDecision,
  input: ReviewDecisionInput,
  actor: EvidenceActor,
): Promise<ReviewCase> {
  const review = await lockReviewCase(tx, organizationId, id);
  // Clearing or rejecting is a person's decision: never a server key's, whatever its scopes.
  requireMemberActor(actor, `${decision} a review`);
  if (!isOpenReview(review.status)) {
    throw invalidStateTransition(
      'Invalid state transition',
      `Review ${review.id} was already ${review.status}; a decided case does not change.`,
    );
  }
  if (input.travelRule !== undefined && review.depositId === null) {
    throw validationError(
      'travel_rule',
      'travel_rule is taken only when clearing a held deposit (a travel_rule case)',
      'not_applicable',
    );
  }
  return review;
}

/** Freezes the case's wallet, if still active, when a rejection calls for it; whether it was called for. */
async function freezeOnReject(
  tx: Queryable,
  deps: Deps,
  review: ReviewCase,
  decision: ReviewDecision,
  input: ReviewDecisionInput,
  actor: EvidenceActor,
): Promise<boolean> {
  const freeze =
    decision === 'reject' &&
    review.walletId !== null &&
    freezesWalletOnReject(review.kind, input.freezeWallet);
  if (freeze && review.walletId !== null) {
    const wallet = await findWallet(tx, review.organizationId, review.walletId);
    if (wallet?.status === 'active') {
      await changeWalletStatus(
        tx,
        deps,
        review.organizationId,
        wallet.id,
        'freeze',
        {
          reason: review.kind === 'screening' ? 'sanctions_match' : 'compliance_review',
          note: `review ${review.id}`,
        },
        actor,
      );
    }
  }
  return freeze;
}

/** The `review.disposition` record: the decision, and what it did to the wallet, transfer or deposit. */
function dispositionEvidence(
  review: ReviewCase,
  decision: ReviewDecision,
  input: ReviewDecisionInput,
  actor: EvidenceActor,
  effects: {
    walletFrozen: boolean;
    transfer: { status: string } | undefined;
    deposit: { id: string; status: string; transferId: string | null } | undefined;
  },
): EvidenceDraft {
  const { deposit } = effects;
  return {
    organizationId: review.organizationId,
    kind: 'review.disposition',
    actor,
    transferId: review.transferId ?? undefined,
    customerId: review.customerId ?? undefined,
    walletId: review.walletId ?? undefined,
    data: {
      review_id: review.id,
      review_kind: review.kind,
      decision,
      note: input.note ?? null,
      wallet_frozen: effects.walletFrozen,
      transfer_status: effects.transfer?.status ?? null,
      ...(deposit
        ? { deposit_id: deposit.id, deposit_status: deposit.status, deposit_transfer: deposit.transferId }
        : {}),
    },
  };
}
