/**
 * Through the public API only: create and fund the benchmark wallets, then drive `POST /v1/transfers`
 * with autocannon (one request in flight per connection) for a bounded duration or count.
 */
import autocannon from 'autocannon';
import { type RunResult, runResultOf } from './stats.ts';
import { TRANSFER_AMOUNT_TEXT, TRANSFER_CURRENCY } from './transferSql.ts';

const SETUP_REQUEST_TIMEOUT_MS = 30_000;
const SETUP_CONCURRENCY = 8;
/** Seconds autocannon waits for one response before it counts a time-out. */
const REQUEST_TIMEOUT_S = 30;

export interface Api {
  origin: string;
  apiKey: string;
}

async function call(
  api: Api,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${api.origin}${path}`, {
    method,
    headers: { authorization: `Bearer ${api.apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(SETUP_REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

async function inParallel<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * 2 * sources wallets; the first `sources` are funded with `fundsText` each. Source wallet i and destination
 * wallet sources + i belong to customer i: each customer's tier limits (150,000 KES a day at tier 0) then
 * bound one source's transfers, so a soak of many minutes on distinct wallets does not run into one
 * customer's day. The hot wallet's customer still has one day's limit.
 */
export async function createWallets(api: Api, sources: number, fundsText: string): Promise<string[]> {
  const customers = await inParallel(
    Array.from({ length: sources }, (_, i) => i),
    SETUP_CONCURRENCY,
    async (i) =>
      String(
        (await call(api, 'POST', '/v1/customers', { type: 'individual', name: `Bench Customer ${i}` })).id,
      ),
  );
  const indexes = Array.from({ length: 2 * sources }, (_, i) => i);
  const wallets = await inParallel(indexes, SETUP_CONCURRENCY, async (i) => {
    const wallet = await call(api, 'POST', '/v1/wallets', {
      owner: customers[i % sources],
      currency: TRANSFER_CURRENCY,
    });
    return String(wallet.id);
  });
  await inParallel(wallets.slice(0, sources), SETUP_CONCURRENCY, (id) => fundWallet(api, id, fundsText));
  return wallets;
}

/** The sandbox's fund route for one wallet (a real posting). */
export async function fundWallet(api: Api, walletId: string, fundsText: string): Promise<void> {
  await call(api, 'POST', `/v1/sandbox/wallets/${walletId}/fund`, { amount: fundsText });
}

export interface LoadOptions {
  connections: number;
  durationS: number;
  /** Requests in all; when set it ends the run instead of the duration (still capped by timeMaxS). */
  amount: number | undefined;
  timeMaxS: number;
  hot: boolean;
  idempotency: boolean;
  /** Keeps Idempotency-Keys of different runs apart. */
  tag: string;
}

/**
 * Distinct: request i moves money from source i mod N to its own destination, so the transfers in flight
 * never share a wallet. Hot: every request leaves wallet 0, destinations round-robin.
 */
export async function driveTransfers(
  api: Api,
  wallets: readonly string[],
  options: LoadOptions,
): Promise<RunResult> {
  const sources = wallets.length / 2;
  let sent = 0;
  const latenciesMs: number[] = [];
  const failures: Record<string, number> = {};
  let sampleFailure: string | undefined;
  let finish: (result: autocannon.Result) => void = () => {};
  const done = new Promise<autocannon.Result>((resolve) => {
    finish = resolve;
  });
  let runError: unknown;
  const instance = autocannon(
    {
      url: api.origin,
      connections: options.connections,
      pipelining: 1,
      timeout: REQUEST_TIMEOUT_S,
      ...(options.amount === undefined ? { duration: options.durationS } : { amount: options.amount }),
      headers: { authorization: `Bearer ${api.apiKey}`, 'content-type': 'application/json' },
      requests: [
        {
          method: 'POST',
          path: '/v1/transfers',
          setupRequest: (request) => {
            const i = sent++;
            const src = options.hot ? 0 : i % sources;
            const dst = sources + (options.hot ? i % sources : src);
            return {
              ...request,
              headers: {
                ...request.headers,
                ...(options.idempotency ? { 'idempotency-key': `bench-${options.tag}-${i}` } : {}),
              },
              body: JSON.stringify({
                source: wallets[src],
                destination: wallets[dst],
                amount: TRANSFER_AMOUNT_TEXT,
                currency: TRANSFER_CURRENCY,
              }),
            };
          },
          onResponse: (status, body) => {
            if (status !== 201 && sampleFailure === undefined)
              sampleFailure = `${status} ${body.slice(0, 300)}`;
          },
        },
      ],
    },
    (error, result) => {
      runError = error;
      finish(result);
    },
  );
  instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
    if (statusCode === 201) latenciesMs.push(responseTimeMs);
    else failures[String(statusCode)] = (failures[String(statusCode)] ?? 0) + 1;
  });
  // autocannon reports its duration in whole seconds in count mode, so the run is timed here.
  let startedAt = performance.now();
  instance.on('start', () => {
    startedAt = performance.now();
  });
  const guard = setTimeout(() => instance.stop(), options.timeMaxS * 1000);
  const result = await done;
  const durationS = (performance.now() - startedAt) / 1000;
  clearTimeout(guard);
  if (runError) throw runError;
  if (result.errors > 0) failures.connection_errors = result.errors - result.timeouts;
  if (result.timeouts > 0) failures.timeouts = result.timeouts;
  if (sampleFailure) process.stderr.write(`  first failed response: ${sampleFailure}\n`);
  return runResultOf(latenciesMs, durationS, failures);
}
