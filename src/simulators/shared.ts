/**
 * What every partner simulator's HTTP side needs, whatever partner it plays: listening on a loopback port
 * (plain HTTP, or HTTPS under the simulator's own fixed test certificate, for clients that only speak HTTPS
 * or only reach a partner's fixed host name), recording a request as it arrives, reading a bounded body,
 * decoding a path parameter, answering JSON, scheduled work it can wait for (so a
 * test knows when it is idle), posting a callback, and closing.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

/** The part of a simulator's state that scheduled work and waits use. */
export interface SimulatorWork {
  busy: number;
  closed: boolean;
  timers: Set<NodeJS.Timeout>;
  listeners: Set<() => void>;
}

/** A new simulator's work: nothing scheduled, nobody waiting. */
export function newSimulatorWork(): SimulatorWork {
  return { busy: 0, closed: false, timers: new Set(), listeners: new Set() };
}

/** A simulator's TLS identity: a certificate (PEM) and its private key (PEM). Test keys only. */
export interface SimulatorTlsIdentity {
  cert: string;
  key: string;
}

export interface SimulatorListenOptions {
  port?: number | undefined;
  host?: string | undefined;
  /** When set, the simulator speaks HTTPS with this identity. */
  tls?: SimulatorTlsIdentity | undefined;
  /**
   * Test-only: runs once each answer has been written out (the partner has accepted or refused the
   * request), so a test can act at that moment, such as killing the client before it records the answer.
   */
  afterAnswer?: ((request: http.IncomingMessage, response: http.ServerResponse) => void) | undefined;
  /**
   * Test-only: runs once each answer is decided (its status set), just before it is written out, so a test
   * can kill the client after the partner has accepted the request and before any of the answer reaches it.
   */
  beforeAnswer?: ((request: http.IncomingMessage, response: http.ServerResponse) => void) | undefined;
}

/**
 * Starts `handler` on the port and address asked for (an ephemeral port on 127.0.0.1 by default); answers
 * the server and its origin, without a trailing slash: `https://…` under TLS, `http://…` otherwise.
 */
export async function listenSimulator(
  handler: http.RequestListener,
  options: SimulatorListenOptions,
): Promise<{ server: http.Server; url: string }> {
  const { afterAnswer, beforeAnswer } = options;
  const listener: http.RequestListener =
    afterAnswer || beforeAnswer
      ? (request, response) => {
          if (afterAnswer) response.once('finish', () => afterAnswer(request, response));
          if (beforeAnswer) {
            // Headers are buffered until the body is written, so nothing has left before `end`.
            const end = response.end.bind(response) as (...args: unknown[]) => http.ServerResponse;
            response.end = ((...args: unknown[]) => {
              beforeAnswer(request, response);
              return end(...args);
            }) as typeof response.end;
          }
          handler(request, response);
        }
      : handler;
  const server = options.tls ? https.createServer(options.tls, listener) : http.createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { server, url: `${options.tls ? 'https' : 'http'}://${host}:${address.port}` };
}

/** Stops scheduled work and the server, dropping open connections. */
export function closeSimulator(work: SimulatorWork, server: http.Server): Promise<void> {
  work.closed = true;
  for (const timer of work.timers) clearTimeout(timer);
  work.timers.clear();
  return closeServer(server);
}

/** Stops the server, dropping open connections. */
export function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** The request's body as text; rejects (and drops the connection) past `maxBytes`. */
export function readRequestBody(request: http.IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
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

/**
 * Reads the request's body to its end, keeping none of it past `maxBytes`, then calls `done` with its text
 * ('' when past the limit, with `tooLarge`): for partners that answer an oversized body rather than drop it.
 */
export function onBodyRead(
  request: http.IncomingMessage,
  maxBytes: number,
  done: (rawBody: string, tooLarge: boolean) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  request.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= maxBytes) chunks.push(chunk);
  });
  request.on('end', () => {
    const tooLarge = size > maxBytes;
    done(tooLarge ? '' : Buffer.concat(chunks).toString('utf8'), tooLarge);
  });
}

/** Runs `task` after `ms`, counting it as scheduled work until it is done. */
export function schedule(work: SimulatorWork, ms: number, task: () => Promise<void> | void): void {
  work.busy += 1;
  const timer = setTimeout(async () => {
    work.timers.delete(timer);
    try {
      await task();
    } finally {
      work.busy -= 1;
      notifyWaiting(work);
    }
  }, ms);
  work.timers.add(timer);
}

/** Lets every wait (waitFor) check again: something it may be waiting for has changed. */
export function notifyWaiting(work: Pick<SimulatorWork, 'listeners'>): void {
  for (const listener of [...work.listeners]) listener();
}

/** Resolves with `ready()`'s value once it has one, checking now and after each piece of scheduled work. */
export function waitFor<T>(
  work: Pick<SimulatorWork, 'listeners'>,
  ready: () => T | undefined,
  timeoutMs: number,
  what: string,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const value = ready();
      if (value === undefined) return;
      work.listeners.delete(check);
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => {
      work.listeners.delete(check);
      reject(new Error(`simulator: timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    work.listeners.add(check);
    check();
  });
}

/** A request a simulator received, as its tests read it. */
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

/** A path parameter decoded, or undefined for a malformed escape (`%zz`), which names no resource. */
export function decodedOrUndefined(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** The record of a request as it arrives, before its body is read or it is answered (status 0). */
export function arrivingRequest(request: http.IncomingMessage): SimulatorReceivedRequest {
  return {
    method: request.method ?? 'GET',
    path: request.url ?? '/',
    headers: request.headers,
    body: '',
    status: 0,
    at: Date.now(),
  };
}

/** A JSON answer: its status, body, and any headers of its own. */
export interface JsonAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * Records a request as it arrives, reads its body, waits the simulator's latency (read once the body is in),
 * and writes `answer`'s JSON; a body past `maxBytes` (or a failure to answer) is answered `tooLarge`.
 */
export async function answerJson(
  requests: SimulatorReceivedRequest[],
  request: http.IncomingMessage,
  response: http.ServerResponse,
  options: {
    maxBytes: number;
    latencyMs: () => number;
    tooLarge: JsonAnswer;
    answer: (record: SimulatorReceivedRequest) => JsonAnswer;
  },
): Promise<void> {
  const record = arrivingRequest(request);
  requests.push(record);
  let result: JsonAnswer;
  try {
    record.body = await readRequestBody(request, options.maxBytes);
    const latencyMs = options.latencyMs();
    if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
    result = options.answer(record);
  } catch {
    result = options.tooLarge;
  }
  record.status = result.status;
  response
    .writeHead(result.status, { ...result.headers, 'Content-Type': 'application/json; charset=utf-8' })
    .end(JSON.stringify(result.body));
}

/** Sends a callback; answers the receiver's status, or the error that kept it from answering. */
export async function sendCallback(
  url: string,
  request: { method: string; headers: Record<string, string>; body: string },
  timeoutMs: number,
): Promise<{ status?: number; error?: string }> {
  try {
    const response = await fetch(url, { ...request, signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return { status: response.status };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
