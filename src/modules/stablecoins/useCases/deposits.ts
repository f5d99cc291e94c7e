/**
 * Stablecoin deposits: the decision to credit one once it has its confirmations (or drop it when a
 * reorganisation removed it first), and an operator's decision on one held for review. Addresses are
 * depositAddresses.ts; what the chain says (deposits seen, confirmations, reorganisations) chainDeposits.ts.
 *
 * What we make of the chain's word is decided by the deposit worker alone (`decideDeposit`), one deposit per
 * transaction under its row lock, so a deposit is credited at most once; the database backs this with a
 * unique index on the chain transfer (network, hash, log index), a unique transfer per deposit, and a
 * trigger that lets a deposit's status only move forward.
 *
 * A confirmed deposit whose required Travel Rule data is missing is held instead (`held_for_review`, a
 * `travel_rule` review case): an operator who clears the case supplies the originator's data and the
 * deposit is credited by the same decision the worker takes; one who rejects it leaves it uncredited,
 * `rejected`, owed back to its sender.
 */

import type { Deps, ReviewSubjects } from '../../../app/deps.ts';
import { newEvent, recordEvents } from '../../../app/events.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import { getById, listPage, lockById } from '../../../app/reads.ts';
import {
  checkTravelRuleData,
  type TravelRuleInput,
  travelRuleDataInvalid,
} from '../../../domain/decisions/travelRule.ts';
import { AppError, invalidStateTransition, validationError } from '../../../domain/errors.ts';
import type { EventRecord } from '../../../domain/events.ts';
import { formatAmount } from '../../../domain/money.ts';
import { openReviewCase } from '../../../domain/reviews.ts';
import { type Deposit, judgeDeposit } from '../../../domain/stablecoins.ts';
import type { Wallet } from '../../../domain/wallets.ts';
import { findEvidenceRecord } from '../../../store/repositories/evidence.ts';
import type { Queryable } from '../../../store/store.ts';
import { insertReviewCases } from '../../compliance/index.ts';
import { findCustomer } from '../../customers/index.ts';
import { creditFromRail } from '../../transfers/index.ts';
import { requireWallet } from '../../wallets/index.ts';
import { findDeposit, listDeposits, saveDeposit } from '../repository/deposits.ts';

/** A deposit's amount and chain transfer in wire form: the part its events and its API object share. */
export function depositOnChainWire(d: Deposit) {
  return {
    amount: formatAmount(d.amountMinor, d.asset),
    currency: d.asset,
    network: d.network,
    address: d.address,
    tx_hash: d.txHash,
    log_index: d.logIndex,
    confirmations: d.confirmations,
    required_confirmations: d.requiredConfirmations,
  };
}

export function depositEventData(d: Deposit): Record<string, unknown> {
  return {
    deposit_id: d.id,
    status: d.status,
    wallet: d.walletId,
    ...depositOnChainWire(d),
    transfer: d.transferId,
  };
}

export const depositEvent = (deps: Deps, type: string, d: Deposit, now: Date): EventRecord =>
  newEvent(
    deps,
    { organizationId: d.organizationId, type, resourceId: d.id, data: depositEventData(d) },
    now,
  );

/** Saves a deposit that has just moved and records the event that says so; answers the deposit. */
async function saveMovedDeposit(
  tx: Queryable,
  deps: Deps,
  moved: Deposit,
  type: string,
  now: Date,
): Promise<Deposit> {
  await saveDeposit(tx, moved);
  await recordEvents(tx, deps, [depositEvent(deps, type, moved, now)]);
  return moved;
}

/**
 * Travel Rule data given for a deposit, its beneficiary filled in: the beneficiary is our own customer,
 * named from the customer record unless the sender said more.
 */
export async function withDepositBeneficiary(
  tx: Queryable,
  wallet: Wallet,
  input: TravelRuleInput,
): Promise<TravelRuleInput> {
  const customer = await findCustomer(tx, wallet.organizationId, wallet.ownerId);
  return { ...input, beneficiary: input.beneficiary ?? { name: customer?.name ?? wallet.ownerId } };
}

/**
 * The deposit worker's decision on one locked deposit: credit it through the posting module once it has
 * its confirmations (or hold it for review when its required Travel Rule data is missing), drop it once the
 * chain dropped it, else wait for the next observation. Clearing a held deposit's review comes here too.
 */
export async function decideDeposit(tx: Queryable, deps: Deps, deposit: Deposit): Promise<Deposit> {
  const now = deps.now();
  switch (judgeDeposit(deposit)) {
    case 'hold': {
      const held: Deposit = {
        ...deposit,
        status: 'held_for_review',
        nextCheckAt: null,
        updatedAt: now,
        heldAt: now,
      };
      await saveDeposit(tx, held);
      await openTravelRuleReview(tx, deps, held, now);
      await recordEvents(tx, deps, [depositEvent(deps, 'deposit.held_for_review', held, now)]);
      return held;
    }
    case 'wait': {
      const waiting = { ...deposit, nextCheckAt: null, updatedAt: now };
      await saveDeposit(tx, waiting);
      return waiting;
    }
    case 'reorg': {
      const reorged: Deposit = {
        ...deposit,
        status: 'reorged',
        nextCheckAt: null,
        updatedAt: now,
        reorgedAt: now,
      };
      return saveMovedDeposit(tx, deps, reorged, 'deposit.reorged', now);
    }
    case 'credit': {
      const wallet = await requireWallet(tx, deposit.organizationId, deposit.walletId);
      const transfer = await creditFromRail(tx, deps, wallet, {
        amountMinor: deposit.amountMinor,
        rail: 'digital_asset',
        network: deposit.network,
        railReference: deposit.txHash,
        statusReason: 'deposit',
        metadata: { deposit: deposit.id },
        receivedInto: 'trust',
      });
      const credited: Deposit = {
        ...deposit,
        status: 'credited',
        transferId: transfer.id,
        nextCheckAt: null,
        updatedAt: now,
        creditedAt: now,
      };
      return saveMovedDeposit(tx, deps, credited, 'deposit.credited', now);
    }
  }
}

/** Opens the `travel_rule` review case of a deposit held for its missing originator data, with its evidence. */
async function openTravelRuleReview(tx: Queryable, deps: Deps, deposit: Deposit, now: Date): Promise<void> {
  const wallet = await requireWallet(tx, deposit.organizationId, deposit.walletId);
  const findings = {
    reason: 'travel_rule_missing',
    deposit_id: deposit.id,
    amount: formatAmount(deposit.amountMinor, deposit.asset),
    currency: deposit.asset,
    network: deposit.network,
    address: deposit.address,
    tx_hash: deposit.txHash,
    travel_rule_evidence: deposit.travelRuleEvidenceId,
  };
  const reviewId = deps.newId('review');
  await insertReviewCases(tx, [
    openReviewCase(
      {
        id: reviewId,
        organizationId: deposit.organizationId,
        kind: 'travel_rule',
        customerId: wallet.ownerId,
        walletId: wallet.id,
        depositId: deposit.id,
        findings,
      },
      now,
    ),
  ]);
  await appendEvidence(tx, deps, [
    {
      organizationId: deposit.organizationId,
      kind: 'deposit.decision',
      actor: SYSTEM_ACTOR,
      walletId: wallet.id,
      customerId: wallet.ownerId,
      data: { outcome: 'held_for_review', review_id: reviewId, ...findings },
    },
  ]);
}

function travelRuleMissing(depositId: string): AppError {
  return new AppError({
    status: 422,
    code: 'travel_rule_required',
    title: 'Travel Rule data required',
    detail: `Deposit ${depositId} is held because the Travel Rule requires the originator's data and none came with it: clear it with travel_rule.originator as the sending institution gave it, or reject it.`,
    param: 'travel_rule',
  });
}

/** The deposit, its row locked until the transaction ends; a 404 when there is none. */
export const lockDeposit = lockById(findDeposit, 'deposit');

/** The held deposit an operator decides, locked; a 409 when it is not held (any more). */
async function lockHeldDeposit(tx: Queryable, organizationId: string, depositId: string): Promise<Deposit> {
  const deposit = await lockDeposit(tx, organizationId, depositId);
  if (deposit.status !== 'held_for_review') {
    throw invalidStateTransition(
      'Deposit not held',
      `Deposit ${deposit.id} is ${deposit.status}, not held for review.`,
    );
  }
  return deposit;
}

/** Rejecting a held deposit: never credited, `rejected`, owed back to its sender. Takes no Travel Rule data. */
async function rejectHeldDeposit(
  tx: Queryable,
  deps: Deps,
  deposit: Deposit,
  input: TravelRuleInput | undefined,
  now: Date,
): Promise<Deposit> {
  if (input !== undefined) {
    throw validationError(
      'travel_rule',
      'travel_rule is taken only when clearing a held deposit',
      'not_applicable',
    );
  }
  const rejected: Deposit = { ...deposit, status: 'rejected', updatedAt: now, rejectedAt: now };
  return saveMovedDeposit(tx, deps, rejected, 'deposit.rejected', now);
}

/**
 * Clearing a held deposit: the originator's data the operator supplied, checked like a report's, is kept as
 * a new `deposit.travel_rule` record that replaces the one that recorded it missing, and the deposit is
 * credited by the worker's own decision.
 */
async function clearHeldDeposit(
  tx: Queryable,
  deps: Deps,
  deposit: Deposit,
  input: TravelRuleInput | undefined,
  reviewId: string,
  now: Date,
): Promise<Deposit> {
  const { organizationId } = deposit;
  if (input === undefined) throw travelRuleMissing(deposit.id);
  const wallet = await requireWallet(tx, organizationId, deposit.walletId);
  const checked = checkTravelRuleData(await withDepositBeneficiary(tx, wallet, input), {
    destinationAddress: deposit.address,
    today: now,
  });
  if (!checked.data) throw travelRuleDataInvalid(checked.errors);
  const missing =
    deposit.travelRuleEvidenceId === null
      ? undefined
      : await findEvidenceRecord(tx, organizationId, deposit.travelRuleEvidenceId);
  const evidenceId = deps.newId('evidence');
  // The deposit is decided (and credited) first, the evidence appended after: the chain head is the last
  // lock a money movement takes (src/store/lockOrder.ts). The record's id is known before it is written.
  const decided = await decideDeposit(tx, deps, {
    ...deposit,
    travelRuleEvidenceId: evidenceId,
    travelRuleReceived: true,
  });
  await appendEvidence(tx, deps, [
    {
      id: evidenceId,
      organizationId,
      kind: 'deposit.travel_rule',
      actor: SYSTEM_ACTOR,
      walletId: wallet.id,
      customerId: wallet.ownerId,
      data: {
        // The threshold that required it, as first recorded; now received, from the operator's review.
        ...(missing?.data ?? {}),
        deposit_id: deposit.id,
        required: true,
        received: true,
        supplied_by_review: reviewId,
        replaces: deposit.travelRuleEvidenceId,
        originator: checked.data.originator as never,
        beneficiary: checked.data.beneficiary as never,
      },
    },
  ]);
  return decided;
}

/**
 * An operator's decision on a deposit held for review (the `travel_rule` case, locked by the caller).
 * Clearing takes the originator's data the sending institution supplied (checked like a report's), keeps it
 * as a new `deposit.travel_rule` record, and credits the deposit by the worker's own decision; rejecting
 * leaves it uncredited and `rejected`, owed back to its sender. The deposit row is locked, and only a held
 * deposit moves, so a decision applies once.
 */
export const decideHeldDeposit: ReviewSubjects['deposit'] = async (
  tx,
  deps,
  organizationId,
  depositId,
  decision,
  input,
  reviewId,
) => {
  const deposit = await lockHeldDeposit(tx, organizationId, depositId);
  const now = deps.now();
  if (decision === 'reject') return rejectHeldDeposit(tx, deps, deposit, input, now);
  return clearHeldDeposit(tx, deps, deposit, input, reviewId, now);
};

export const getDeposit = getById<Deposit>(findDeposit, 'deposit');

export const listOrganizationDeposits = listPage(listDeposits);
