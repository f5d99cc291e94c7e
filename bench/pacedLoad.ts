/**
 * An open-loop load at a constant rate: request i is due at start + i / rate, sent then on one of a bounded
 * set of kept-alive connections, and its latency counts from when it was due, so a request that had to wait
 * for a free connection is charged for the wait (no coordinated omission). autocannon's own rate limit is not
 * used for this: it lets each second's budget go at full speed and then pauses, which measures bursts.
 */
import http from 'node:http';
import { type RunResult, runResultOf } from './stats.ts';
import { TRANSFER_AMOUNT_TEXT, TRANSFER_CURRENCY } from './transferSql.ts';

const REQUEST_TIMEOUT_MS = 30_000;
/** The scheduler wakes at least this often to send what has come due. */
const TICK_MS = 1;

export interface PacedOptions {
  connections: number;
  ratePerS: number;
  durationS: number;
  hot: boolean;
  idempotency: boolean;
  tag: string;
}

export async function drivePaced(
  api: { origin: string; apiKey: string },
  wallets: readonly string[],
  options: PacedOptions,
): Promise<RunResult> {
  const sources = wallets.length / 2;
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const url = new URL('/v1/transfers', api.origin);
  const total = Math.max(1, Math.round(options.ratePerS * options.durationS));
  const latenciesMs: number[] = [];
  const failures: Record<string, number> = {};
  let sampleFailure: string | undefined;

  const send = (i: number, dueAt: number) =>
    new Promise<void>((resolve) => {
      const src = options.hot ? 0 : i % sources;
      const dst = sources + (options.hot ? i % sources : src);
      const body = JSON.stringify({
        source: wallets[src],
        destination: wallets[dst],
        amount: TRANSFER_AMOUNT_TEXT,
        currency: TRANSFER_CURRENCY,
      });
      const request = http.request(
        url,
        {
          method: 'POST',
          agent,
          timeout: REQUEST_TIMEOUT_MS,
          headers: {
            authorization: `Bearer ${api.apiKey}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            ...(options.idempotency ? { 'idempotency-key': `bench-${options.tag}-${i}` } : {}),
          },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            if (text.length < 300) text += chunk;
          });
          response.on('end', () => {
            if (response.statusCode === 201) latenciesMs.push(performance.now() - dueAt);
            else {
              const code = String(response.statusCode);
              failures[code] = (failures[code] ?? 0) + 1;
              sampleFailure ??= `${code} ${text.slice(0, 300)}`;
            }
            resolve();
          });
        },
      );
      request.on('timeout', () => request.destroy(new Error('timeout')));
      request.on('error', (error) => {
        const code = (error as NodeJS.ErrnoException).code ?? error.message.slice(0, 40);
        failures[code] = (failures[code] ?? 0) + 1;
        resolve();
      });
      request.end(body);
    });

  const startedAt = performance.now();
  const intervalMs = 1000 / options.ratePerS;
  const inFlight: Promise<void>[] = [];
  let next = 0;
  while (next < total) {
    const now = performance.now();
    while (next < total && startedAt + next * intervalMs <= now) {
      inFlight.push(send(next, startedAt + next * intervalMs));
      next++;
    }
    await new Promise((resolve) => setTimeout(resolve, TICK_MS));
  }
  await Promise.all(inFlight);
  const durationS = (performance.now() - startedAt) / 1000;
  agent.destroy();
  if (sampleFailure) process.stderr.write(`  first failed response: ${sampleFailure}\n`);
  return runResultOf(latenciesMs, durationS, failures);
}
