/**
 * The worker's first step on a batch: the policy's decision on the batch as a whole (one approval covers
 * every item when the policy asks for one), then the hold of its total on the ledger. A denied batch, or
 * one its wallet cannot hold, fails before any item runs.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvents } from '../../../app/events.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import {
  decideBatchAuthorization,
  type PolicyDecision,
  type TransferFacts,
} from '../../../domain/decisions/policies.ts';
import type { EvidenceDraft } from '../../../domain/evidence.ts';
import { formatAmount } from '../../../domain/money.ts';
import type { Destination } from '../../../domain/transfers.ts';
import type { Queryable } from '../../../store/store.ts';
import { loadPolicy, newApproval, openApproval } from '../../authorization/index.ts';
import { readCustomerPolicyFacts } from '../../customers/index.ts';
import { PostingSession, refusalError } from '../../ledger/index.ts';
import { findWallets } from '../../wallets/index.ts';
import { PAYMENT_BATCH_ITEMS_MAX, type PaymentBatch, type PaymentBatchItem } from '../domain.ts';
import { findPaymentBatch, listItems, savePaymentBatch } from '../repository.ts';
import { statusEvent } from './events.ts';
import { refuseBatch, reservationEntry, reserveAccount } from './reservation.ts';

/** The facts the transfer rules see of an item, before it runs (no counterparty or window facts yet). */
function staticFacts(
  batch: PaymentBatch,
  item: PaymentBatchItem,
  customer: { riskLevel?: TransferFacts['riskLevel']; kycStatus?: TransferFacts['kycStatus'] },
): TransferFacts {
  return {
    amountMinor: item.amountMinor,
    currency: batch.currency,
    rail: item.rail,
    destinationType: (item.destination as Destination).type,
    sourceWalletId: batch.sourceWalletId,
    riskLevel: customer.riskLevel,
    kycStatus: customer.kycStatus,
  };
}

/** The policy's decision on a batch as a whole, over each item's facts; read before the transaction. */
async function decideOnBatch(
  deps: Deps,
  organizationId: string,
  batch: PaymentBatch,
): Promise<PolicyDecision> {
  const policy = await loadPolicy(deps, organizationId);
  const wallets = await findWallets(deps.store, organizationId, [batch.sourceWalletId]);
  const owner = wallets.get(batch.sourceWalletId)?.ownerId;
  const customer = (owner && (await readCustomerPolicyFacts(deps, organizationId, owner))) || {};
  const items = await listItems(deps.store, batch.id, {}, PAYMENT_BATCH_ITEMS_MAX);
  return decideBatchAuthorization(
    policy,
    { totalMinor: batch.totalMinor, currency: batch.currency, sourceWalletId: batch.sourceWalletId },
    items.map((item) => staticFacts(batch, item, customer)),
  );
}

/** The evidence of the policy's decision on a batch. */
function batchDecisionEvidence(batch: PaymentBatch, decision: PolicyDecision): EvidenceDraft {
  return {
    organizationId: batch.organizationId,
    kind: 'payment_batch.decision',
    actor: SYSTEM_ACTOR,
    walletId: batch.sourceWalletId,
    data: {
      payment_batch_id: batch.id,
      total: formatAmount(batch.totalMinor, batch.currency),
      currency: batch.currency,
      items: batch.itemCount,
      decision: decision.decision,
      policy_version: decision.policyVersion,
      rule: decision.rule,
      matched: decision.matched,
      created_by: batch.createdBy,
    },
  };
}

/**
 * Holds what the batch's items will take from the paying wallet and moves the batch on: `pending_approval`
 * with its approval opened when the policy asks for one, `processing` otherwise. A wallet that cannot hold
 * it (frozen, short) fails the batch. The caller holds the batch's lock.
 */
async function reserveBatch(
  tx: Queryable,
  deps: Deps,
  batch: PaymentBatch,
  decision: PolicyDecision,
  now: Date,
): Promise<void> {
  const reserve = await reserveAccount(tx, deps, batch);
  // The items' amounts and their fees: what the items will take from the wallet as they run.
  const holding = batch.totalMinor + batch.feeTotalMinor;
  const hold = reservationEntry(deps, batch, reserve, holding, now);
  const session = new PostingSession(tx);
  await session.lock([batch.sourceWalletId, reserve]);
  const refusal = session.tryPost(hold);
  if (refusal) {
    await refuseBatch(tx, deps, batch, refusal.code, refusalError(refusal, 'batch').detail, now);
    return;
  }
  await session.flush(now);
  let next: PaymentBatch = {
    ...batch,
    reservationEntryId: hold.id,
    reservedMinor: holding,
    status: decision.decision === 'require_approval' ? 'pending_approval' : 'processing',
    updatedAt: now,
  };
  if (decision.decision === 'require_approval') {
    const approval = newApproval(deps, {
      organizationId: batch.organizationId,
      resourceType: 'payment_batch',
      resourceId: batch.id,
      decision,
      initiatedBy: batch.createdBy,
      now,
    });
    await openApproval(tx, deps, approval);
    next = { ...next, approvalId: approval.id };
  }
  await savePaymentBatch(tx, next);
  await recordEvents(tx, deps, [statusEvent(deps, next, now)]);
}

/** The worker's first step: the policy's decision on the whole batch, and the hold of its total. */
export async function authorizeAndReserve(deps: Deps, organizationId: string, id: string): Promise<void> {
  const found = await findPaymentBatch(deps.store, organizationId, id);
  if (found?.status !== 'validating') return;
  const decision = await decideOnBatch(deps, organizationId, found);
  await deps.store.transaction(async (tx) => {
    const batch = await findPaymentBatch(tx, organizationId, id, { forUpdate: true });
    if (batch?.status !== 'validating') return;
    const now = deps.now();
    const authorized: PaymentBatch = {
      ...batch,
      authorization: {
        decision: decision.decision,
        policyVersion: decision.policyVersion,
        rule: decision.rule,
      },
    };
    if (decision.decision === 'deny') {
      await refuseBatch(
        tx,
        deps,
        authorized,
        'policy_denied',
        `denied by policy version ${decision.policyVersion}, rule '${decision.rule}'`,
        now,
      );
    } else {
      await reserveBatch(tx, deps, authorized, decision, now);
    }
    // Appended last, once the wallet's account is locked: the evidence chain head is the last lock a money
    // movement takes (src/store/lockOrder.ts).
    await appendEvidence(tx, deps, [batchDecisionEvidence(batch, decision)]);
  });
}
