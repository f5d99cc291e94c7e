/**
 * Review cases: a transfer held for a person to look at, because a screening hit or an AML rule asked for
 * it. One queue for both kinds; an operator clears a case (the transfer goes on) or rejects it (the
 * transfer is rejected and its hold released; for a screening match the wallet is frozen too).
 */
import type { EvidenceValue } from './evidence.ts';

/**
 * `frozen_wallet`: money a rail delivered for a frozen wallet, held until an operator lets it in or sends it
 * back. `travel_rule`: a stablecoin deposit whose required originator data did not come, held uncredited
 * until an operator supplies the data (it is credited) or rejects it (it is owed back to its sender).
 */
export const REVIEW_KINDS = ['screening', 'aml', 'frozen_wallet', 'travel_rule'] as const;
export type ReviewKind = (typeof REVIEW_KINDS)[number];

export const REVIEW_STATUSES = ['open', 'cleared', 'rejected'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

/** The decisions an operator takes on an open case. */
export const REVIEW_DECISIONS = ['clear', 'reject'] as const;
export type ReviewDecision = (typeof REVIEW_DECISIONS)[number];

/** The operator's note on a decision. */
export const REVIEW_NOTE_LENGTH_MAX = 1_000;

/** What the integrator sees on a held transfer: that it is in review, never why. */
export const IN_REVIEW_STATUS_REASON = 'compliance_review';
/** The status reason of a transfer an operator rejected. */
export const REVIEW_REJECTED_STATUS_REASON = 'compliance_rejected';

/** What opened a case: JSON-safe, for the operator and the evidence chain. */
export type ReviewFindings = { readonly [key: string]: EvidenceValue };

export interface ReviewCase {
  id: string;
  organizationId: string;
  kind: ReviewKind;
  status: ReviewStatus;
  transferId: string | null;
  customerId: string | null;
  walletId: string | null;
  /** The customer verification a screening hit holds, for a case about a customer rather than a transfer. */
  verificationId: string | null;
  /** The stablecoin deposit a `travel_rule` case holds. */
  depositId: string | null;
  findings: ReviewFindings;
  note: string | null;
  decidedBy: string | null;
  createdAt: Date;
  decidedAt: Date | null;
}

/** What a new case names: what opened it and whom it is about, and the one thing it holds (the rest null). */
export type ReviewCaseOpening = Pick<
  ReviewCase,
  'id' | 'organizationId' | 'kind' | 'customerId' | 'findings'
> &
  Partial<Pick<ReviewCase, 'transferId' | 'walletId' | 'verificationId' | 'depositId'>>;

/** A case opened at `now`: open, with no note and no decision yet. */
export function openReviewCase(opening: ReviewCaseOpening, now: Date): ReviewCase {
  return {
    ...opening,
    status: 'open',
    transferId: opening.transferId ?? null,
    walletId: opening.walletId ?? null,
    verificationId: opening.verificationId ?? null,
    depositId: opening.depositId ?? null,
    note: null,
    decidedBy: null,
    createdAt: now,
    decidedAt: null,
  };
}

/** Whether a case with this status may take a decision; a decided case never changes again. */
export function isOpenReview(status: ReviewStatus): boolean {
  return status === 'open';
}

/**
 * The wallet freeze a rejection brings: a confirmed screening match freezes the paying wallet; an AML
 * rejection does only when the operator asks for it.
 */
export function freezesWalletOnReject(kind: ReviewKind, requested: boolean | undefined): boolean {
  return requested ?? kind === 'screening';
}
