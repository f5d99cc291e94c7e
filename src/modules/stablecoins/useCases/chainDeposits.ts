/**
 * What the chain says about deposits: a transfer to one of the organization's deposit addresses seen on
 * chain (recorded `pending`, its Travel Rule data checked and kept as evidence), and, in the sandbox, the
 * simulated chain advancing by blocks or reorganising a deposit away.
 *
 * This is written by whoever watches the chain: the simulated chain's sandbox routes, or the custody
 * partner (Fireblocks' webhooks and its deposit poll, railPartners' custodyDeposits.ts). What we make of it
 * is decided by the deposit worker alone (`decideDeposit`, deposits.ts).
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvents } from '../../../app/events.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import {
  checkTravelRuleData,
  decideTravelRule,
  type TravelRuleInput,
  travelRuleDataInvalid,
} from '../../../domain/decisions/travelRule.ts';
import { checkAddress, type DigitalAssetNetwork } from '../../../domain/digitalAssets.ts';
import { invalidStateTransition, resourceMissing, validationError } from '../../../domain/errors.ts';
import { checkSingleAmount, parseAmount } from '../../../domain/money.ts';
import {
  DEPOSIT_CONFIRMATIONS_REQUIRED,
  type Deposit,
  type DepositAddress,
  isDepositFinal,
  simulatedChainTransactionHash,
} from '../../../domain/stablecoins.ts';
import type { Wallet } from '../../../domain/wallets.ts';
import type { Queryable } from '../../../store/store.ts';
import type { TravelRuleSettingsView } from '../../compliance/index.ts';
import { findVerifiedCountry, travelRuleSettingsIn } from '../../compliance/index.ts';
import { requireWallet } from '../../wallets/index.ts';
import { findDepositAddressByAddress } from '../repository/depositAddresses.ts';
import {
  findDepositByChainTransfer,
  insertDepositIfNew,
  lockPendingDeposits,
  saveDeposit,
} from '../repository/deposits.ts';
import { requireNetwork } from './depositAddresses.ts';
import { depositEvent, lockDeposit, withDepositBeneficiary } from './deposits.ts';

/** The most blocks one advance of the simulated chain moves. */
export const SANDBOX_CHAIN_ADVANCE_BLOCKS_MAX = 10_000;
/** Confirmations are counted up to what the column (a 32-bit integer) holds. */
const CONFIRMATIONS_MAX = 2_147_483_647;

export interface ChainDepositInput {
  network: string;
  address: string;
  amount: string | number;
  tx_hash?: string;
  log_index?: number;
  confirmations?: number;
  travel_rule?: TravelRuleInput;
}

/** The deposit address a chain transfer paid: well formed for the network, and the organization's (else a 404). */
export async function ownedDepositAddress(
  tx: Queryable,
  organizationId: string,
  network: DigitalAssetNetwork,
  address: string,
): Promise<DepositAddress> {
  const checked = checkAddress(address, network);
  if (!checked.ok) {
    throw validationError(
      'address',
      `address is not a valid ${network} address: ${checked.message}`,
      checked.code,
    );
  }
  const owned = await findDepositAddressByAddress(tx, network, address);
  if (!owned || owned.organizationId !== organizationId) {
    throw resourceMissing('deposit address', address, 'address');
  }
  return owned;
}

/** The Travel Rule facts a new deposit carries (see depositTravelRule). */
type DepositTravelRule = Awaited<ReturnType<typeof depositTravelRule>>;

/** A chain transfer first seen: `pending`, counting confirmations, put in front of the deposit worker at once. */
function pendingDeposit(
  seen: {
    id: string;
    owned: DepositAddress;
    network: DigitalAssetNetwork;
    txHash: string;
    logIndex: number;
    amountMinor: bigint;
    confirmations: number;
    travelRule: DepositTravelRule;
  },
  now: Date,
): Deposit {
  const { owned, travelRule } = seen;
  return {
    id: seen.id,
    organizationId: owned.organizationId,
    walletId: owned.walletId,
    depositAddressId: owned.id,
    asset: owned.asset,
    network: seen.network,
    address: owned.address,
    txHash: seen.txHash,
    logIndex: seen.logIndex,
    amountMinor: seen.amountMinor,
    confirmations: seen.confirmations,
    chainState: 'included',
    requiredConfirmations: DEPOSIT_CONFIRMATIONS_REQUIRED[seen.network],
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
  const owned = await ownedDepositAddress(tx, organizationId, network, input.address);
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

  const wallet = await requireWallet(tx, organizationId, owned.walletId);
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
  const deposit = pendingDeposit(
    { id, owned, network, txHash, logIndex, amountMinor, confirmations, travelRule },
    now,
  );
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

/**
 * A deposit a custody provider reports final (Fireblocks: COMPLETED after its own confirmation policy):
 * recorded as a chain deposit that already has the network's confirmations, so the deposit worker credits
 * it at once (or holds it for review); the same report again changes nothing.
 */
export async function recordCustodyDeposit(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  report: { network: string; address: string; amount: string; txHash: string; logIndex: number },
): Promise<{ depositId: string; created: boolean }> {
  const network = requireNetwork(report.network, 'network');
  const settings = await travelRuleSettingsIn(tx, deps, organizationId);
  const { deposit, created } = await recordChainDeposit(
    tx,
    deps,
    organizationId,
    {
      network,
      address: report.address,
      amount: report.amount,
      tx_hash: report.txHash,
      log_index: report.logIndex,
      confirmations: DEPOSIT_CONFIRMATIONS_REQUIRED[network],
    },
    settings,
  );
  return { depositId: deposit.id, created };
}

/**
 * The organization's live deposit of a chain transfer a custody partner reported, locked: what a later
 * report about the same transfer (no longer completed) is compared with. Undefined when none is, or it
 * is another organization's.
 */
export async function findCustodyDeposit(
  tx: Queryable,
  organizationId: string,
  report: { network: string; txHash: string; logIndex: number },
): Promise<Deposit | undefined> {
  const network = requireNetwork(report.network, 'network');
  const deposit = await findDepositByChainTransfer(tx, network, report.txHash, report.logIndex, {
    forUpdate: true,
  });
  return deposit?.organizationId === organizationId ? deposit : undefined;
}

function repeated(existing: Deposit, same: boolean): { deposit: Deposit; created: boolean } {
  if (!same) {
    throw invalidStateTransition(
      'Chain transfer already recorded',
      `Transaction ${existing.txHash} (log index ${existing.logIndex}) on ${existing.network} is already deposit ${existing.id}, to another address or for another amount.`,
      'tx_hash',
    );
  }
  return { deposit: existing, created: false };
}

/** The originator's and beneficiary's data that came with a report, checked (a 400 naming each field). */
async function reportedTravelRuleData(
  tx: Queryable,
  deps: Deps,
  wallet: Wallet,
  input: TravelRuleInput,
  address: string,
): Promise<Record<string, unknown>> {
  const checked = checkTravelRuleData(await withDepositBeneficiary(tx, wallet, input), {
    destinationAddress: address,
    today: deps.now(),
  });
  if (!checked.data) throw travelRuleDataInvalid(checked.errors);
  return { originator: checked.data.originator, beneficiary: checked.data.beneficiary };
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
  const data =
    deposit.input === undefined
      ? null
      : await reportedTravelRuleData(tx, deps, wallet, deposit.input, deposit.address);
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
  const deposit = await lockDeposit(tx, organizationId, depositId);
  if (isDepositFinal(deposit)) {
    throw invalidStateTransition(
      'Deposit is final',
      `Deposit ${deposit.id} has ${deposit.confirmations} of ${deposit.requiredConfirmations} confirmations (status ${deposit.status}): it is final, and the simulated chain does not reorganise past finality.`,
    );
  }
  const now = deps.now();
  const dropped: Deposit = { ...deposit, chainState: 'dropped', nextCheckAt: now, updatedAt: now };
  await saveDeposit(tx, dropped);
  return dropped;
}
