/**
 * What every partner simulator's HTTP server does the same way: listening on a free port, closing with its
 * connections, recording a received request, reading a bounded body, decoding a path parameter, and
 * waiting until the simulator's state reaches a condition (checked after each change it announces).
 */
import type http from 'node:http';

export interface SimulatorReceivedRequest {
  method: string;
  /** The path with its query, as sent. */
  path: string;
  /** Lower-case header names. */
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The status answered; 0 while unanswered (a hanging request). */
  status: number;
  at: number;
}

/** Listens on `port` (0 picks a free one) and resolves with the server's origin, `http://host:port`. */
export async function listenOn(server: http.Server, port = 0, host = '127.0.0.1'): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the simulator has no TCP address');
  const hostName = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${hostName}:${address.port}`;
}

/** Stops the simulator's timers and closes its server, cutting open connections. */
export function closeSimulator(server: http.Server, timers: Set<NodeJS.Timeout>): Promise<void> {
  for (const timer of timers) clearTimeout(timer);
  timers.clear();
  return new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** A fresh record of a received request, its body and status still to come. */
export function receivedRequest(request: http.IncomingMessage): SimulatorReceivedRequest {
  return {
    method: request.method ?? 'GET',
    path: request.url ?? '/',
    headers: request.headers,
    body: '',
    status: 0,
    at: Date.now(),
  };
}

/** The body as text; rejects (and drops the connection) past `maxBytes`. */
export function readBody(request: http.IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(new Error('request body too large'));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** A path parameter decoded, or undefined for a malformed escape (`%zz`), which names no resource. */
export function decodedOrUndefined(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/**
 * Resolves with `ready()`'s value once it has one, checking now and whenever the simulator calls its
 * listeners; rejects after `timeoutMs`, naming the simulator and `what` it waited for.
 */
export function waitUntil<T>(
  listeners: Set<() => void>,
  ready: () => T | undefined,
  timeoutMs: number,
  what: string,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const value = ready();
      if (value === undefined) return;
      listeners.delete(check);
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => {
      listeners.delete(check);
      reject(new Error(`simulator: timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    listeners.add(check);
    check();
  });
}
