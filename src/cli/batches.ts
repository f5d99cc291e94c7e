/**
 * `mkoba batches submit FILE --source WALLET_ID [--reference REF] [--wait] [--timeout SECONDS]`: submits a
 * payment batch to a running server (a CSV upload, or a JSON file of items or of the whole request), follows
 * it with a progress bar until every item is accepted (became a transfer) or refused, and reports accepted,
 * refused and canceled items, then how many of the accepted transfers have settled, failed or are still in
 * flight. An accepted item is not yet paid: with --wait the command also follows the transfers until none is
 * in flight. Everything is bounded by --timeout. The batch id is the one line on stdout; the exit code is 0
 * when every item was accepted and none of its transfers failed (with --wait: when every transfer settled).
 */

import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PAGE_SIZE_MAX } from '../domain/pagination.ts';
import type { TransferStatus } from '../domain/transfers.ts';
import { ApiError, type ApiTarget, apiRequest } from './apiClient.ts';
import { terminalProgressBar } from './progressBar.ts';
import { UsageError } from './usageError.ts';

type Io = { out: (line: string) => void; err: (line: string) => void };

/** How often the batch (and, with --wait, its transfers) is looked at while it runs. */
export const BATCH_POLL_INTERVAL_MS = 500;
/** How long the command follows a batch and (with --wait) its transfers, unless --timeout says otherwise. */
export const BATCH_FOLLOW_TIMEOUT_SECONDS_DEFAULT = 600;
/** The longest --timeout: a day. */
const BATCH_FOLLOW_TIMEOUT_SECONDS_MAX = 86_400;
/** Transfer statuses that are a final failure: the money did not reach the recipient (or came back). */
const FAILED_TRANSFER_STATUSES: ReadonlySet<TransferStatus> = new Set([
  'failed',
  'rejected',
  'expired',
  'canceled',
  'returned',
]);
/** Item faults printed at most when a batch is refused. */
const FAULTS_PRINTED_MAX = 50;

interface BatchView {
  id: string;
  status: string;
  items: number;
  succeeded: number;
  failed: number;
  canceled: number;
  total: string;
  currency: string;
  failure_code: string | null;
  source: string;
  created_at: string;
}

/** What became of a batch's accepted items, by their transfers' statuses. */
interface TransferOutcomes {
  settled: number;
  failed: number;
  inFlight: number;
}

export interface BatchSubmitOptions {
  source?: string | undefined;
  reference?: string | undefined;
  /** Follow the accepted transfers until none is in flight. */
  wait?: boolean | undefined;
  /** --timeout as given: whole seconds. */
  timeout?: string | undefined;
}

const FINISHED = new Set(['completed', 'partially_failed', 'failed', 'canceled']);

export async function batchesCommand(
  sub: string | undefined,
  rest: readonly string[],
  options: BatchSubmitOptions,
  target: ApiTarget,
  io: Io,
): Promise<number> {
  if (sub !== 'submit') throw new UsageError(`unknown batches command '${sub ?? ''}': use submit`);
  const file = rest[0];
  if (!file) throw new UsageError('batches submit needs a FILE (.csv, or .json)');
  if (!options.source) throw new UsageError('batches submit needs --source WALLET_ID');
  const timeoutSeconds = followTimeoutSecondsOf(options.timeout);
  const deadline = Date.now() + timeoutSeconds * 1000;
  const submitted = await submitBatch(file, options.source, options.reference, target, io);
  if (!submitted) return 1;
  io.err(`submitted ${submitted.id}: ${submitted.items} items, ${submitted.total} ${submitted.currency}`);
  io.out(submitted.id);
  const batch = await followBatch(submitted, target, deadline, io);
  const itemsUrl = `GET ${target.base}/payment-batches/${batch.id}/items`;
  if (!FINISHED.has(batch.status)) {
    io.err(
      `gave up after ${timeoutSeconds} s: the batch is still ${batch.status} (${batch.succeeded} accepted, ${batch.failed} refused so far of ${batch.items}); follow ${itemsUrl}`,
    );
    return 1;
  }
  io.err(
    `${batch.status}${batch.failure_code ? ` (${batch.failure_code})` : ''}: ${batch.succeeded} accepted, ${batch.failed} refused, ${batch.canceled} canceled of ${batch.items} items`,
  );
  const follow: TransferFollow = { target, deadline, timeoutSeconds, itemsUrl };
  return reportTransfers(batch, options.wait === true, follow, io);
}

/**
 * Submits the file as a batch paid from the source wallet, in the wallet's currency; undefined when the
 * server refused it for faulty items, each printed (up to FAULTS_PRINTED_MAX).
 */
async function submitBatch(
  file: string,
  source: string,
  givenReference: string | undefined,
  target: ApiTarget,
  io: Io,
): Promise<BatchView | undefined> {
  const wallet = (await apiRequest(target, 'GET', `/wallets/${encodeURIComponent(source)}`)).body as {
    currency: string;
  };
  const reference =
    givenReference ?? `${path.basename(file).replace(/[^A-Za-z0-9._:-]/g, '-')}-${randomUUID().slice(0, 8)}`;
  const text = await readFile(file, 'utf8');
  const headers = { 'idempotency-key': `mkoba-batch-${reference}` };
  try {
    if (file.toLowerCase().endsWith('.json')) {
      const parsed = JSON.parse(text) as unknown;
      const body = Array.isArray(parsed) ? { items: parsed } : (parsed as Record<string, unknown>);
      return (
        await apiRequest(target, 'POST', '/payment-batches', {
          body: { source, currency: wallet.currency, reference, ...body },
          headers,
        })
      ).body as BatchView;
    }
    const query = new URLSearchParams({ source, currency: wallet.currency, reference });
    return (
      await apiRequest(target, 'POST', `/payment-batches?${query}`, {
        raw: { contentType: 'text/csv', text },
        headers,
      })
    ).body as BatchView;
  } catch (error) {
    if (error instanceof ApiError && error.code === 'payment_batch_invalid') {
      const faults =
        (error.problem as { errors?: { row?: number; param: string; message: string }[] }).errors ?? [];
      for (const f of faults.slice(0, FAULTS_PRINTED_MAX))
        io.err(`row ${f.row ?? '?'} ${f.param}: ${f.message}`);
      if (faults.length > FAULTS_PRINTED_MAX) io.err(`… and ${faults.length - FAULTS_PRINTED_MAX} more`);
      io.err(`batch refused: ${faults.length} faulty item(s); nothing was submitted`);
      return undefined;
    }
    throw error;
  }
}

/** Follows the batch until it is finished or the deadline passes, with a progress bar on a terminal. */
async function followBatch(
  submitted: BatchView,
  target: ApiTarget,
  deadline: number,
  io: Io,
): Promise<BatchView> {
  let batch = submitted;
  const bar = await terminalProgressBar({
    format: 'batch [{bar}] {percentage}% | {value}/{total} items accepted or refused | {status}',
  });
  bar?.start(batch.items, 0, { status: batch.status });
  let lastStatus = '';
  while (!FINISHED.has(batch.status) && Date.now() < deadline) {
    await sleep(BATCH_POLL_INTERVAL_MS);
    batch = (await apiRequest(target, 'GET', `/payment-batches/${batch.id}`)).body as BatchView;
    const done = batch.succeeded + batch.failed + batch.canceled;
    bar?.update(done, { status: batch.status });
    if (!bar && batch.status !== lastStatus) io.err(`${batch.status}: ${done}/${batch.items} items`);
    lastStatus = batch.status;
  }
  bar?.stop();
  return batch;
}

/** Where and until when a finished batch's transfers are followed. */
interface TransferFollow {
  target: ApiTarget;
  deadline: number;
  timeoutSeconds: number;
  /** The request that lists the batch's items, named when the command stops following. */
  itemsUrl: string;
}

/**
 * Reports what the accepted items' transfers became (with `wait`, once none is in flight or the deadline
 * passes); returns the exit status.
 */
async function reportTransfers(
  batch: BatchView,
  wait: boolean,
  follow: TransferFollow,
  io: Io,
): Promise<number> {
  const { target, deadline, timeoutSeconds, itemsUrl } = follow;
  const transferIds = await acceptedTransferIds(target, batch.id);
  let outcomes = await transferOutcomes(target, batch, transferIds);
  io.err(transferOutcomesLine(outcomes));
  if (wait) {
    while (outcomes.inFlight > 0 && Date.now() < deadline) {
      await sleep(BATCH_POLL_INTERVAL_MS);
      const now = await transferOutcomes(target, batch, transferIds);
      if (now.inFlight !== outcomes.inFlight) io.err(transferOutcomesLine(now));
      outcomes = now;
    }
    if (outcomes.inFlight > 0) {
      io.err(
        `gave up after ${timeoutSeconds} s with ${outcomes.inFlight} transfer(s) still in flight; follow ${itemsUrl}`,
      );
      return 1;
    }
    io.err(
      `outcome: ${outcomes.settled} of ${batch.items} items settled, ${outcomes.failed} failed, ${batch.failed} refused, ${batch.canceled} canceled; items: ${itemsUrl}`,
    );
    return outcomes.settled === batch.items ? 0 : 1;
  }
  if (outcomes.inFlight > 0) {
    io.err(
      `accepted is not paid: the ${outcomes.inFlight} transfer(s) in flight settle or fail later; --wait waits for them, or follow ${itemsUrl}`,
    );
  }
  return batch.status === 'completed' && outcomes.failed === 0 ? 0 : 1;
}

function followTimeoutSecondsOf(text: string | undefined): number {
  if (text === undefined) return BATCH_FOLLOW_TIMEOUT_SECONDS_DEFAULT;
  const seconds = Number(text);
  if (!/^\d+$/.test(text.trim()) || seconds < 1 || seconds > BATCH_FOLLOW_TIMEOUT_SECONDS_MAX) {
    throw new UsageError(
      `--timeout takes whole seconds from 1 to ${BATCH_FOLLOW_TIMEOUT_SECONDS_MAX}; got '${text}'`,
    );
  }
  return seconds;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function transferOutcomesLine(outcomes: TransferOutcomes): string {
  return `transfers: ${outcomes.settled} settled, ${outcomes.failed} failed, ${outcomes.inFlight} in flight`;
}

/** The transfers the batch's accepted items became, from its item pages. */
async function acceptedTransferIds(target: ApiTarget, batchId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let after: number | undefined;
  for (;;) {
    const query = new URLSearchParams({ status: 'succeeded', limit: String(PAGE_SIZE_MAX) });
    if (after !== undefined) query.set('starting_after', String(after));
    const page = (await apiRequest(target, 'GET', `/payment-batches/${batchId}/items?${query}`)).body as {
      data: { transfer: string | null }[];
      has_more: boolean;
      next_cursor: number | null;
    };
    for (const item of page.data) if (item.transfer) ids.add(item.transfer);
    if (!page.has_more || page.next_cursor === null) return ids;
    after = page.next_cursor;
  }
}

/**
 * The statuses of the batch's transfers, read from the paying wallet's transfers since the batch was
 * created (a page holds a hundred, where asking for each transfer would take a request apiece).
 */
async function transferOutcomes(
  target: ApiTarget,
  batch: BatchView,
  transferIds: ReadonlySet<string>,
): Promise<TransferOutcomes> {
  const outcomes: TransferOutcomes = { settled: 0, failed: 0, inFlight: 0 };
  let seen = 0;
  let after: string | undefined;
  while (seen < transferIds.size) {
    const query = new URLSearchParams({
      wallet: batch.source,
      'created[gte]': batch.created_at,
      limit: String(PAGE_SIZE_MAX),
    });
    if (after !== undefined) query.set('starting_after', after);
    const page = (await apiRequest(target, 'GET', `/transfers?${query}`)).body as {
      data: { id: string; status: TransferStatus }[];
      has_more: boolean;
      next_cursor: string | null;
    };
    for (const transfer of page.data) {
      if (!transferIds.has(transfer.id)) continue;
      seen += 1;
      if (transfer.status === 'settled') outcomes.settled += 1;
      else if (FAILED_TRANSFER_STATUSES.has(transfer.status)) outcomes.failed += 1;
      else outcomes.inFlight += 1;
    }
    if (!page.has_more || page.next_cursor === null) break;
    after = page.next_cursor;
  }
  // Any the list did not show count as in flight: a count may understate what settled, never overstate it.
  outcomes.inFlight += transferIds.size - seen;
  return outcomes;
}
