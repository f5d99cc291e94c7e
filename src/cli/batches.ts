/**
 * `mkoba batches submit FILE --source WALLET_ID [--reference REF]`: submits a payment batch to a running
 * server (a CSV upload, or a JSON file of items or of the whole request), then follows it with a progress
 * bar until it finishes, and prints a summary. The batch id is the one line on stdout; the exit code is 0
 * when every item became a transfer.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { SingleBar } from 'cli-progress';
import { ApiError, type ApiTarget, apiRequest } from './apiClient.ts';
import { UsageError } from './usageError.ts';

type Io = { out: (line: string) => void; err: (line: string) => void };

/** How often the batch is looked at while it runs. */
export const BATCH_POLL_INTERVAL_MS = 500;
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
}

const FINISHED = new Set(['completed', 'partially_failed', 'failed', 'canceled']);

export async function batchesCommand(
  sub: string | undefined,
  rest: readonly string[],
  options: { source?: string | undefined; reference?: string | undefined },
  target: ApiTarget,
  io: Io,
): Promise<number> {
  if (sub !== 'submit') throw new UsageError(`unknown batches command '${sub ?? ''}': use submit`);
  const file = rest[0];
  if (!file) throw new UsageError('batches submit needs a FILE (.csv, or .json)');
  if (!options.source) throw new UsageError('batches submit needs --source WALLET_ID');
  const wallet = (await apiRequest(target, 'GET', `/wallets/${encodeURIComponent(options.source)}`)).body as {
    currency: string;
  };
  const reference =
    options.reference ??
    `${path.basename(file).replace(/[^A-Za-z0-9._:-]/g, '-')}-${randomUUID().slice(0, 8)}`;
  const text = await readFile(file, 'utf8');
  const headers = { 'idempotency-key': `mkoba-batch-${reference}` };
  let answer: Awaited<ReturnType<typeof apiRequest>>;
  try {
    if (file.toLowerCase().endsWith('.json')) {
      const parsed = JSON.parse(text) as unknown;
      const body = Array.isArray(parsed) ? { items: parsed } : (parsed as Record<string, unknown>);
      answer = await apiRequest(target, 'POST', '/payment-batches', {
        body: { source: options.source, currency: wallet.currency, reference, ...body },
        headers,
      });
    } else {
      const query = new URLSearchParams({ source: options.source, currency: wallet.currency, reference });
      answer = await apiRequest(target, 'POST', `/payment-batches?${query}`, {
        raw: { contentType: 'text/csv', text },
        headers,
      });
    }
  } catch (error) {
    if (error instanceof ApiError && error.code === 'payment_batch_invalid') {
      const faults =
        (error.problem as { errors?: { row?: number; param: string; message: string }[] }).errors ?? [];
      for (const f of faults.slice(0, FAULTS_PRINTED_MAX))
        io.err(`row ${f.row ?? '?'} ${f.param}: ${f.message}`);
      if (faults.length > FAULTS_PRINTED_MAX) io.err(`… and ${faults.length - FAULTS_PRINTED_MAX} more`);
      io.err(`batch refused: ${faults.length} faulty item(s); nothing was submitted`);
      return 1;
    }
    throw error;
  }
  let batch = answer.body as BatchView;
  io.err(`submitted ${batch.id}: ${batch.items} items, ${batch.total} ${batch.currency}`);
  io.out(batch.id);
  const bar = process.stderr.isTTY
    ? new SingleBar({
        format: 'paying [{bar}] {percentage}% | {value}/{total} items | {status}',
        stream: process.stderr,
      })
    : undefined;
  bar?.start(batch.items, 0, { status: batch.status });
  let lastStatus = '';
  while (!FINISHED.has(batch.status)) {
    await new Promise((resolve) => setTimeout(resolve, BATCH_POLL_INTERVAL_MS));
    batch = (await apiRequest(target, 'GET', `/payment-batches/${batch.id}`)).body as BatchView;
    const done = batch.succeeded + batch.failed + batch.canceled;
    bar?.update(done, { status: batch.status });
    if (!bar && batch.status !== lastStatus) io.err(`${batch.status}: ${done}/${batch.items} items`);
    lastStatus = batch.status;
  }
  bar?.stop();
  io.err(
    `${batch.status}${batch.failure_code ? ` (${batch.failure_code})` : ''}: ${batch.succeeded} paid, ${batch.failed} failed, ${batch.canceled} canceled of ${batch.items}; items: GET ${target.base}/payment-batches/${batch.id}/items`,
  );
  return batch.status === 'completed' ? 0 : 1;
}
