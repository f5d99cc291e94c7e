/**
 * Clients sending internal transfers one after another, each under its own Idempotency-Key, each to one
 * of the servers. A 503 is retried under the same key after its Retry-After, as a client should; any
 * other answer ends that transfer's attempts. Every attempt is kept with its answer and timing.
 */
import { randomUUID } from 'node:crypto';
import { sleep } from './daemon.ts';

/** Attempts of one transfer before the client gives up on it (the test then fails). */
const ATTEMPTS_MAX = 60;
const MS_PER_SECOND = 1_000;

export interface Attempt {
  startedAt: number;
  endedAt: number;
  /** The HTTP status, or what went wrong before one came (a time-out, a refused connection). */
  status: number | string;
  retryAfter: string | null;
  replayed: boolean;
  code?: string;
}

export interface LoadTransfer {
  key: string;
  server: string;
  body: Record<string, string>;
  attempts: Attempt[];
  /** The transfer's id once a 201 acknowledged it. */
  id?: string;
}

export interface TransferLoad {
  transfers: LoadTransfer[];
  /** Stops starting new transfers and waits for each client's current one to settle. */
  stop(): Promise<void>;
}

async function attempt(transfer: LoadTransfer, apiKey: string, requestBoundMs: number): Promise<Attempt> {
  const startedAt = Date.now();
  try {
    const response = await fetch(`${transfer.server}/transfers`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        'idempotency-key': transfer.key,
      },
      body: JSON.stringify(transfer.body),
      signal: AbortSignal.timeout(requestBoundMs),
    });
    const answer = (await response.json()) as { id?: string; code?: string };
    if (response.status === 201) transfer.id = answer.id;
    return {
      startedAt,
      endedAt: Date.now(),
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      replayed: response.headers.get('idempotent-replayed') === 'true',
      ...(answer.code ? { code: answer.code } : {}),
    };
  } catch (error) {
    return { startedAt, endedAt: Date.now(), status: String(error), retryAfter: null, replayed: false };
  }
}

export function startTransferLoad(
  servers: string[],
  apiKey: string,
  pairs: { source: string; target: string }[],
  requestBoundMs: number,
): TransferLoad {
  const transfers: LoadTransfer[] = [];
  let running = true;
  const client = async (pair: { source: string; target: string }, index: number) => {
    const server = servers[index % servers.length] as string;
    while (running) {
      const transfer: LoadTransfer = {
        key: `ha-${randomUUID()}`,
        server,
        body: {
          source: pair.source,
          destination: pair.target,
          amount: '0.01',
          currency: 'KES',
          rail: 'internal',
        },
        attempts: [],
      };
      transfers.push(transfer);
      for (let i = 0; i < ATTEMPTS_MAX; i++) {
        const result = await attempt(transfer, apiKey, requestBoundMs);
        transfer.attempts.push(result);
        if (result.status !== 503 || result.retryAfter === null) break;
        await sleep(Number(result.retryAfter) * MS_PER_SECOND);
      }
    }
  };
  const clients = pairs.map(client);
  return {
    transfers,
    async stop() {
      running = false;
      await Promise.all(clients);
    },
  };
}
