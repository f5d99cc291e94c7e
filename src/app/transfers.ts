/**
 * Transfers: validate and normalise both request forms, hand new transfers to the ledger writer, and move
 * existing ones through the status machine with their ledger effects, each change in one transaction.
 */
import { limitBasisOf, limitPeriods } from '../domain/decisions/limits.ts';
import { evaluatePolicy, type PolicyDecision, policyNeeds } from '../domain/decisions/policies.ts';
import type { TravelRuleInput } from '../domain/decisions/travelRule.ts';
import { cryptoAddressDestination } from '../domain/digitalAssets.ts';
import { AppError, resourceMissing, validationError } from '../domain/errors.ts';
import type { EventRecord } from '../domain/events.ts';
import type { EvidenceActor, EvidenceDraft, EvidenceValue } from '../domain/evidence.ts';
import { decideFee, type FeeDecision } from '../domain/fees.ts';
import { isId } from '../domain/ids.ts';
import { numberSourceOf } from '../domain/jsonNumbers.ts';
import type { Metadata } from '../domain/metadata.ts';
import { type Currency, checkSingleAmount, formatAmount, isCurrency, parseAmount } from '../domain/money.ts';
import { type Page, type PageRequest, toPage } from '../domain/pagination.ts';
import { IN_REVIEW_STATUS_REASON } from '../domain/reviews.ts';
import { effectiveRiskLevel } from '../domain/risk.ts';
import { feeOf, type Transfer } from '../domain/transferRecord.ts';
import {
  checkRailAmountStep,
  DESTINATION_TYPES,
  type Destination,
  type DestinationType,
  MOBILE_NETWORKS,
  type MobileNetwork,
  phoneMatchesNetwork,
  RAIL_OF_DESTINATION,
  RAILS,
  type Rail,
  railBounds,
  railBoundsSentence,
  releasedMovement,
  type TransferStatus,
  transition,
} from '../domain/transfers.ts';
import type { Wallet, WalletIdentity } from '../domain/wallets.ts';
import {
  directPostings,
  ensureSystemAccount,
  findOpenHold,
  guardMovementSource,
  holdPostings,
  type JournalEntry,
  PostingSession,
  postEntry,
  postHoldPostings,
  refusalError,
  reversalPostings,
  trustLedgerAccount,
  voidHoldPostings,
} from '../modules/ledger/index.ts';
import { type Customer, findCustomer } from '../store/repositories/customers.ts';
import { releaseLimitUsage } from '../store/repositories/limitUsage.ts';
import { findCurrentPolicy } from '../store/repositories/policies.ts';
import { insertReviewCases } from '../store/repositories/reviews.ts';
import {
  findTransfer,
  insertTransfer,
  listTransfers as listTransferRows,
  saveTransfer,
  type TransferFilter,
} from '../store/repositories/transfers.ts';
import { findWallet, findWallets } from '../store/repositories/wallets.ts';
import type { Queryable } from '../store/store.ts';
import { cancelApprovalOf } from './approvals.ts';
import { readCustomerPolicyFacts } from './customerPolicyFacts.ts';
import type { Deps } from './deps.ts';
import { recordEvents, statusEvent, transferEvent } from './events.ts';
import { appendEvidence, SYSTEM_ACTOR } from './evidence.ts';
import { feeIncomeAccount, loadFeeSchedule } from './fees.ts';
import {
  findStoredOutcome,
  type IdempotencyContext,
  type IdempotentOutcome,
  isRecordedFailure,
} from './idempotency.ts';
import { loadPolicy } from './policies.ts';
import { LimitGuard } from './posting/limitGuard.ts';
import { PilotCapGuard, releasePilotCap } from './posting/pilotCapGuard.ts';
import type { LedgerWriter, TransferCommand } from './posting/writer.ts';
import { requireProductOfMovement } from './products.ts';
import { screenCounterparty } from './transferScreening.ts';
import { prepareTravelRule } from './travelRule.ts';
import { findWalletIdentities } from './walletIdentities.ts';

const PHONE_PATTERN = /^\+[1-9][0-9]{6,14}$/;
const ACCOUNT_TEXT_PATTERN = /^[A-Za-z0-9 -]{1,34}$/;

/** The request as the HTTP edge hands it over, after JSON Schema validation of shapes. */
export interface CreateTransferRequest {
  source: string;
  destination: string | (Record<string, string> & { type: string });
  amount: string | number;
  currency: string;
  rail?: string;
  metadata?: Metadata;
  /** Originator and beneficiary data for a digital-asset transfer (the Travel Rule). */
  travel_rule?: TravelRuleInput;
}

function normaliseDestination(raw: CreateTransferRequest['destination']): Destination {
  if (typeof raw === 'string') return { type: 'wallet', wallet: raw };
  const type = raw.type as DestinationType;
  if (!(DESTINATION_TYPES as readonly string[]).includes(type)) {
    throw validationError(
      'destination.type',
      `destination.type must be one of: ${DESTINATION_TYPES.join(', ')}`,
      'invalid_value',
    );
  }
  const need = (field: string, pattern?: RegExp, hint?: string): string => {
    const value = raw[field];
    if (value === undefined)
      throw validationError(
        `destination.${field}`,
        `destination.${field} is required for ${type}`,
        'missing',
      );
    if (pattern && !pattern.test(value)) {
      throw validationError(
        `destination.${field}`,
        `destination.${field} ${hint ?? 'is not valid'}`,
        'invalid_format',
      );
    }
    return value;
  };
  const allowOnly = (fields: string[]) => {
    for (const key of Object.keys(raw)) {
      if (key !== 'type' && !fields.includes(key)) {
        throw validationError(
          `destination.${key}`,
          `destination.${key} is not a field of a ${type} destination`,
          'unknown_field',
        );
      }
    }
  };
  switch (type) {
    case 'mobile_money': {
      allowOnly(['network', 'phone', 'name']);
      const network = need('network');
      if (!(MOBILE_NETWORKS as string[]).includes(network)) {
        throw validationError(
          'destination.network',
          `destination.network must be one of: ${MOBILE_NETWORKS.join(', ')}`,
          'invalid_value',
        );
      }
      const phone = need('phone', PHONE_PATTERN, 'must be in international format, e.g. +254712345678');
      if (!phoneMatchesNetwork(phone, network as MobileNetwork)) {
        throw validationError(
          'destination.phone',
          `${phone} is not a number on the ${network} network`,
          'network_mismatch',
        );
      }
      return { type, network: network as MobileNetwork, phone, ...(raw.name ? { name: raw.name } : {}) };
    }
    case 'bank_account':
      allowOnly(['bank_code', 'account_number', 'account_name']);
      return {
        type,
        bank_code: need('bank_code', /^[A-Za-z0-9]{2,11}$/, 'must be 2-11 letters or digits'),
        account_number: need(
          'account_number',
          ACCOUNT_TEXT_PATTERN,
          'must be 1-34 letters, digits, spaces or dashes',
        ),
        ...(raw.account_name ? { account_name: raw.account_name } : {}),
      };
    case 'paybill':
      allowOnly(['business_number', 'account_reference']);
      return {
        type,
        business_number: need('business_number', /^[0-9]{5,7}$/, 'must be 5-7 digits'),
        account_reference: need(
          'account_reference',
          ACCOUNT_TEXT_PATTERN,
          'must be 1-34 letters, digits, spaces or dashes',
        ),
      };
    case 'till':
      allowOnly(['till_number']);
      return { type, till_number: need('till_number', /^[0-9]{5,7}$/, 'must be 5-7 digits') };
    case 'card':
      allowOnly(['token']);
      return {
        type,
        token: need(
          'token',
          /^tok_[A-Za-z0-9_]{6,64}$/,
          "must be a card token ('tok_…'); card numbers are never accepted",
        ),
      };
    case 'wallet':
      allowOnly(['wallet']);
      return { type, wallet: need('wallet') };
    case 'crypto_address':
      allowOnly(['asset', 'network', 'address']);
      return cryptoAddressDestination(need('asset'), need('network'), need('address'));
  }
}

export interface CheckedTransfer {
  currency: Currency;
  destination: Destination;
  rail: Rail;
  amountMinor: bigint;
  /** The wallet paid, for a wallet destination. */
  destinationWallet: WalletIdentity | null;
}

/**
 * The checks of a transfer request that need nothing but its wallets: currency, destination, rail, amount
 * and the rail's bounds and step, and a wallet destination's existence and currency. Throws the first fault, naming
 * its field. Shared by single transfers and payment batch items.
 */
export function checkTransferRequest(
  request: Pick<CreateTransferRequest, 'destination' | 'amount' | 'currency' | 'rail'>,
  source: WalletIdentity,
  wallets: ReadonlyMap<string, WalletIdentity>,
): CheckedTransfer {
  if (!isCurrency(request.currency) || request.currency !== source.currency) {
    throw validationError(
      'currency',
      `currency must be ${source.currency}, the currency of the source wallet`,
      'currency_mismatch',
    );
  }
  const currency: Currency = source.currency;
  const destination = normaliseDestination(request.destination);
  const impliedRail = RAIL_OF_DESTINATION[destination.type];
  if (request.rail !== undefined && request.rail !== impliedRail) {
    throw validationError(
      'rail',
      `rail must be '${impliedRail}' for a ${destination.type} destination (one of ${RAILS.join(', ')})`,
      'rail_mismatch',
    );
  }
  const rail: Rail = impliedRail;
  const amountMinor = checkSingleAmount(
    parseAmount(request.amount, currency, 'amount', numberSourceOf(request, 'amount')),
    currency,
  );
  const bounds = railBounds(rail, currency);
  if (!bounds)
    throw validationError('currency', `the ${rail} rail does not carry ${currency}`, 'unsupported_by_rail');
  if (amountMinor < bounds.min || amountMinor > bounds.max) {
    throw validationError(
      'amount',
      `amount is outside the ${rail} rail's bounds: ${railBoundsSentence(rail, currency, bounds)}`,
      'out_of_range',
    );
  }
  checkRailAmountStep(
    rail,
    destination.type === 'mobile_money' ? destination.network : undefined,
    currency,
    amountMinor,
  );
  let destinationWallet: WalletIdentity | null = null;
  if (destination.type === 'wallet') {
    if (!isId('wallet', destination.wallet)) {
      throw validationError(
        'destination',
        'destination must be a wallet id (wallet_…) or a destination object',
        'invalid_format',
      );
    }
    const target = wallets.get(destination.wallet);
    if (!target) throw resourceMissing('wallet', destination.wallet, 'destination');
    if (target.id === source.id)
      throw validationError('destination', 'a wallet cannot pay itself', 'same_as_source');
    if (target.currency !== currency) {
      throw validationError(
        'destination',
        `destination wallet holds ${target.currency}, not ${currency}`,
        'currency_mismatch',
      );
    }
    destinationWallet = target;
  }
  return { currency, destination, rail, amountMinor, destinationWallet };
}

export interface TransferServices {
  deps: Deps;
  writer: LedgerWriter;
}

/**
 * Validates a request against the source wallet and rail, then submits it to the batch writer. A refusal
 * found here that is recorded under an Idempotency-Key (a wallet that does not exist or cannot send) goes
 * through the writer too, so it is recorded like the writer's own refusals; an invalid request is not.
 */
export async function createTransfer(
  services: TransferServices,
  organizationId: string,
  request: CreateTransferRequest,
  idempotency: IdempotencyContext,
  present: (t: Transfer) => unknown,
  /** The member the API key acts for, else the key: recorded as `created_by` and as the approval's initiator. */
  createdBy: string,
): Promise<IdempotentOutcome> {
  const { deps } = services;
  // A retry is answered from the record first, so it replays even if the wallets changed since.
  if (idempotency.key !== undefined) {
    const stored = await findStoredOutcome(deps.store, { ...idempotency, key: idempotency.key }, deps.now());
    if (stored) return stored;
  }
  let command: TransferCommand;
  try {
    command = await prepareTransfer(deps, organizationId, request, idempotency, present, createdBy);
  } catch (error) {
    if (!(error instanceof AppError) || !isRecordedFailure(error) || idempotency.key === undefined)
      throw error;
    return services.writer.submit({ kind: 'refusal', error, idempotency });
  }
  return services.writer.submit(command);
}

export async function prepareTransfer(
  deps: Deps,
  organizationId: string,
  request: CreateTransferRequest,
  idempotency: IdempotencyContext,
  present: (t: Transfer) => unknown,
  createdBy: string,
  /** Read once for many transfers (a payment batch's chunk): its wallets, and clearing accounts by rail. */
  shared?: { wallets: ReadonlyMap<string, Wallet>; clearingAccounts: Map<string, string> },
  /**
   * The fee decided beforehand (a payment batch item's, held with the batch), or null for none (an item
   * submitted before fees); undefined: the current schedule decides.
   */
  decidedFee?: FeeDecision | null,
): Promise<TransferCommand> {
  const store = deps.store;
  // Both wallets with one read when the destination is a wallet; checked below in the usual order.
  const raw = request.destination;
  const destinationId = typeof raw === 'string' ? raw : raw.type === 'wallet' ? raw.wallet : undefined;
  const wanted =
    destinationId !== undefined && isId('wallet', destinationId)
      ? [request.source, destinationId]
      : [request.source];
  const wallets: ReadonlyMap<string, WalletIdentity> =
    shared && wanted.every((id) => shared.wallets.has(id))
      ? shared.wallets
      : await findWalletIdentities(deps, organizationId, wanted);
  const source = wallets.get(request.source);
  if (!source) throw resourceMissing('wallet', request.source, 'source');
  await guardMovementSource(deps, store, source.id, 'source');
  const { currency, destination, rail, amountMinor, destinationWallet } = checkTransferRequest(
    request,
    source,
    wallets,
  );
  // The product the rail and currency belong to must be enabled: here, so a batch's items are held to it too.
  await requireProductOfMovement(deps, organizationId, { rail, currency }, 'rail');
  const destinationWalletId = destinationWallet?.id ?? null;
  const clearingKey = `${rail}/${currency}`;
  const creditAccountId =
    destinationWallet?.id ??
    shared?.clearingAccounts.get(clearingKey) ??
    (await ensureSystemAccount(store, {
      id: deps.newId('ledgerAccount'),
      organizationId,
      kind: 'rail_clearing',
      rail,
      currency,
      now: deps.now(),
    }));
  if (destinationWallet === null) shared?.clearingAccounts.set(clearingKey, creditAccountId);
  const fee =
    decidedFee === undefined
      ? decideFee(await loadFeeSchedule(deps, organizationId), { rail, currency, amountMinor })
      : decidedFee;
  const feeAccountId =
    fee && fee.feeMinor > 0n ? await feeIncomeAccount(deps, store, organizationId, currency) : undefined;

  const screening = await screenCounterparty(deps, destination);
  const policy = await loadPolicy(deps, organizationId);
  const customer = policyNeeds(policy).customer
    ? await readCustomerPolicyFacts(deps, organizationId, source.ownerId)
    : undefined;
  const now = deps.now();
  const transfer: Transfer = {
    id: deps.newId('transfer'),
    organizationId,
    direction: 'outbound',
    sourceWalletId: source.id,
    destination,
    destinationWalletId,
    amountMinor,
    currency,
    rail,
    network: destination.type === 'mobile_money' ? destination.network : null,
    status: 'pending',
    statusReason: null,
    failureCode: null,
    ledgerState: 'pending',
    metadata: request.metadata ?? {},
    railReference: null,
    nextRailCheckAt: null,
    createdAt: now,
    updatedAt: now,
    processingAt: null,
    settledAt: null,
    failedAt: null,
    canceledAt: null,
    returnedAt: null,
    createdBy,
    authorization: null,
    approvalId: null,
    fee,
  };
  const travelRule = await prepareTravelRule(deps, transfer, source.ownerId, request.travel_rule);
  return {
    kind: 'transfer',
    transfer: { ...transfer, travelRule: travelRule?.link ?? null },
    travelRule: travelRule?.evidence,
    sourceCustomerId: source.ownerId,
    screening,
    policy,
    customer,
    debitAccountId: source.id,
    creditAccountId,
    feeAccountId,
    settleAtOnce: rail === 'internal',
    idempotency,
    present,
  };
}

/** What a transfer would cost now: its amount, the fee the current schedule charges, and what the sender pays. */
export interface TransferQuote {
  currency: Currency;
  rail: Rail;
  amountMinor: bigint;
  fee: FeeDecision;
  /** Amount and fee: what the source wallet is debited (and must have available). */
  totalMinor: bigint;
}

/**
 * Quotes a transfer request: the same checks as a new transfer that need only its wallets (a fault is the
 * same 400 or 404), then the fee the organization's current schedule charges, through the same process cache
 * a new transfer reads, so a transfer made now is charged what this says. Writes nothing; reads outside any
 * transaction.
 */
export async function quoteTransfer(
  deps: Deps,
  organizationId: string,
  request: CreateTransferRequest,
): Promise<TransferQuote> {
  const raw = request.destination;
  const destinationId = typeof raw === 'string' ? raw : raw.type === 'wallet' ? raw.wallet : undefined;
  const wallets = await findWallets(
    deps.store,
    organizationId,
    destinationId !== undefined && isId('wallet', destinationId)
      ? [request.source, destinationId]
      : [request.source],
  );
  const source = wallets.get(request.source);
  if (!source) throw resourceMissing('wallet', request.source, 'source');
  await guardMovementSource(deps, deps.store, source.id, 'source');
  const { currency, rail, amountMinor } = checkTransferRequest(request, source, wallets);
  const fee = decideFee(await loadFeeSchedule(deps, organizationId), { rail, currency, amountMinor });
  return { currency, rail, amountMinor, fee, totalMinor: amountMinor + fee.feeMinor };
}

export async function getTransfer(deps: Deps, organizationId: string, id: string): Promise<Transfer> {
  const transfer = await findTransfer(deps.store, organizationId, id);
  if (!transfer) throw resourceMissing('transfer', id);
  return transfer;
}

export async function listTransfers(
  deps: Deps,
  organizationId: string,
  request: PageRequest & Omit<TransferFilter, keyof PageRequest>,
): Promise<Page<Transfer>> {
  const rows = await listTransferRows(deps.store, organizationId, request, request.limit + 1);
  return toPage(rows, request.limit);
}

export interface StatusChange {
  to: TransferStatus;
  failureCode?: string | undefined;
  reason?: string | undefined;
  /** When the rail should be asked again; null takes the transfer off the rail queue. */
  nextRailCheckAt?: Date | null | undefined;
  railReference?: string | undefined;
  /** The approval it now waits for. */
  approvalId?: string | undefined;
}

/**
 * Moves a locked transfer to a new status through the one transition function, with its ledger effect:
 * settle posts the hold, fail and cancel void it, return reverses a settled transfer. Writes the
 * transfer, entries, account sums and the event in the caller's transaction.
 */
export async function applyStatusChange(
  tx: Queryable,
  deps: Deps,
  transfer: Transfer,
  requested: StatusChange,
): Promise<Transfer> {
  const { change, refused } = await passReleaseGate(tx, deps, transfer, requested);
  const to = transition(transfer.status, change.to);
  const now = deps.now();
  let ledgerState = transfer.ledgerState;
  let entry: JournalEntry | undefined;
  if (to === 'settled' || to === 'failed' || to === 'canceled' || to === 'rejected' || to === 'expired') {
    const hold = await findOpenHold(tx, transfer.id);
    if (hold) {
      const settle = to === 'settled';
      entry = {
        id: deps.newId('journalEntry'),
        organizationId: transfer.organizationId,
        transferId: transfer.id,
        kind: settle ? 'post' : 'void',
        holdEntryId: hold.id,
        createdAt: now,
        postings: settle ? postHoldPostings(hold.postings) : voidHoldPostings(hold.postings),
      };
      ledgerState = settle ? 'posted' : 'voided';
    }
  } else if (to === 'returned') {
    const walletId = transfer.sourceWalletId;
    if (!walletId) throw validationError('id', 'only outbound transfers can be returned', 'not_returnable');
    // A return gives the money back: the rail (or the destination wallet) pays the source wallet again, and
    // the fee comes back with it (docs/FEES.md). Only a rail transfer touches the rail's clearing account,
    // so only it may create one.
    const from =
      transfer.destinationWalletId ??
      (await ensureSystemAccount(tx, {
        id: deps.newId('ledgerAccount'),
        organizationId: transfer.organizationId,
        kind: 'rail_clearing',
        rail: transfer.rail,
        currency: transfer.currency,
        now,
      }));
    entry = {
      id: deps.newId('journalEntry'),
      organizationId: transfer.organizationId,
      transferId: transfer.id,
      kind: 'reversal',
      holdEntryId: null,
      createdAt: now,
      postings: reversalPostings(
        from,
        walletId,
        transfer.amountMinor,
        transfer.currency,
        feeOf(transfer) > 0n
          ? {
              accountId: await feeIncomeAccount(deps, tx, transfer.organizationId, transfer.currency),
              amountMinor: feeOf(transfer),
            }
          : undefined,
      ),
    };
  }
  if (entry) await postEntry(tx, entry, now, to === 'returned' ? 'return' : 'change');
  // A transfer that moved no money gives its amount back to its customer's tier limits.
  if (
    (to === 'failed' || to === 'canceled' || to === 'rejected' || to === 'expired') &&
    transfer.sourceWalletId
  ) {
    // Counted at its limit basis (a stablecoin at its USD equivalent), so given back the same way.
    const basis = limitBasisOf(transfer.currency, transfer.amountMinor);
    if (basis) {
      await releaseLimitUsage(
        tx,
        transfer.sourceWalletId,
        basis.currency,
        basis.amountMinor,
        limitPeriods(transfer.createdAt),
      );
    }
    await releasePilotCap(tx, deps, transfer);
  }

  const updated: Transfer = {
    ...transfer,
    status: to,
    ledgerState,
    failureCode: change.failureCode ?? (to === 'failed' ? 'rail_error' : transfer.failureCode),
    statusReason: change.reason ?? null,
    railReference: change.railReference ?? transfer.railReference,
    approvalId: change.approvalId ?? transfer.approvalId,
    nextRailCheckAt: change.nextRailCheckAt === undefined ? null : change.nextRailCheckAt,
    updatedAt: now,
    processingAt: to === 'processing' ? now : transfer.processingAt,
    settledAt: to === 'settled' ? now : transfer.settledAt,
    failedAt: to === 'failed' ? now : transfer.failedAt,
    canceledAt: to === 'canceled' ? now : transfer.canceledAt,
    returnedAt: to === 'returned' ? now : transfer.returnedAt,
  };
  await saveTransfer(tx, updated);
  await recordEvents(tx, deps, statusEvent(deps, updated, now));
  // Evidence last: the chain head is the last lock a money movement takes (src/store/lockOrder.ts).
  if (refused) await appendEvidence(tx, deps, [refused]);
  return updated;
}

/**
 * A change that moves money which waited (out of an approval or a review, to the rail, to settled) passes the
 * posting module's release gate over the transfer's wallets as locked now; one let go after an approval or a
 * review is also decided again by a newer policy version in force, its customer's tier limit and a pilot's
 * caps as they stand now. One that no longer passes becomes a failure with the code a new transfer would get
 * (`wallet_not_active`, `policy_denied`, `limit_exceeded`, `pilot_cap_exceeded`): its hold is voided and its limits given back by that same
 * change, once, `transfer.failed` is emitted, and the refusal is recorded as `transfer.release` evidence.
 */
async function passReleaseGate(
  tx: Queryable,
  deps: Deps,
  transfer: Transfer,
  change: StatusChange,
): Promise<{ change: StatusChange; refused?: EvidenceDraft }> {
  const movement = releasedMovement(transfer.status, change.to);
  if (!movement) return { change };
  const wallets = { source: transfer.sourceWalletId, destination: transfer.destinationWalletId };
  const gate = new PostingSession(tx);
  await gate.lock([wallets.source, wallets.destination].filter((id): id is string => id !== null));
  // An inbound transfer waits only when it arrived for a frozen wallet and was held for review: what moves
  // it on is an operator clearing that review.
  const decision = gate.release(movement, wallets, {
    inboundClearedByReview: transfer.direction === 'inbound',
  });
  let refusal: { code: string; reason: string; data: Record<string, EvidenceValue> } | undefined;
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
    const wallet = await findWallet(tx, transfer.organizationId, transfer.sourceWalletId);
    const customer = wallet && (await findCustomer(tx, transfer.organizationId, wallet.ownerId));
    const denied = await policyInForceDenies(tx, transfer, customer);
    const overLimit =
      !denied && wallet
        ? ((await LimitGuard.recheck(
            tx,
            { transfer, sourceCustomerId: wallet.ownerId },
            transfer.createdAt,
          )) ?? (await PilotCapGuard.recheck(tx, deps.pilotCaps, transfer)))
        : undefined;
    if (denied) {
      refusal = {
        code: 'policy_denied',
        reason: 'policy_denied',
        data: { policy_version: denied.policyVersion, rule: denied.rule, matched: denied.matched },
      };
    } else if (overLimit) {
      refusal = {
        code: overLimit.code,
        reason: overLimit.code,
        data: { detail: overLimit.detail, ...overLimit.extensions },
      };
    }
  }
  if (!refusal) return { change };
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

/** Loads and locks a transfer for a status change, or 404s. */
export async function lockTransfer(tx: Queryable, organizationId: string, id: string): Promise<Transfer> {
  const transfer = await findTransfer(tx, organizationId, id, { forUpdate: true });
  if (!transfer) throw resourceMissing('transfer', id);
  return transfer;
}

export async function cancelTransfer(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  actor: EvidenceActor = SYSTEM_ACTOR,
): Promise<Transfer> {
  const transfer = await lockTransfer(tx, organizationId, id);
  if (transfer.status !== 'pending' && transfer.status !== 'pending_approval') {
    throw new AppError({
      status: 409,
      code: 'invalid_state_transition',
      title: 'Too late to cancel',
      detail: `A ${transfer.status} transfer has been handed to the rail (or finished) and can no longer be canceled.`,
    });
  }
  const canceled = await applyStatusChange(tx, deps, transfer, {
    to: 'canceled',
    reason: 'canceled_by_request',
  });
  // After the hold is released: the approval's evidence takes the chain head, the last lock of the order.
  if (transfer.status === 'pending_approval') await cancelApprovalOf(tx, deps, transfer.id, actor);
  return canceled;
}

/**
 * Sandbox collection: money arrives in a wallet from a simulated mobile-money payer, as a settled inbound
 * transfer with a balanced entry from the rail's settlement account. A rail credit to a frozen wallet is not
 * refused (the payer's money has arrived) but held for review: the inbound transfer is `in_review` with a
 * hold that credits the wallet only as pending, and a `frozen_wallet` case opens; clearing it credits the
 * wallet, rejecting it voids the hold (the money goes back to the payer).
 */
export async function fundWallet(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  walletId: string,
  amount: string | number,
  metadata: Metadata,
  amountText?: string,
): Promise<Transfer> {
  const wallet = await findWallet(tx, organizationId, walletId);
  if (!wallet) throw resourceMissing('wallet', walletId);
  const amountMinor = checkSingleAmount(
    parseAmount(amount, wallet.currency, 'amount', amountText),
    wallet.currency,
  );
  return creditFromRail(tx, deps, wallet, {
    amountMinor,
    rail: 'mobile_money',
    network: null,
    railReference: null,
    statusReason: 'sandbox_collection',
    metadata,
  });
}

export interface RailCredit {
  amountMinor: bigint;
  rail: Transfer['rail'];
  network: string | null;
  railReference: string | null;
  /** Why the money arrived, shown as the transfer's `status_reason`. */
  statusReason: string;
  metadata: Metadata;
  /**
   * Where the money was received: the rail partner's float (`rail_settlement`, the default: a mobile-money
   * collection lands at the partner) or straight into trust (`trust`: a bank deposit to a virtual account at
   * the trust bank, a stablecoin deposit to the custodian's wallet). See docs/SAFEGUARDING.md.
   */
  receivedInto?: 'rail_settlement' | 'trust' | undefined;
}

/**
 * Money a rail reports received for a wallet (a collection, a sandbox funding, a bank or on-chain deposit):
 * an inbound transfer posted from the account that received the money, the rail's settlement account or the
 * currency's trust account (`receivedInto`). A frozen wallet's credit is held for review instead.
 */
export async function creditFromRail(
  tx: Queryable,
  deps: Deps,
  wallet: Wallet,
  credit: RailCredit,
): Promise<Transfer> {
  const { organizationId } = wallet;
  const { amountMinor, metadata } = credit;
  const now = deps.now();
  const receivedBy =
    credit.receivedInto === 'trust'
      ? await trustLedgerAccount(tx, deps, organizationId, wallet.currency)
      : await ensureSystemAccount(tx, {
          id: deps.newId('ledgerAccount'),
          organizationId,
          kind: 'rail_settlement',
          rail: credit.rail,
          currency: wallet.currency,
          now,
        });
  // Decided on the wallet as locked now, not as read before: a freeze that just committed holds the credit.
  const gate = new PostingSession(tx);
  await gate.lock([wallet.id]);
  const release = gate.release('collection', { destination: wallet.id });
  if (release.outcome === 'refuse') throw refusalError(release.refusal, 'funding', 'amount');
  const held = release.outcome === 'hold_for_review';
  const transfer: Transfer = {
    id: deps.newId('transfer'),
    organizationId,
    direction: 'inbound',
    sourceWalletId: null,
    destination: { type: 'wallet', wallet: wallet.id },
    destinationWalletId: wallet.id,
    amountMinor,
    currency: wallet.currency,
    rail: credit.rail,
    network: credit.network,
    status: held ? 'in_review' : 'settled',
    statusReason: held ? IN_REVIEW_STATUS_REASON : credit.statusReason,
    failureCode: null,
    ledgerState: held ? 'pending' : 'posted',
    metadata,
    railReference: credit.railReference,
    nextRailCheckAt: null,
    createdAt: now,
    updatedAt: now,
    processingAt: now,
    settledAt: held ? null : now,
    failedAt: null,
    canceledAt: null,
    returnedAt: null,
    createdBy: null,
    authorization: null,
    approvalId: null,
  };
  await insertTransfer(tx, transfer);
  await postEntry(
    tx,
    {
      id: deps.newId('journalEntry'),
      organizationId,
      transferId: transfer.id,
      kind: held ? 'hold' : 'direct',
      holdEntryId: null,
      createdAt: now,
      postings: (held ? holdPostings : directPostings)(receivedBy, wallet.id, amountMinor, wallet.currency),
    },
    now,
    'funding',
    'amount',
  );
  const events: EventRecord[] = [transferEvent(deps, 'transfer.created', transfer, now)];
  if (held) await holdCreditToFrozenWallet(tx, deps, transfer, wallet);
  else events.push(transferEvent(deps, 'transfer.settled', transfer, now));
  await recordEvents(tx, deps, events);
  return transfer;
}

/** Opens the review case of a rail credit that arrived for a frozen wallet, with its evidence. */
async function holdCreditToFrozenWallet(tx: Queryable, deps: Deps, transfer: Transfer, wallet: Wallet) {
  const findings = {
    reason: 'credit_to_frozen_wallet',
    wallet_status_reason: wallet.statusReason,
    amount: formatAmount(transfer.amountMinor, transfer.currency),
    currency: transfer.currency,
  };
  await insertReviewCases(tx, [
    {
      id: deps.newId('review'),
      organizationId: transfer.organizationId,
      kind: 'frozen_wallet',
      status: 'open',
      transferId: transfer.id,
      customerId: wallet.ownerId,
      walletId: wallet.id,
      verificationId: null,
      depositId: null,
      findings,
      note: null,
      decidedBy: null,
      createdAt: transfer.createdAt,
      decidedAt: null,
    },
  ]);
  await appendEvidence(tx, deps, [
    {
      organizationId: transfer.organizationId,
      kind: 'transfer.decision',
      actor: SYSTEM_ACTOR,
      transferId: transfer.id,
      walletId: wallet.id,
      customerId: wallet.ownerId,
      data: { outcome: 'review', ...findings },
    },
  ]);
}
