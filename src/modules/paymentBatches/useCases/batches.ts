/**
 * Payment batches: many payouts from one wallet, submitted at once. Submitting checks every item (a batch
 * with a faulty item is refused whole, naming each fault's row and field) and stores it `validating`. The
 * worker then authorizes the batch as a whole through the policy and holds its total on the ledger
 * (`pending_approval` when the policy asks for approval: one approval covers every item), and runs the
 * items in chunks, each chunk one transaction of the ledger writer: the reservation is released, the
 * items become ordinary transfers, and what is still to pay is reserved again. Every step is idempotent and
 * resumes where a killed process stopped: items carry their own idempotency keys, and a chunk's items,
 * transfers, entries and the batch's counters commit together.
 *
 * Past 400 lines: submit, authorize, run in chunks and cancel share the batch lock and its reservation.
 */

import {
  type ApprovableResource,
  cancelApprovalOf,
  newApproval,
  openApproval,
} from '../../../app/approvals.ts';
import { readCustomerPolicyFacts } from '../../../app/customerPolicyFacts.ts';
import type { Deps } from '../../../app/deps.ts';
import { newEvent, recordEvents } from '../../../app/events.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import { currentFeeScheduleIn } from '../../../app/fees.ts';
import { guardMovementSource } from '../../../app/movementSources.ts';
import { loadPolicy } from '../../../app/policies.ts';
import { PostingSession, refusalError } from '../../../app/posting/session.ts';
import type { ChunkResult, LedgerWriter, TransferCommand } from '../../../app/posting/writer.ts';
import { checkTransferRequest, prepareTransfer } from '../../../app/transfers.ts';
import type { Approval } from '../../../domain/approvals.ts';
import {
  decideBatchAuthorization,
  type PolicyDecision,
  type TransferFacts,
} from '../../../domain/decisions/policies.ts';
import { AppError, type FieldError, resourceMissing, validationError } from '../../../domain/errors.ts';
import type { EventRecord } from '../../../domain/events.ts';
import type { EvidenceActor, EvidenceDraft } from '../../../domain/evidence.ts';
import { decideFee, type FeeSchedule } from '../../../domain/fees.ts';
import { requestFingerprint } from '../../../domain/idempotency.ts';
import { holdPostings, voidHoldPostings } from '../../../domain/ledger.ts';
import type { Metadata } from '../../../domain/metadata.ts';
import { formatAmount, isCurrency } from '../../../domain/money.ts';
import { type Page, type PageRequest, toPage } from '../../../domain/pagination.ts';
import type { Destination } from '../../../domain/transfers.ts';
import type { Wallet } from '../../../domain/wallets.ts';
import {
  ensureSystemAccount,
  findJournalEntry,
  type JournalEntry,
} from '../../../store/repositories/ledger.ts';
import { findWallets } from '../../../store/repositories/wallets.ts';
import type { Queryable } from '../../../store/store.ts';
import {
  finishedStatus,
  isFinishedBatch,
  PAYMENT_BATCH_CHUNK_ITEMS,
  PAYMENT_BATCH_ITEMS_MAX,
  PAYMENT_BATCH_LEASE_MS,
  PAYMENT_BATCH_REFERENCE_PATTERN,
  type PaymentBatch,
  type PaymentBatchItem,
  type PaymentBatchStatus,
} from '../domain.ts';
import {
  type BatchFilter,
  cancelPendingItems,
  failPendingItems,
  findPaymentBatch,
  findPaymentBatchByReference,
  hasPendingItems,
  type ItemFilter,
  insertPaymentBatch,
  insertPaymentBatchItems,
  leaseRunnableBatch,
  listItems,
  listPaymentBatches,
  nextPendingItems,
  releaseBatchLease,
  saveItemOutcomes,
  savePaymentBatch,
} from '../repository.ts';

/** The most item faults a refused batch lists (the first ones, in row order). */
export const PAYMENT_BATCH_ERRORS_MAX = 1_000;

export interface SubmitPaymentBatchInput {
  source: string;
  currency: string;
  reference: string;
  items: readonly unknown[];
  metadata?: Metadata | undefined;
}

/** The `data` of a `payment_batch.*` event. */
export function paymentBatchEventData(b: PaymentBatch): Record<string, unknown> {
  return {
    payment_batch_id: b.id,
    reference: b.reference,
    status: b.status,
    failure_code: b.failureCode,
    source: b.sourceWalletId,
    currency: b.currency,
    total: formatAmount(b.totalMinor, b.currency),
    items: b.itemCount,
    succeeded: b.succeededCount,
    failed: b.failedCount,
    canceled: b.canceledCount,
    approval: b.approvalId,
  };
}

function batchEvent(deps: Deps, batch: PaymentBatch, type: string, now: Date): EventRecord {
  return newEvent(
    deps,
    {
      organizationId: batch.organizationId,
      type,
      resourceId: batch.id,
      data: paymentBatchEventData(batch),
    },
    now,
  );
}

const statusEvent = (deps: Deps, batch: PaymentBatch, now: Date) =>
  batchEvent(deps, batch, `payment_batch.${batch.status}`, now);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An item's fee in minor units (none on items submitted before fees). */
function itemFeeMinor(item: PaymentBatchItem): bigint {
  return item.fee?.feeMinor ?? 0n;
}

/** What an item takes from the paying wallet: its amount and its fee. */
function itemCostMinor(item: PaymentBatchItem): bigint {
  return item.amountMinor + itemFeeMinor(item);
}

interface CheckedItem {
  item: PaymentBatchItem;
  request: Record<string, unknown>;
}

/**
 * Checks every item and decides its fee by the schedule given; returns them, or throws one 422 listing each
 * faulty item's row and field.
 */
function checkItems(
  batchId: string,
  items: readonly unknown[],
  source: Wallet,
  wallets: ReadonlyMap<string, Wallet>,
  fees: FeeSchedule,
  now: Date,
): CheckedItem[] {
  const faults: FieldError[] = [];
  const checked: CheckedItem[] = [];
  const references = new Set<string>();
  const fault = (row: number, param: string, code: string, message: string) => {
    if (faults.length < PAYMENT_BATCH_ERRORS_MAX)
      faults.push({ param: `items.${row - 1}.${param}`, code, message, row });
  };
  items.forEach((raw, i) => {
    const row = i + 1;
    if (!isObject(raw)) {
      fault(row, '', 'invalid_type', `item ${row} must be an object`);
      return;
    }
    const known = ['reference', 'destination', 'amount', 'currency', 'rail', 'metadata'];
    const unknown = Object.keys(raw).find((k) => !known.includes(k));
    if (unknown !== undefined) {
      fault(row, unknown, 'unknown_field', `${unknown} is not a field of a batch item`);
      return;
    }
    const reference = raw.reference;
    if (typeof reference !== 'string' || !PAYMENT_BATCH_REFERENCE_PATTERN.test(reference)) {
      fault(
        row,
        'reference',
        'invalid_format',
        'reference must be 1-100 letters, digits or . _ : -, starting with a letter or digit',
      );
      return;
    }
    if (references.has(reference)) {
      fault(row, 'reference', 'duplicate', `reference '${reference}' appears twice in the batch`);
      return;
    }
    references.add(reference);
    if (raw.metadata !== undefined && !isObject(raw.metadata)) {
      fault(row, 'metadata', 'invalid_type', 'metadata must be an object');
      return;
    }
    const request = {
      destination: raw.destination as never,
      amount: raw.amount as string,
      currency: (raw.currency as string | undefined) ?? source.currency,
      ...(raw.rail === undefined ? {} : { rail: raw.rail as string }),
    };
    try {
      if (raw.destination === undefined)
        throw validationError('destination', 'destination is required', 'missing');
      if (typeof raw.amount !== 'string' && typeof raw.amount !== 'number') {
        throw validationError('amount', 'amount must be a decimal string such as "1500.00"', 'missing');
      }
      const c = checkTransferRequest(request, source, wallets);
      checked.push({
        item: {
          batchId,
          position: row,
          reference,
          destination: c.destination,
          destinationWalletId: c.destinationWallet?.id ?? null,
          rail: c.rail,
          amountMinor: c.amountMinor,
          fee: decideFee(fees, { rail: c.rail, currency: c.currency, amountMinor: c.amountMinor }),
          metadata: (raw.metadata as Metadata | undefined) ?? {},
          status: 'pending',
          transferId: null,
          failureCode: null,
          failureDetail: null,
          updatedAt: now,
        },
        request: raw,
      });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const first = error.errors[0];
      fault(row, first?.param ?? error.param ?? '', first?.code ?? error.code, `row ${row}: ${error.detail}`);
    }
  });
  if (faults.length > 0) {
    throw new AppError({
      status: 422,
      code: 'payment_batch_invalid',
      title: 'Invalid batch items',
      detail: `${faults.length === PAYMENT_BATCH_ERRORS_MAX ? 'At least ' : ''}${faults.length} item(s) are invalid; nothing was submitted. Each is listed in errors with its row and field.`,
      param: faults[0]?.param,
      errors: faults,
    });
  }
  return checked;
}

/**
 * Accepts a batch: every item checked against the paying wallet and its destination wallets, then the batch
 * and its items stored `validating` for the worker. A reference already used in the organization is a 409.
 */
export async function submitPaymentBatch(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: SubmitPaymentBatchInput,
  createdBy: string,
): Promise<PaymentBatch> {
  if (!PAYMENT_BATCH_REFERENCE_PATTERN.test(input.reference)) {
    throw validationError(
      'reference',
      'reference must be 1-100 letters, digits or . _ : -',
      'invalid_format',
    );
  }
  if (input.items.length === 0 || input.items.length > PAYMENT_BATCH_ITEMS_MAX) {
    throw validationError('items', `a batch has 1 to ${PAYMENT_BATCH_ITEMS_MAX} items`, 'out_of_range');
  }
  const destinationWallets = input.items.flatMap((raw) => {
    if (!isObject(raw)) return [];
    const d = raw.destination;
    if (typeof d === 'string') return [d];
    return isObject(d) && d.type === 'wallet' && typeof d.wallet === 'string' ? [d.wallet] : [];
  });
  const wallets = await findWallets(tx, organizationId, [input.source, ...destinationWallets]);
  const source = wallets.get(input.source);
  if (!source) throw resourceMissing('wallet', input.source, 'source');
  await guardMovementSource(deps, tx, source.id, 'source');
  if (!isCurrency(input.currency) || input.currency !== source.currency) {
    throw validationError(
      'currency',
      `currency must be ${source.currency}, the currency of the source wallet`,
      'currency_mismatch',
    );
  }
  const now = deps.now();
  const id = deps.newId('paymentBatch');
  // Each item's fee is decided now, by the schedule current at submission, so the batch holds exactly what
  // its items will pay however long it waits for approval; read once for the whole batch.
  const fees = await currentFeeScheduleIn(tx, deps, organizationId);
  const checked = checkItems(id, input.items, source, wallets, fees, now);
  const totalMinor = checked.reduce((sum, c) => sum + c.item.amountMinor, 0n);
  const feeTotalMinor = checked.reduce((sum, c) => sum + itemFeeMinor(c.item), 0n);
  const batch: PaymentBatch = {
    id,
    organizationId,
    reference: input.reference,
    sourceWalletId: source.id,
    currency: source.currency,
    status: 'validating',
    failureCode: null,
    itemCount: checked.length,
    totalMinor,
    feeTotalMinor,
    succeededCount: 0,
    failedCount: 0,
    canceledCount: 0,
    reservationEntryId: null,
    reservedMinor: 0n,
    createdBy,
    approvalId: null,
    authorization: null,
    metadata: input.metadata ?? {},
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
  };
  if (!(await insertPaymentBatch(tx, batch))) {
    const existing = await findPaymentBatchByReference(tx, organizationId, input.reference);
    throw new AppError({
      status: 409,
      code: 'duplicate_reference',
      title: 'Batch reference used',
      detail: `Batch reference '${input.reference}' is already used by ${existing?.id ?? 'another batch'}; a batch is paid once.`,
      param: 'reference',
    });
  }
  await insertPaymentBatchItems(
    tx,
    checked.map((c) => c.item),
  );
  await recordEvents(tx, deps, [batchEvent(deps, batch, 'payment_batch.created', now)]);
  return batch;
}

export async function getPaymentBatch(deps: Deps, organizationId: string, id: string): Promise<PaymentBatch> {
  const batch = await findPaymentBatch(deps.store, organizationId, id);
  if (!batch) throw resourceMissing('payment batch', id);
  return batch;
}

export async function listBatches(
  deps: Deps,
  organizationId: string,
  request: PageRequest & Omit<BatchFilter, keyof PageRequest>,
): Promise<Page<PaymentBatch>> {
  return toPage(
    await listPaymentBatches(deps.store, organizationId, request, request.limit + 1),
    request.limit,
  );
}

export async function listBatchItems(
  deps: Deps,
  organizationId: string,
  id: string,
  request: { limit: number } & ItemFilter,
): Promise<{ data: PaymentBatchItem[]; hasMore: boolean }> {
  await getPaymentBatch(deps, organizationId, id);
  const rows = await listItems(deps.store, id, request, request.limit + 1);
  return { data: rows.slice(0, request.limit), hasMore: rows.length > request.limit };
}

/** The organization's batch reserve account in the batch's currency. */
function reserveAccount(db: Queryable, deps: Deps, batch: PaymentBatch): Promise<string> {
  return ensureSystemAccount(db, {
    id: deps.newId('ledgerAccount'),
    organizationId: batch.organizationId,
    kind: 'payment_batch_reserve',
    rail: 'internal',
    currency: batch.currency,
    now: deps.now(),
  });
}

function reservationEntry(
  deps: Deps,
  batch: PaymentBatch,
  reserve: string,
  amountMinor: bigint,
  now: Date,
): JournalEntry {
  return {
    id: deps.newId('journalEntry'),
    organizationId: batch.organizationId,
    transferId: null,
    kind: 'hold',
    holdEntryId: null,
    createdAt: now,
    postings: holdPostings(batch.sourceWalletId, reserve, amountMinor, batch.currency),
  };
}

function releaseEntry(deps: Deps, hold: JournalEntry, now: Date): JournalEntry {
  return {
    id: deps.newId('journalEntry'),
    organizationId: hold.organizationId,
    transferId: null,
    kind: 'void',
    holdEntryId: hold.id,
    createdAt: now,
    postings: voidHoldPostings(hold.postings),
  };
}

/** Releases whatever the batch still holds, in the caller's transaction (the batch row is locked). */
async function releaseReservation(
  tx: Queryable,
  deps: Deps,
  batch: PaymentBatch,
  now: Date,
): Promise<PaymentBatch> {
  if (batch.reservationEntryId === null) return batch;
  const hold = await findJournalEntry(tx, batch.reservationEntryId);
  if (!hold) throw new Error(`reservation ${batch.reservationEntryId} of ${batch.id} is missing`);
  const session = new PostingSession(tx);
  await session.lock(hold.postings.map((p) => p.accountId));
  const refusal = session.tryPost(releaseEntry(deps, hold, now));
  if (refusal) throw refusalError(refusal, 'batch release');
  await session.flush(now);
  return { ...batch, reservationEntryId: null, reservedMinor: 0n };
}

/** Ends a batch that never ran: its items failed with one reason, whatever it held released. */
async function refuseBatch(
  tx: Queryable,
  deps: Deps,
  batch: PaymentBatch,
  code: string,
  detail: string,
  now: Date,
): Promise<PaymentBatch> {
  const released = await releaseReservation(tx, deps, batch, now);
  const failed = await failPendingItems(tx, batch.id, code, detail, now);
  const ended: PaymentBatch = {
    ...released,
    status: 'failed',
    failureCode: code,
    failedCount: released.failedCount + failed,
    updatedAt: now,
    finishedAt: now,
  };
  await savePaymentBatch(tx, ended);
  await recordEvents(tx, deps, [statusEvent(deps, ended, now)]);
  return ended;
}

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

/** The worker's first step: the policy's decision on the whole batch, and the hold of its total. */
async function authorizeAndReserve(deps: Deps, organizationId: string, id: string): Promise<void> {
  const found = await findPaymentBatch(deps.store, organizationId, id);
  if (found?.status !== 'validating') return;
  const policy = await loadPolicy(deps, organizationId);
  const wallets = await findWallets(deps.store, organizationId, [found.sourceWalletId]);
  const owner = wallets.get(found.sourceWalletId)?.ownerId;
  const customer = (owner && (await readCustomerPolicyFacts(deps, organizationId, owner))) || {};
  const items = await listItems(deps.store, id, {}, PAYMENT_BATCH_ITEMS_MAX);
  const decision: PolicyDecision = decideBatchAuthorization(
    policy,
    { totalMinor: found.totalMinor, currency: found.currency, sourceWalletId: found.sourceWalletId },
    items.map((item) => staticFacts(found, item, customer)),
  );
  await deps.store.transaction(async (tx) => {
    const batch = await findPaymentBatch(tx, organizationId, id, { forUpdate: true });
    if (batch?.status !== 'validating') return;
    const now = deps.now();
    const authorization = {
      decision: decision.decision,
      policyVersion: decision.policyVersion,
      rule: decision.rule,
    };
    // Appended last, once the wallet's account is locked: the evidence chain head is the last lock a money
    // movement takes (src/store/lockOrder.ts).
    const decided: EvidenceDraft[] = [
      {
        organizationId,
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
      },
    ];
    if (decision.decision === 'deny') {
      await refuseBatch(
        tx,
        deps,
        { ...batch, authorization },
        'policy_denied',
        `denied by policy version ${decision.policyVersion}, rule '${decision.rule}'`,
        now,
      );
      await appendEvidence(tx, deps, decided);
      return;
    }
    const reserve = await reserveAccount(tx, deps, batch);
    // The items' amounts and their fees: what the items will take from the wallet as they run.
    const holding = batch.totalMinor + batch.feeTotalMinor;
    const hold = reservationEntry(deps, batch, reserve, holding, now);
    const session = new PostingSession(tx);
    await session.lock([batch.sourceWalletId, reserve]);
    const refusal = session.tryPost(hold);
    if (refusal) {
      await refuseBatch(
        tx,
        deps,
        { ...batch, authorization },
        refusal.code,
        refusalError(refusal, 'batch').detail,
        now,
      );
      await appendEvidence(tx, deps, decided);
      return;
    }
    await session.flush(now);
    let next: PaymentBatch = {
      ...batch,
      authorization,
      reservationEntryId: hold.id,
      reservedMinor: holding,
      status: decision.decision === 'require_approval' ? 'pending_approval' : 'processing',
      updatedAt: now,
    };
    if (decision.decision === 'require_approval') {
      const approval = newApproval(deps, {
        organizationId,
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
    await appendEvidence(tx, deps, decided);
  });
}

/** The idempotency key of an item's transfer: the batch and the item's reference. */
export function itemIdempotencyKey(batchId: string, reference: string): string {
  return `${batchId}/${reference}`;
}

/** Runs the next chunk of a processing batch; returns false once nothing is left to run. */
async function runNextChunk(
  deps: Deps,
  writer: LedgerWriter,
  organizationId: string,
  id: string,
): Promise<boolean> {
  const batch = await findPaymentBatch(deps.store, organizationId, id);
  if (batch?.status !== 'processing') return false;
  const items = await nextPendingItems(deps.store, id, PAYMENT_BATCH_CHUNK_ITEMS);
  if (items.length === 0) return false;
  const commands: TransferCommand[] = [];
  const commandItems: PaymentBatchItem[] = [];
  const refused: { item: PaymentBatchItem; error: AppError }[] = [];
  const path = `/v1/payment-batches/${batch.id}/items`;
  // The chunk's wallets with one read, and each rail's clearing account once, for every item's preparation.
  const shared = {
    wallets: await findWallets(deps.store, organizationId, [
      batch.sourceWalletId,
      ...items.flatMap((item) => (item.destinationWalletId ? [item.destinationWalletId] : [])),
    ]),
    clearingAccounts: new Map<string, string>(),
  };
  const approved = batch.approvalId !== null ? batch.approvalId : undefined;
  for (const item of items) {
    const request = {
      source: batch.sourceWalletId,
      destination: item.destination as never,
      amount: formatAmount(item.amountMinor, batch.currency),
      currency: batch.currency,
      metadata: { ...item.metadata, payment_batch: batch.id, batch_item: item.reference },
    };
    try {
      const command = await prepareTransfer(
        deps,
        organizationId,
        request,
        {
          organizationId,
          key: itemIdempotencyKey(batch.id, item.reference),
          method: 'POST',
          path,
          fingerprint: requestFingerprint('POST', path, request),
          requestId: deps.newId('request'),
        },
        (t) => ({ id: t.id, status: t.status }),
        batch.createdBy,
        shared,
        // The fee decided at submission, which the batch's hold covers (none on items from before fees).
        item.fee,
      );
      commands.push({ ...command, coveredByApproval: approved, released: 'payment_batch_item' });
      commandItems.push(item);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      refused.push({ item, error });
    }
  }
  const chunkMinor = items.reduce((sum, item) => sum + itemCostMinor(item), 0n);
  const reserve = await reserveAccount(deps.store, deps, batch);
  let state: { batch: PaymentBatch; hold?: JournalEntry; next?: JournalEntry | null; stuck?: AppError } = {
    batch,
  };
  await writer
    .runChunk(commands, {
      accounts: [batch.sourceWalletId, reserve],
      async lockFirst(tx) {
        const locked = await findPaymentBatch(tx, organizationId, id, { forUpdate: true });
        if (locked?.status !== 'processing') throw new ChunkSuperseded();
        const hold =
          locked.reservationEntryId === null
            ? undefined
            : await findJournalEntry(tx, locked.reservationEntryId);
        state = { batch: locked, ...(hold ? { hold } : {}) };
      },
      beforeDecide(session, now) {
        if (state.hold) {
          const refusal = session.tryPost(releaseEntry(deps, state.hold, now));
          if (refusal) throw refusalError(refusal, 'batch release');
        }
      },
      afterDecide(session, _results, now) {
        const remaining = state.batch.reservedMinor - chunkMinor;
        if (remaining <= 0n) {
          state.next = null;
          return;
        }
        const entry = reservationEntry(deps, state.batch, reserve, remaining, now);
        const refusal = session.tryPost(entry);
        if (refusal) state.stuck = refusalError(refusal, 'batch');
        state.next = refusal ? null : entry;
      },
      async record(tx, results: ChunkResult[], now) {
        const outcomes: PaymentBatchItem[] = [];
        let succeeded = 0;
        let failed = 0;
        results.forEach((result, i) => {
          const item = commandItems[i] as PaymentBatchItem;
          const transferId = result.transfer?.id ?? createdTransferId(result);
          if (transferId) {
            succeeded++;
            outcomes.push({ ...item, status: 'succeeded', transferId, updatedAt: now });
          } else {
            failed++;
            const error = result.outcome instanceof AppError ? result.outcome : undefined;
            outcomes.push({
              ...item,
              status: 'failed',
              failureCode: error?.code ?? problemCodeOf(result) ?? 'internal_error',
              failureDetail: error?.detail ?? problemDetailOf(result) ?? null,
              updatedAt: now,
            });
          }
        });
        for (const { item, error } of refused) {
          failed++;
          outcomes.push({
            ...item,
            status: 'failed',
            failureCode: error.code,
            failureDetail: error.detail,
            updatedAt: now,
          });
        }
        await saveItemOutcomes(tx, outcomes);
        let next: PaymentBatch = {
          ...state.batch,
          succeededCount: state.batch.succeededCount + succeeded,
          failedCount: state.batch.failedCount + failed,
          reservationEntryId: state.next?.id ?? null,
          reservedMinor: state.next ? state.batch.reservedMinor - chunkMinor : 0n,
          updatedAt: now,
        };
        if (state.stuck) {
          // The wallet can no longer hold what is still to pay (frozen meanwhile): the rest fails.
          const rest = await failPendingItems(tx, next.id, state.stuck.code, state.stuck.detail, now);
          next = { ...next, failedCount: next.failedCount + rest };
        }
        if (!(await hasPendingItems(tx, next.id))) {
          next = {
            ...next,
            status: finishedStatus({
              succeeded: next.succeededCount,
              failed: next.failedCount,
              canceled: next.canceledCount,
            }),
            finishedAt: now,
          };
        }
        await savePaymentBatch(tx, next);
        if (next.status !== 'processing') await recordEvents(tx, deps, [statusEvent(deps, next, now)]);
        state.batch = next;
      },
    })
    .catch((error: unknown) => {
      if (!(error instanceof ChunkSuperseded)) throw error;
    });
  return state.batch.status === 'processing';
}

/** Thrown inside a chunk's transaction when the batch left `processing` meanwhile (a cancel won). */
class ChunkSuperseded extends Error {}

/** The transfer id a replayed outcome (the item ran before, its key answered) names. */
function createdTransferId(result: ChunkResult): string | undefined {
  if (result.outcome instanceof AppError || result.outcome.status !== 201) return undefined;
  return (JSON.parse(result.outcome.text) as { id?: string }).id;
}

function problemCodeOf(result: ChunkResult): string | undefined {
  if (result.outcome instanceof AppError) return result.outcome.code;
  return (JSON.parse(result.outcome.text) as { code?: string }).code;
}

function problemDetailOf(result: ChunkResult): string | undefined {
  if (result.outcome instanceof AppError) return result.outcome.detail;
  return (JSON.parse(result.outcome.text) as { detail?: string }).detail;
}

/**
 * One pass of the batch worker: takes one runnable batch under a lease and runs its next step (authorize and
 * reserve, or its chunks until done or the lease is half spent). Returns whether it found work.
 */
export async function runPaymentBatchWorkerOnce(
  deps: Deps,
  writer: LedgerWriter,
  chunksMax = Number.POSITIVE_INFINITY,
): Promise<boolean> {
  const leased = await leaseRunnableBatch(deps.store, deps.now(), PAYMENT_BATCH_LEASE_MS);
  if (!leased) return false;
  const startedMs = Date.now();
  try {
    await authorizeAndReserve(deps, leased.organizationId, leased.id);
    for (
      let chunks = 0;
      chunks < chunksMax && Date.now() - startedMs < PAYMENT_BATCH_LEASE_MS / 2;
      chunks++
    ) {
      if (!(await runNextChunk(deps, writer, leased.organizationId, leased.id))) break;
    }
  } finally {
    await releaseBatchLease(deps.store, leased.id);
  }
  return true;
}

/** Cancels a batch that has not finished: pending items are canceled and what it holds is released. */
export async function cancelPaymentBatch(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  actor: EvidenceActor,
): Promise<PaymentBatch> {
  const batch = await findPaymentBatch(tx, organizationId, id, { forUpdate: true });
  if (!batch) throw resourceMissing('payment batch', id);
  if (isFinishedBatch(batch.status)) {
    throw new AppError({
      status: 409,
      code: 'invalid_state_transition',
      title: 'Batch finished',
      detail: `Payment batch ${batch.id} is ${batch.status}; only a batch still running can be canceled.`,
    });
  }
  const now = deps.now();
  const released = await releaseReservation(tx, deps, batch, now);
  // After the hold is released: the approval's evidence takes the chain head, the last lock of the order.
  if (batch.status === 'pending_approval') await cancelApprovalOf(tx, deps, batch.id, actor);
  const canceled = await cancelPendingItems(tx, batch.id, now);
  const ended: PaymentBatch = {
    ...released,
    status: 'canceled',
    canceledCount: released.canceledCount + canceled,
    updatedAt: now,
    finishedAt: now,
  };
  await savePaymentBatch(tx, ended);
  await recordEvents(tx, deps, [statusEvent(deps, ended, now)]);
  return ended;
}

/** A batch's approval was decided (the caller holds the batch's lock): it runs, or it ends releasing its hold. */
export async function decideBatchApproval(
  tx: Queryable,
  deps: Deps,
  approval: Approval,
): Promise<PaymentBatchStatus | null> {
  const batch = await findPaymentBatch(tx, approval.organizationId, approval.resourceId);
  if (batch?.status !== 'pending_approval') return batch?.status ?? null;
  const now = deps.now();
  if (approval.status === 'approved') {
    const running: PaymentBatch = { ...batch, status: 'processing', updatedAt: now };
    await savePaymentBatch(tx, running);
    await recordEvents(tx, deps, [statusEvent(deps, running, now)]);
    return running.status;
  }
  const code = approval.status === 'expired' ? 'approval_expired' : 'approval_rejected';
  const ended = await refuseBatch(tx, deps, batch, code, `the batch's approval was ${approval.status}`, now);
  return ended.status;
}

/** A payment batch as an approval's resource. */
export const PAYMENT_BATCH_APPROVALS: ApprovableResource & { type: 'payment_batch' } = {
  type: 'payment_batch',
  async lock(tx, organizationId, resourceId) {
    await findPaymentBatch(tx, organizationId, resourceId, { forUpdate: true });
    return { settle: (tx, deps, approval) => decideBatchApproval(tx, deps, approval) };
  },
};
