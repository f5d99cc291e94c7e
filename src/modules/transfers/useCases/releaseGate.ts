/**
 * The release gate a status change passes when money that waited moves (out of an approval or a review, to
 * the rail, to settled): the posting module's gate over the transfer's wallets as locked now, and for one let
 * go after an approval or a review, the policy in force, its customer's tier limit and a pilot's caps as they
 * stand now (./statusChanges.ts applies the change).
 */

import type { Deps } from '../../../app/deps.ts';
import { SYSTEM_ACTOR } from '../../../app/evidence.ts';
import { evaluatePolicy, type PolicyDecision } from '../../../domain/decisions/policies.ts';
import type { EvidenceDraft, EvidenceValue } from '../../../domain/evidence.ts';
import { effectiveRiskLevel } from '../../../domain/risk.ts';
import type { Transfer } from '../../../domain/transferRecord.ts';
import type { Destination, releasedMovement } from '../../../domain/transfers.ts';
import type { Queryable } from '../../../store/store.ts';
import { findCurrentPolicy } from '../../authorization/index.ts';
import { type Customer, findCustomer } from '../../customers/index.ts';
import type { PostingSession } from '../../ledger/index.ts';
import { findWallet } from '../../wallets/index.ts';
import { LimitGuard } from './posting/limitGuard.ts';
import { PilotCapGuard } from './posting/pilotCapGuard.ts';
import type { StatusChange } from './statusChanges.ts';

/** Why money that waited may not move now: the failure code, the status reason, and the evidence's details. */
interface GateRefusal {
  code: string;
  reason: string;
  data: Record<string, EvidenceValue>;
}

/**
 * A change that moves money which waited (out of an approval or a review, to the rail, to settled) passes the
 * posting module's release gate over the transfer's wallets as locked now; one let go after an approval or a
 * review is also decided again by a newer policy version in force, its customer's tier limit and a pilot's
 * caps as they stand now. One that no longer passes becomes a failure with the code a new transfer would get
 * (`wallet_not_active`, `policy_denied`, `limit_exceeded`, `pilot_cap_exceeded`): its hold is voided and its limits given back by that same
 * change, once, `transfer.failed` is emitted, and the refusal is recorded as `transfer.release` evidence.
 */
export async function passReleaseGate(
  tx: Queryable,
  deps: Deps,
  gate: PostingSession,
  transfer: Transfer,
  movement: NonNullable<ReturnType<typeof releasedMovement>>,
): Promise<{ change: StatusChange; refused: EvidenceDraft } | undefined> {
  const wallets = { source: transfer.sourceWalletId, destination: transfer.destinationWalletId };
  // An inbound transfer waits only when it arrived for a frozen wallet and was held for review: what moves
  // it on is an operator clearing that review.
  const decision = gate.release(movement, wallets, {
    inboundClearedByReview: transfer.direction === 'inbound',
  });
  let refusal: GateRefusal | undefined;
  if (decision.outcome === 'refuse') {
    refusal = {
      code: decision.refusal.code,
      reason: `${decision.side}_${decision.refusal.code}`,
      data: { wallet_id: decision.refusal.accountId, side: decision.side },
    };
  } else if (
    (movement === 'transfer_approval' || movement === 'transfer_review') &&
    transfer.direction === 'outbound' &&
    transfer.sourceWalletId
  ) {
    refusal = await decideAgainNow(tx, deps, transfer, transfer.sourceWalletId);
  }
  if (!refusal) return undefined;
  return {
    change: { to: 'failed', failureCode: refusal.code, reason: refusal.reason, nextRailCheckAt: null },
    refused: {
      organizationId: transfer.organizationId,
      kind: 'transfer.release',
      actor: SYSTEM_ACTOR,
      transferId: transfer.id,
      walletId: transfer.sourceWalletId ?? transfer.destinationWalletId ?? undefined,
      data: {
        movement,
        outcome: 'refused',
        failure_code: refusal.code,
        from_status: transfer.status,
        decided_under: transfer.authorization
          ? { policy_version: transfer.authorization.policyVersion, rule: transfer.authorization.rule }
          : null,
        ...refusal.data,
      },
    },
  };
}

/**
 * An outbound transfer let go after an approval or a review, decided again as things stand now: a newer
 * policy version in force, its customer's tier limit, a pilot's caps. Undefined when it still passes.
 */
async function decideAgainNow(
  tx: Queryable,
  deps: Deps,
  transfer: Transfer,
  sourceWalletId: string,
): Promise<GateRefusal | undefined> {
  const wallet = await findWallet(tx, transfer.organizationId, sourceWalletId);
  const customer = wallet && (await findCustomer(tx, transfer.organizationId, wallet.ownerId));
  const denied = await policyInForceDenies(tx, transfer, customer);
  const overLimit =
    !denied && wallet
      ? ((await LimitGuard.recheck(tx, { transfer, sourceCustomerId: wallet.ownerId }, transfer.createdAt)) ??
        (await PilotCapGuard.recheck(tx, deps.pilotCaps, transfer)))
      : undefined;
  if (denied) {
    return {
      code: 'policy_denied',
      reason: 'policy_denied',
      data: { policy_version: denied.policyVersion, rule: denied.rule, matched: denied.matched },
    };
  }
  if (overLimit) {
    return {
      code: overLimit.code,
      reason: overLimit.code,
      data: { detail: overLimit.detail, ...overLimit.extensions },
    };
  }
  return undefined;
}

/**
 * The decision of the authorization policy in force now, when a newer version than the one that decided the
 * transfer has come into force and it denies the transfer; undefined otherwise. Facts that need the wallet's
 * history (counterparty, aggregates) were decided when the transfer was created and are not counted again:
 * a rule that needs them does not match here.
 */
async function policyInForceDenies(
  tx: Queryable,
  transfer: Transfer,
  customer: Customer | undefined,
): Promise<PolicyDecision | undefined> {
  const { authorization, sourceWalletId } = transfer;
  if (!authorization || !sourceWalletId) return undefined;
  const policy = await findCurrentPolicy(tx, transfer.organizationId);
  if (!policy || policy.version === authorization.policyVersion) return undefined;
  const decision = evaluatePolicy(policy, {
    operation: 'transfer',
    facts: {
      amountMinor: transfer.amountMinor,
      currency: transfer.currency,
      rail: transfer.rail,
      destinationType: (transfer.destination as Destination).type,
      sourceWalletId,
      kycStatus: customer?.kycStatus,
      riskLevel: customer ? effectiveRiskLevel(customer, customer.riskOverride) : undefined,
    },
  });
  return decision.decision === 'deny' ? decision : undefined;
}
