/**
 * The webhook benchmark's receiver, a process of its own (forked by bench/webhooks.ts) so that the load
 * generator's event loop never delays its clock. It listens on 127.0.0.1, stamps every request when its
 * headers have been parsed (the first bytes of a delivery: the sender opens a fresh connection for each and
 * writes headers and body at once), answers 200 at once on any path but /slow, and /slow after
 * BENCH_RECEIVER_SLOW_MS. Each arrival goes to the parent over IPC. Times are process.hrtime (the system's
 * monotonic clock, the same in every process on the machine), in milliseconds.
 */
import http from 'node:http';

/** Enough for any envelope the server sends; beyond this the body is not kept. */
const BODY_BYTES_MAX = 64 * 1024;
const SLOW_MS_MAX = 60_000;

export interface Arrival {
  kind: 'arrival';
  path: 'fast' | 'slow';
  /** Service-Event-Id header. */
  headerId: string;
  /** The envelope's id, type, created_at and data.transfer_id (undefined when the body did not parse). */
  eventId: string | undefined;
  type: string | undefined;
  createdAt: string | undefined;
  transferId: string | undefined;
  /** process.hrtime in ms when the request's headers were parsed. */
  arrivedMs: number;
  /** Date.now() at the same moment, to compare with created_at (the server's wall clock). */
  arrivedWallMs: number;
}

export interface ReceiverReady {
  kind: 'ready';
  port: number;
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const slowMs = Math.min(SLOW_MS_MAX, Math.max(0, Number(process.env.BENCH_RECEIVER_SLOW_MS ?? 0) || 0));

const send = (message: Arrival | ReceiverReady) => process.send?.(message);

const server = http.createServer((request, response) => {
  const arrivedMs = nowMs();
  const arrivedWallMs = Date.now();
  const slow = (request.url ?? '').startsWith('/slow');
  const answer = () => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('ok');
  };
  if (slow) setTimeout(answer, slowMs);
  else answer();
  const chunks: Buffer[] = [];
  let bytes = 0;
  request.on('data', (chunk: Buffer) => {
    if (bytes >= BODY_BYTES_MAX) return;
    chunks.push(chunk);
    bytes += chunk.length;
  });
  request.on('end', () => {
    let envelope: Record<string, unknown> = {};
    try {
      envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      // Counted by the parent as an arrival it cannot match.
    }
    const data = (envelope.data ?? {}) as Record<string, unknown>;
    const header = request.headers['service-event-id'];
    send({
      kind: 'arrival',
      path: slow ? 'slow' : 'fast',
      headerId: typeof header === 'string' ? header : '',
      eventId: typeof envelope.id === 'string' ? envelope.id : undefined,
      type: typeof envelope.type === 'string' ? envelope.type : undefined,
      createdAt: typeof envelope.created_at === 'string' ? envelope.created_at : undefined,
      transferId: typeof data.transfer_id === 'string' ? data.transfer_id : undefined,
      arrivedMs,
      arrivedWallMs,
    });
  });
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  send({ kind: 'ready', port: typeof address === 'object' && address ? address.port : 0 });
});

// The parent ends the receiver by closing the channel (or by exiting).
process.on('disconnect', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
