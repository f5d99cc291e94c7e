/**
 * Stablecoin deposits: an address per wallet and network, deposits seen on chain, and the decision to
 * credit them once they have their confirmations (or drop them when a reorganisation removed them first).
 *
 * What the chain says (confirmations, included or dropped) is written by whoever watches the chain: in the
 * sandbox the simulated chain's routes; in production a custody provider's notifications, which do not
 * exist yet. What we make of it is decided by the deposit worker alone (`decideDeposit`), one deposit per
 * transaction under its row lock, so a deposit is credited at most once; the database backs this with a
 * unique index on the chain transfer (network, hash, log index), a unique transfer per deposit, and a
 * trigger that lets a deposit's status only move forward.
 *
 * A confirmed deposit whose required Travel Rule data is missing is held instead (`held_for_review`, a
 * `travel_rule` review case): an operator who clears the case supplies the originator's data and the
 * deposit is credited by the same decision the worker takes; one who rejects it leaves it uncredited,
 * `rejected`, owed back to its sender.
 *
 * Past 400 lines: addresses, chain observations and the one credit decision share the deposit machine.
 */
import {
  checkTravelRuleData,
  decideTravelRule,
  type TravelRuleInput,
} from '../domain/decisions/travelRule.ts';
import {
  checkAddress,
  DIGITAL_ASSET_NETWORKS,
  type DigitalAssetNetwork,
  isDigitalAsset,
  isDigitalAssetNetwork,
} from '../domain/digitalAssets.ts';
import { AppError, resourceMissing, validationError } from '../domain/errors.ts';
import type { EventRecord } from '../domain/events.ts';
import { checkSingleAmount, formatAmount, parseAmount } from '../domain/money.ts';
import { type Page, type PageRequest, toPage } from '../domain/pagination.ts';
import {
  DEPOSIT_CONFIRMATIONS_REQUIRED,
  type Deposit,
  type DepositAddress,
  type DepositStatus,
  isDepositFinal,
  judgeDeposit,
  sandboxDepositAddress,
  simulatedChainTransactionHash,
} from '../domain/stablecoins.ts';
import type { Wallet } from '../domain/wallets.ts';
import { findCustomer } from '../store/repositories/customers.ts';
import {
  findDepositAddressByAddress,
  insertDepositAddressIfAbsent,
  listDepositAddresses,
} from '../store/repositories/depositAddresses.ts';
import {
  findDeposit,
  findDepositByChainTransfer,
  insertDepositIfNew,
  listDeposits,
  lockPendingDeposits,
  saveDeposit,
} from '../store/repositories/deposits.ts';
import { findEvidenceRecord } from '../store/repositories/evidence.ts';
import { insertReviewCases } from '../store/repositories/reviews.ts';
import { findVerifiedCountry } from '../store/repositories/verifications.ts';
import { findWallet } from '../store/repositories/wallets.ts';
import type { Queryable } from '../store/store.ts';
import type { Deps } from './deps.ts';
import { requireApprovedRoute } from './digitalAssetRoutes.ts';
import { newEvent, recordEvents } from './events.ts';
import { appendEvidence, SYSTEM_ACTOR } from './evidence.ts';
import { creditFromRail } from './transfers.ts';
import type { TravelRuleSettingsView } from './travelRule.ts';

/** The most blocks one advance of the simulated chain moves. */
export const SANDBOX_CHAIN_ADVANCE_BLOCKS_MAX = 10_000;
/** Confirmations are counted up to what the column (a 32-bit integer) holds. */
const CONFIRMATIONS_MAX = 2_147_483_647;

function custodyNotConfigured(): AppError {
  return new AppError({
    status: 422,
    code: 'custody_not_configured',
    title: 'No custody provider',
    detail:
      'Deposit addresses need a custody provider that holds the keys and watches the chain; none is configured in this deployment, so no address is issued. The sandbox issues addresses on its simulated chain.',
    param: 'network',
  });
}

function requireNetwork(network: string, param: string): DigitalAssetNetwork {
  if (!isDigitalAssetNetwork(network)) {
    throw validationError(
      param,
      `${param} must be one of: ${DIGITAL_ASSET_NETWORKS.join(', ')}`,
      'invalid_value',
    );
  }
  return network;
}

/** A stablecoin wallet of the organization, or the 404 / 400 naming `param`. */
async function stablecoinWallet(db: Queryable, organizationId: string, walletId: string, param: string) {
  const wallet = await findWallet(db, organizationId, walletId);
  if (!wallet) throw resourceMissing('wallet', walletId, param);
  if (!isDigitalAsset(wallet.currency)) {
    throw validationError(
      param,
      `wallet ${walletId} holds ${wallet.currency}; deposit addresses are for USDC and USDT wallets`,
      'unsupported_currency',
    );
  }
  return { wallet, asset: wallet.currency };
}

/**
 * The checks of a new deposit address that read outside the transaction (the route, with the
 * organization's defaults written on first use): the wallet holds a stablecoin, and its route on the
 * network is enabled. Production refuses first: there is no custody provider to hold the address's keys.
 */
export async function prepareDepositAddress(
  deps: Deps,
  organizationId: string,
  walletId: string,
  network: string,
): Promise<void> {
  const checkedNetwork = requireNetwork(network, 'network');
  if (deps.environment !== 'sandbox') throw custodyNotConfigured();
  const { asset } = await stablecoinWallet(deps.store, organizationId, walletId, 'id');
  await requireApprovedRoute(deps, organizationId, asset, checkedNetwork, 'network');
}

/** The wallet's address on the network, issued on first request (the same one after). */
export async function issueDepositAddress(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  walletId: string,
  network: DigitalAssetNetwork,
): Promise<{ address: DepositAddress; created: boolean }> {
  const { wallet, asset } = await stablecoinWallet(tx, organizationId, walletId, 'id');
  if (wallet.status === 'closed') {
    throw new AppError({
      status: 409,
      code: 'invalid_state_transition',
      title: 'Wallet closed',
      detail: `Wallet ${wallet.id} is closed: it receives nothing.`,
    });
  }
  const candidate: DepositAddress = {
    id: deps.newId('depositAddress'),
    organizationId,
    walletId,
    asset,
    network,
    address: sandboxDepositAddress(walletId, network),
    createdAt: deps.now(),
  };
  const address = await insertDepositAddressIfAbsent(tx, candidate);
  return { address, created: address.id === candidate.id };
}

export async function walletDepositAddresses(
  deps: Deps,
  organizationId: string,
  walletId: string,
): Promise<DepositAddress[]> {
  const wallet = await findWallet(deps.store, organizationId, walletId);
  if (!wallet) throw resourceMissing('wallet', walletId);
  return listDepositAddresses(deps.store, organizationId, walletId);
}

export function depositEventData(d: Deposit): Record<string, unknown> {
  return {
    deposit_id: d.id,
    status: d.status,
    wallet: d.walletId,
    amount: formatAmount(d.amountMinor, d.asset),
    currency: d.asset,
    network: d.network,
    address: d.address,
    tx_hash: d.txHash,
    log_index: d.logIndex,
    confirmations: d.confirmations,
    required_confirmations: d.requiredConfirmations,
    transfer: d.transferId,
  };
}

const depositEvent = (deps: Deps, type: string, d: Deposit, now: Date): EventRecord =>
  newEvent(
    deps,
    { organizationId: d.organizationId, type, resourceId: d.id, data: depositEventData(d) },
    now,
  );

export interface ChainDepositInput {
  network: string;
  address: string;
  amount: string | number;
  tx_hash?: string;
  log_index?: number;
  confirmations?: number;
  travel_rule?: TravelRuleInput;
}

/**
 * A transfer to one of the organization's deposit addresses seen on the (simulated) chain. The first
 * report records a `pending` deposit (`deposit.detected`); the same chain transfer reported again, for the
 * same address and amount, is the same deposit and changes nothing (a different amount or address for it
 * is a 409). Travel Rule data about the originator is checked and kept as evidence; when the amount
 * requires it and it is missing, that is recorded too (the chain cannot be refused, so the deposit is still
 * recorded; once confirmed it is held for review rather than credited: see docs/STABLECOINS.md).
 */
export async function recordChainDeposit(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: ChainDepositInput,
  settings: TravelRuleSettingsView,
  amountText?: string,
): Promise<{ deposit: Deposit; created: boolean }> {
  const network = requireNetwork(input.network, 'network');
  const checked = checkAddress(input.address, network);
  if (!checked.ok) {
    throw validationError(
      'address',
      `address is not a valid ${network} address: ${checked.message}`,
      checked.code,
    );
  }
  const owned = await findDepositAddressByAddress(tx, network, input.address);
  if (!owned || owned.organizationId !== organizationId) {
    throw resourceMissing('deposit address', input.address, 'address');
  }
  const amountMinor = checkSingleAmount(
    parseAmount(input.amount, owned.asset, 'amount', amountText),
    owned.asset,
  );
  const now = deps.now();
  const id = deps.newId('deposit');
  const txHash = input.tx_hash ?? simulatedChainTransactionHash(id, network);
  const logIndex = input.log_index ?? 0;
  const same = (d: Deposit) => d.address === owned.address && d.amountMinor === amountMinor;
  const existing = await findDepositByChainTransfer(tx, network, txHash, logIndex);
  if (existing) return repeated(existing, same(existing));

  const wallet = await findWallet(tx, organizationId, owned.walletId);
  if (!wallet) throw resourceMissing('wallet', owned.walletId);
  const travelRule = await depositTravelRule(tx, deps, wallet, {
    id,
    amountMinor,
    network,
    address: owned.address,
    txHash,
    input: input.travel_rule,
    settings,
  });
  const confirmations = input.confirmations ?? 0;
  const deposit: Deposit = {
    id,
    organizationId,
    walletId: owned.walletId,
    depositAddressId: owned.id,
    asset: owned.asset,
    network,
    address: owned.address,
    txHash,
    logIndex,
    amountMinor,
    confirmations,
    chainState: 'included',
    requiredConfirmations: DEPOSIT_CONFIRMATIONS_REQUIRED[network],
    status: 'pending',
    transferId: null,
    travelRuleEvidenceId: travelRule?.evidenceId ?? null,
    travelRuleRequired: travelRule?.required ?? null,
    travelRuleReceived: travelRule?.received ?? null,
    // The worker looks at it at once: it may already have its confirmations.
    nextCheckAt: now,
    createdAt: now,
    updatedAt: now,
    creditedAt: null,
    reorgedAt: null,
    heldAt: null,
    rejectedAt: null,
  };
  const inserted = await insertDepositIfNew(tx, deposit);
  if (!inserted) {
    // Recorded by a concurrent report of the same chain transfer (its insert was waited for).
    const winner = await findDepositByChainTransfer(tx, network, txHash, logIndex);
    if (!winner) throw new Error('deposit vanished after insert conflict');
    return repeated(winner, same(winner));
  }
  if (travelRule) await appendEvidence(tx, deps, [travelRule.evidence]);
  await recordEvents(tx, deps, [depositEvent(deps, 'deposit.detected', inserted, now)]);
  return { deposit: inserted, created: true };
}

function repeated(existing: Deposit, same: boolean): { deposit: Deposit; created: boolean } {
  if (!same) {
    throw new AppError({
      status: 409,
      code: 'invalid_state_transition',
      title: 'Chain transfer already recorded',
      detail: `Transaction ${existing.txHash} (log index ${existing.logIndex}) on ${existing.network} is already deposit ${existing.id}, to another address or for another amount.`,
      param: 'tx_hash',
    });
  }
  return { deposit: existing, created: false };
}

/**
 * The Travel Rule on an incoming deposit: required when its USD value reaches the threshold of the
 * receiving customer's jurisdiction. Data given is checked (a 400 naming each field) and kept as evidence;
 * data required and missing is recorded as such. Nothing to keep below the threshold without data.
 */
async function depositTravelRule(
  tx: Queryable,
  deps: Deps,
  wallet: Wallet,
  deposit: {
    id: string;
    amountMinor: bigint;
    network: DigitalAssetNetwork;
    address: string;
    txHash: string;
    input: TravelRuleInput | undefined;
    settings: TravelRuleSettingsView;
  },
) {
  const country = await findVerifiedCountry(tx, wallet.organizationId, wallet.ownerId);
  const decision = decideTravelRule(
    { amountMinor: deposit.amountMinor, currency: wallet.currency, country },
    deposit.settings.settings,
  );
  if (deposit.input === undefined && !decision.required) return undefined;
  let data: Record<string, unknown> | null = null;
  if (deposit.input !== undefined) {
    // The beneficiary is our own customer: named from the customer record unless the sender said more.
    const customer = await findCustomer(tx, wallet.organizationId, wallet.ownerId);
    const checked = checkTravelRuleData(
      {
        ...deposit.input,
        beneficiary: deposit.input.beneficiary ?? { name: customer?.name ?? wallet.ownerId },
      },
      { destinationAddress: deposit.address, today: deps.now() },
    );
    if (!checked.data) {
      const first = checked.errors[0];
      throw new AppError({
        status: 400,
        code: 'validation_error',
        title: 'Invalid request',
        detail: `travel_rule is incomplete or malformed: ${checked.errors.map((e) => e.message).join('; ')}.`,
        param: first?.param,
        errors: checked.errors,
      });
    }
    data = { originator: checked.data.originator, beneficiary: checked.data.beneficiary };
  }
  const evidenceId = deps.newId('evidence');
  return {
    evidenceId,
    required: decision.required,
    received: data !== null,
    evidence: {
      id: evidenceId,
      organizationId: wallet.organizationId,
      kind: 'deposit.travel_rule' as const,
      actor: SYSTEM_ACTOR,
      walletId: wallet.id,
      customerId: wallet.ownerId,
      data: {
        deposit_id: deposit.id,
        required: decision.required,
        received: data !== null,
        jurisdiction: decision.jurisdiction,
        threshold: decision.threshold,
        amount_usd: decision.amountUsd,
        rate: decision.rate,
        asset: wallet.currency,
        network: deposit.network,
        address: deposit.address,
        tx_hash: deposit.txHash,
        originator: (data?.originator ?? null) as never,
        beneficiary: (data?.beneficiary ?? null) as never,
      },
    },
  };
}

/**
 * The simulated chain moves on by `blocks` on a network: every pending deposit of the organization there
 * that the chain still holds gains that many confirmations, and is put in front of the deposit worker.
 */
export async function advanceSandboxChain(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: { network: string; blocks: number },
): Promise<Deposit[]> {
  const network = requireNetwork(input.network, 'network');
  const now = deps.now();
  const moved: Deposit[] = [];
  for (const d of await lockPendingDeposits(tx, organizationId, network)) {
    if (d.chainState !== 'included') continue;
    const confirmations = Math.min(d.confirmations + input.blocks, CONFIRMATIONS_MAX);
    const next = { ...d, confirmations, nextCheckAt: now, updatedAt: now };
    await saveDeposit(tx, next);
    moved.push(next);
  }
  return moved;
}

/**
 * A reorganisation of the simulated chain drops a deposit's transaction before it is final. A deposit that
 * has its confirmations (or was decided) is final: a 409.
 */
export async function reorgSandboxDeposit(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  depositId: string,
): Promise<Deposit> {
  const deposit = await findDeposit(tx, organizationId, depositId, { forUpdate: true });
  if (!deposit) throw resourceMissing('deposit', depositId);
  if (isDepositFinal(deposit)) {
    throw new AppError({
      status: 409,
      code: 'invalid_state_transition',
      title: 'Deposit is final',
      detail: `Deposit ${deposit.id} has ${deposit.confirmations} of ${deposit.requiredConfirmations} confirmations (status ${deposit.status}): it is final, and the simulated chain does not reorganise past finality.`,
    });
  }
  const now = deps.now();
  const dropped: Deposit = { ...deposit, chainState: 'dropped', nextCheckAt: now, updatedAt: now };
  await saveDeposit(tx, dropped);
  return dropped;
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
      await saveDeposit(tx, reorged);
      await recordEvents(tx, deps, [depositEvent(deps, 'deposit.reorged', reorged, now)]);
      return reorged;
    }
    case 'credit': {
      const wallet = await findWallet(tx, deposit.organizationId, deposit.walletId);
      if (!wallet) throw resourceMissing('wallet', deposit.walletId);
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
      await saveDeposit(tx, credited);
      await recordEvents(tx, deps, [depositEvent(deps, 'deposit.credited', credited, now)]);
      return credited;
    }
  }
}

/** Opens the `travel_rule` review case of a deposit held for its missing originator data, with its evidence. */
async function openTravelRuleReview(tx: Queryable, deps: Deps, deposit: Deposit, now: Date): Promise<void> {
  const wallet = await findWallet(tx, deposit.organizationId, deposit.walletId);
  if (!wallet) throw resourceMissing('wallet', deposit.walletId);
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
    {
      id: reviewId,
      organizationId: deposit.organizationId,
      kind: 'travel_rule',
      status: 'open',
      transferId: null,
      customerId: wallet.ownerId,
      walletId: wallet.id,
      verificationId: null,
      depositId: deposit.id,
      findings,
      note: null,
      decidedBy: null,
      createdAt: now,
      decidedAt: null,
    },
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

/**
 * An operator's decision on a deposit held for review (the `travel_rule` case, locked by the caller).
 * Clearing takes the originator's data the sending institution supplied (checked like a report's), keeps it
 * as a new `deposit.travel_rule` record, and credits the deposit by the worker's own decision; rejecting
 * leaves it uncredited and `rejected`, owed back to its sender. The deposit row is locked, and only a held
 * deposit moves, so a decision applies once.
 */
export async function decideHeldDeposit(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  depositId: string,
  decision: 'clear' | 'reject',
  input: TravelRuleInput | undefined,
  reviewId: string,
): Promise<Deposit> {
  const deposit = await findDeposit(tx, organizationId, depositId, { forUpdate: true });
  if (!deposit) throw resourceMissing('deposit', depositId);
  if (deposit.status !== 'held_for_review') {
    throw new AppError({
      status: 409,
      code: 'invalid_state_transition',
      title: 'Deposit not held',
      detail: `Deposit ${deposit.id} is ${deposit.status}, not held for review.`,
    });
  }
  const now = deps.now();
  if (decision === 'reject') {
    if (input !== undefined) {
      throw validationError(
        'travel_rule',
        'travel_rule is taken only when clearing a held deposit',
        'not_applicable',
      );
    }
    const rejected: Deposit = { ...deposit, status: 'rejected', updatedAt: now, rejectedAt: now };
    await saveDeposit(tx, rejected);
    await recordEvents(tx, deps, [depositEvent(deps, 'deposit.rejected', rejected, now)]);
    return rejected;
  }
  if (input === undefined) throw travelRuleMissing(deposit.id);
  const wallet = await findWallet(tx, organizationId, deposit.walletId);
  if (!wallet) throw resourceMissing('wallet', deposit.walletId);
  const customer = await findCustomer(tx, organizationId, wallet.ownerId);
  const checked = checkTravelRuleData(
    { ...input, beneficiary: input.beneficiary ?? { name: customer?.name ?? wallet.ownerId } },
    { destinationAddress: deposit.address, today: now },
  );
  if (!checked.data) {
    throw new AppError({
      status: 400,
      code: 'validation_error',
      title: 'Invalid request',
      detail: `travel_rule is incomplete or malformed: ${checked.errors.map((e) => e.message).join('; ')}.`,
      param: checked.errors[0]?.param,
      errors: checked.errors,
    });
  }
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

export async function getDeposit(deps: Deps, organizationId: string, id: string): Promise<Deposit> {
  const deposit = await findDeposit(deps.store, organizationId, id);
  if (!deposit) throw resourceMissing('deposit', id);
  return deposit;
}

export async function listOrganizationDeposits(
  deps: Deps,
  organizationId: string,
  request: PageRequest & { status?: DepositStatus | undefined; walletId?: string | undefined },
): Promise<Page<Deposit>> {
  return toPage(await listDeposits(deps.store, organizationId, request, request.limit + 1), request.limit);
}
