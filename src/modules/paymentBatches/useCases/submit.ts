/**
 * Submitting a batch: every item is checked (a batch with a faulty item is refused whole, naming each
 * fault's row and field) and its fee decided, then the batch is stored `validating` for the worker.
 */

import type { Deps } from '../../../app/deps.ts';
import { recordEvents } from '../../../app/events.ts';
import { AppError, type FieldError, resourceMissing, validationError } from '../../../domain/errors.ts';
import { isRecord } from '../../../domain/json.ts';
import type { Metadata } from '../../../domain/metadata.ts';
import { requireSourceCurrency, type Wallet } from '../../../domain/wallets.ts';
import type { Queryable } from '../../../store/store.ts';
import { currentFeeScheduleIn, decideFee, type FeeSchedule } from '../../fees/index.ts';
import { guardMovementSource } from '../../ledger/index.ts';
import { checkTransferRequest } from '../../transfers/index.ts';
import { findWallets } from '../../wallets/index.ts';
import {
  PAYMENT_BATCH_ITEMS_MAX,
  PAYMENT_BATCH_REFERENCE_PATTERN,
  type PaymentBatch,
  type PaymentBatchItem,
} from '../domain.ts';
import { findPaymentBatchByReference, insertPaymentBatch, insertPaymentBatchItems } from '../repository.ts';
import { batchEvent } from './events.ts';
import { itemFeeMinor } from './reservation.ts';

/** The most item faults a refused batch lists (the first ones, in row order). */
export const PAYMENT_BATCH_ERRORS_MAX = 1_000;

export interface SubmitPaymentBatchInput {
  source: string;
  currency: string;
  reference: string;
  items: readonly unknown[];
  metadata?: Metadata | undefined;
}

interface CheckedItem {
  item: PaymentBatchItem;
  request: Record<string, unknown>;
}

/** Reports an item's fault: its row (from 1), the field, a code and a message. */
type ItemFault = (row: number, param: string, code: string, message: string) => void;

/**
 * An item's shape: an object of known fields, its reference well formed and not already used in the
 * batch, its metadata an object. Returns the item, or undefined once its first fault is reported.
 */
function checkItemShape(
  raw: unknown,
  row: number,
  references: Set<string>,
  fault: ItemFault,
): (Record<string, unknown> & { reference: string }) | undefined {
  if (!isRecord(raw)) {
    fault(row, '', 'invalid_type', `item ${row} must be an object`);
    return undefined;
  }
  const known = ['reference', 'destination', 'amount', 'currency', 'rail', 'metadata'];
  const unknown = Object.keys(raw).find((k) => !known.includes(k));
  if (unknown !== undefined) {
    fault(row, unknown, 'unknown_field', `${unknown} is not a field of a batch item`);
    return undefined;
  }
  const reference = raw.reference;
  if (typeof reference !== 'string' || !PAYMENT_BATCH_REFERENCE_PATTERN.test(reference)) {
    fault(
      row,
      'reference',
      'invalid_format',
      'reference must be 1-100 letters, digits or . _ : -, starting with a letter or digit',
    );
    return undefined;
  }
  if (references.has(reference)) {
    fault(row, 'reference', 'duplicate', `reference '${reference}' appears twice in the batch`);
    return undefined;
  }
  references.add(reference);
  if (raw.metadata !== undefined && !isRecord(raw.metadata)) {
    fault(row, 'metadata', 'invalid_type', 'metadata must be an object');
    return undefined;
  }
  return raw as Record<string, unknown> & { reference: string };
}

/**
 * An item checked as the transfer it will become (against the paying wallet and the destination wallets),
 * with its fee decided by the schedule given; throws the AppError of its first fault.
 */
function checkItemTransfer(
  batchId: string,
  raw: Record<string, unknown> & { reference: string },
  row: number,
  source: Wallet,
  wallets: ReadonlyMap<string, Wallet>,
  fees: FeeSchedule,
  now: Date,
): CheckedItem {
  const request = {
    destination: raw.destination as never,
    amount: raw.amount as string,
    currency: (raw.currency as string | undefined) ?? source.currency,
    ...(raw.rail === undefined ? {} : { rail: raw.rail as string }),
  };
  if (raw.destination === undefined)
    throw validationError('destination', 'destination is required', 'missing');
  if (typeof raw.amount !== 'string' && typeof raw.amount !== 'number') {
    throw validationError('amount', 'amount must be a decimal string such as "1500.00"', 'missing');
  }
  const c = checkTransferRequest(request, source, wallets);
  return {
    item: {
      batchId,
      position: row,
      reference: raw.reference,
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
  };
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
  const fault: ItemFault = (row, param, code, message) => {
    if (faults.length < PAYMENT_BATCH_ERRORS_MAX)
      faults.push({ param: `items.${row - 1}.${param}`, code, message, row });
  };
  items.forEach((raw, i) => {
    const row = i + 1;
    const shaped = checkItemShape(raw, row, references, fault);
    if (!shaped) return;
    try {
      checked.push(checkItemTransfer(batchId, shaped, row, source, wallets, fees, now));
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

/** A batch's reference and its number of items, checked before anything is read. */
function checkBatchShape(input: SubmitPaymentBatchInput): void {
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
}

/** The wallets the items name as destinations, read with the paying wallet in one query. */
function destinationWalletIds(items: readonly unknown[]): string[] {
  return items.flatMap((raw) => {
    if (!isRecord(raw)) return [];
    const d = raw.destination;
    if (typeof d === 'string') return [d];
    return isRecord(d) && d.type === 'wallet' && typeof d.wallet === 'string' ? [d.wallet] : [];
  });
}

/** Stores the batch, or refuses a reference the organization has used already: a 409 naming its batch. */
async function insertUnlessReferenceUsed(tx: Queryable, batch: PaymentBatch): Promise<void> {
  if (!(await insertPaymentBatch(tx, batch))) {
    const existing = await findPaymentBatchByReference(tx, batch.organizationId, batch.reference);
    throw new AppError({
      status: 409,
      code: 'duplicate_reference',
      title: 'Batch reference used',
      detail: `Batch reference '${batch.reference}' is already used by ${existing?.id ?? 'another batch'}; a batch is paid once.`,
      param: 'reference',
    });
  }
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
  checkBatchShape(input);
  const wallets = await findWallets(tx, organizationId, [input.source, ...destinationWalletIds(input.items)]);
  const source = wallets.get(input.source);
  if (!source) throw resourceMissing('wallet', input.source, 'source');
  await guardMovementSource(deps, tx, source.id, 'source');
  requireSourceCurrency(input.currency, source);
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
  await insertUnlessReferenceUsed(tx, batch);
  await insertPaymentBatchItems(
    tx,
    checked.map((c) => c.item),
  );
  await recordEvents(tx, deps, [batchEvent(deps, batch, 'payment_batch.created', now)]);
  return batch;
}
