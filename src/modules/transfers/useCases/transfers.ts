/**
 * Transfers: a new one validated against its wallets and rail and handed to the ledger writer, a quote of
 * what one would cost, and reads. Status changes are in transferStatusChanges.ts, money a rail reports
 * received in railCredits.ts.
 */

import type { Deps } from '../../../app/deps.ts';
import {
  findStoredOutcome,
  type IdempotencyContext,
  type IdempotentOutcome,
  isRecordedFailure,
} from '../../../app/idempotency.ts';
import { requireProductOfMovement } from '../../../app/products.ts';
import { getById, listPage } from '../../../app/reads.ts';
import { policyNeeds } from '../../../domain/decisions/policies.ts';
import { AppError, resourceMissing } from '../../../domain/errors.ts';
import type { EvidenceRecord } from '../../../domain/evidence.ts';
import { isId } from '../../../domain/ids.ts';
import type { Metadata } from '../../../domain/metadata.ts';
import type { Currency } from '../../../domain/money.ts';
import { type FeeDecision, newTransferLife, type Transfer } from '../../../domain/transferRecord.ts';
import type { Rail } from '../../../domain/transfers.ts';
import type { Wallet, WalletIdentity } from '../../../domain/wallets.ts';
import { loadPolicy } from '../../authorization/index.ts';
import { prepareTravelRule, screenCounterparty, travelRuleRecordOf } from '../../compliance/index.ts';
import { readCustomerPolicyFacts } from '../../customers/index.ts';
import { decideFee, feeIncomeAccount, loadFeeSchedule } from '../../fees/index.ts';
import { guardMovementSource, railClearingAccount } from '../../ledger/index.ts';
import { findWalletIdentities, findWallets } from '../../wallets/index.ts';
import { findTransfer, listTransfers as listTransferRows, type TransferFilter } from '../repository.ts';
import type { LedgerWriter } from './posting/writer.ts';
import type { TransferCommand } from './posting/writerCommands.ts';
import { type CheckedTransfer, type CreateTransferRequest, checkTransferRequest } from './requests.ts';

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
  let command: TransferCommand;
  try {
    command = await prepareTransfer(deps, organizationId, request, idempotency, present, createdBy);
  } catch (error) {
    if (!(error instanceof AppError) || idempotency.key === undefined) throw error;
    // A refusal that is recorded goes through the writer, which answers a retry from the key's record.
    if (isRecordedFailure(error)) return services.writer.submit({ kind: 'refusal', error, idempotency });
    // A retry is answered from its record even when the same request would be refused now.
    const stored = await findStoredOutcome(deps.store, { ...idempotency, key: idempotency.key }, deps.now());
    if (stored) return stored;
    throw error;
  }
  // The key's record is read by the writer, in the transaction that claims the key: a retry of an accepted
  // request is answered from it there, with no read of its own on the way in (one round trip less for
  // every new transfer). Nothing on the way in writes, so a retry leaves nothing behind.
  return services.writer.submit(command);
}

/** Wallets and clearing accounts read once for many transfers (a payment batch's chunk). */
interface SharedReads {
  wallets: ReadonlyMap<string, Wallet>;
  /** Clearing accounts by `rail/currency`. */
  clearingAccounts: Map<string, string>;
}

export async function prepareTransfer(
  deps: Deps,
  organizationId: string,
  request: CreateTransferRequest,
  idempotency: IdempotencyContext,
  present: (t: Transfer) => unknown,
  createdBy: string,
  /** Read once for many transfers (a payment batch's chunk): its wallets, and clearing accounts by rail. */
  shared?: SharedReads,
  /**
   * The fee decided beforehand (a payment batch item's, held with the batch), or null for none (an item
   * submitted before fees); undefined: the current schedule decides.
   */
  decidedFee?: FeeDecision | null,
): Promise<TransferCommand> {
  const store = deps.store;
  const wallets = await readRequestWallets(deps, organizationId, request, shared);
  const source = wallets.get(request.source);
  if (!source) throw resourceMissing('wallet', request.source, 'source');
  await guardMovementSource(deps, store, source.id, 'source');
  const checked = checkTransferRequest(request, source, wallets);
  const { currency, destination, rail, amountMinor } = checked;
  // The product the rail and currency belong to must be enabled: here, so a batch's items are held to it too.
  await requireProductOfMovement(deps, organizationId, { rail, currency }, 'rail');
  const creditAccountId = await creditAccountOf(deps, organizationId, checked, shared);
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
  const transfer = newOutboundTransfer(deps, organizationId, source, checked, fee, {
    metadata: request.metadata,
    createdBy,
  });
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

/** The wallets a request names: the source, and the destination when it is a wallet id. */
function walletIdsOf(request: CreateTransferRequest): string[] {
  const raw = request.destination;
  const destinationId = typeof raw === 'string' ? raw : raw.type === 'wallet' ? raw.wallet : undefined;
  return destinationId !== undefined && isId('wallet', destinationId)
    ? [request.source, destinationId]
    : [request.source];
}

/** Both wallets with one read when the destination is a wallet (checked afterwards in the usual order). */
async function readRequestWallets(
  deps: Deps,
  organizationId: string,
  request: CreateTransferRequest,
  shared: SharedReads | undefined,
): Promise<ReadonlyMap<string, WalletIdentity>> {
  const wanted = walletIdsOf(request);
  return shared && wanted.every((id) => shared.wallets.has(id))
    ? shared.wallets
    : await findWalletIdentities(deps, organizationId, wanted);
}

/** The account a transfer credits: the destination wallet, else its rail's clearing account in the currency. */
async function creditAccountOf(
  deps: Deps,
  organizationId: string,
  { rail, currency, destinationWallet }: CheckedTransfer,
  shared: SharedReads | undefined,
): Promise<string> {
  const clearingKey = `${rail}/${currency}`;
  const creditAccountId =
    destinationWallet?.id ??
    shared?.clearingAccounts.get(clearingKey) ??
    (await railClearingAccount(deps, organizationId, rail, currency));
  if (destinationWallet === null) shared?.clearingAccounts.set(clearingKey, creditAccountId);
  return creditAccountId;
}

/** The new transfer's record before the writer decides it: pending, with no ledger state of its own yet. */
function newOutboundTransfer(
  deps: Deps,
  organizationId: string,
  source: WalletIdentity,
  { currency, destination, rail, amountMinor, destinationWallet }: CheckedTransfer,
  fee: FeeDecision | null,
  { metadata, createdBy }: { metadata: Metadata | undefined; createdBy: string },
): Transfer {
  const now = deps.now();
  return {
    id: deps.newId('transfer'),
    organizationId,
    direction: 'outbound',
    sourceWalletId: source.id,
    destination,
    destinationWalletId: destinationWallet?.id ?? null,
    amountMinor,
    currency,
    rail,
    network: destination.type === 'mobile_money' ? destination.network : null,
    status: 'pending',
    statusReason: null,
    failureCode: null,
    ledgerState: 'pending',
    metadata: metadata ?? {},
    ...newTransferLife(now),
    createdBy,
    fee,
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
  const wallets = await findWallets(deps.store, organizationId, walletIdsOf(request));
  const source = wallets.get(request.source);
  if (!source) throw resourceMissing('wallet', request.source, 'source');
  await guardMovementSource(deps, deps.store, source.id, 'source');
  const { currency, rail, amountMinor } = checkTransferRequest(request, source, wallets);
  const fee = decideFee(await loadFeeSchedule(deps, organizationId), { rail, currency, amountMinor });
  return { currency, rail, amountMinor, fee, totalMinor: amountMinor + fee.feeMinor };
}

export const getTransfer = getById<Transfer>(findTransfer, 'transfer');

/** A transfer's Travel Rule data for an operator, with the transfer; 404 for either missing. */
export async function getTransferTravelRule(
  deps: Deps,
  organizationId: string,
  id: string,
): Promise<{ transfer: Transfer; record: EvidenceRecord }> {
  const transfer = await getTransfer(deps, organizationId, id);
  return { transfer, record: await travelRuleRecordOf(deps, organizationId, transfer) };
}

export const listTransfers = listPage<TransferFilter, Transfer>(listTransferRows);
