/**
 * The webhook HTTP adapter: one POST, bounded in time and in how much of the answer it reads; it never
 * throws, whatever the target or the answer (a failure is a result with an error class). In production
 * every address a name resolves to is checked at connect time, so DNS cannot steer a delivery to a private
 * or loopback address after the URL was accepted (DNS rebinding). Connections are kept alive and reused
 * per origin (a bounded pool per sender), so a busy endpoint is not paid a TCP (and TLS) handshake per
 * delivery; an address is checked when its connection opens, which is when DNS is consulted. The check is the
 * outbound address guard's (src/outbound/guard.ts), the one every server-side call goes through.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIpAddress, isReservedAddress, urlHost } from '../../../domain/outboundAddresses.ts';
import { responseExcerpt, WEBHOOK_RESPONSE_BODY_BYTES_READ_MAX } from '../../../domain/webhooks.ts';
import { BlockedAddressError, guardedLookup } from '../../../outbound/guard.ts';
import { inOutboundSpan } from '../../../telemetry/outbound.ts';

export type SendResult =
  | { kind: 'response'; statusCode: number; body: string; retryAfterSeconds: number | undefined }
  | {
      kind: 'error';
      errorClass: 'timeout' | 'dns' | 'connection' | 'blocked_address' | 'tls' | 'other';
      message: string;
    };

export type WebhookSender = (
  url: string,
  body: string,
  headers: Record<string, string>,
) => Promise<SendResult>;

/** The outbound guard's resolver for `public_only`: every address of a name must be public (production). */
const publicOnlyLookup = guardedLookup('public_only') as LookupFunction;

/** Connections to one origin at most (as many as a process sends at once), open and idle alike. */
export const WEBHOOK_SOCKETS_PER_ORIGIN_MAX = 256;
/**
 * An idle kept-alive connection is closed after this long: under the 5 s that common servers (Node's
 * default among them) keep one, so a delivery is not written to a connection the receiver is closing.
 */
export const WEBHOOK_IDLE_SOCKET_MS = 4_000;

function retryAfterSeconds(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.round((date - Date.now()) / 1000));
}

function classify(error: NodeJS.ErrnoException): Extract<SendResult, { kind: 'error' }>['errorClass'] {
  if (typeof error !== 'object' || error === null) return 'other';
  if (error instanceof BlockedAddressError || error.code === 'EBLOCKEDADDRESS') return 'blocked_address';
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return 'dns';
  if (
    error.code === 'ECONNREFUSED' ||
    error.code === 'ECONNRESET' ||
    error.code === 'EHOSTUNREACH' ||
    error.code === 'ENETUNREACH' ||
    error.code === 'ETIMEDOUT' ||
    error.code === 'ECONNABORTED' ||
    error.code === 'EPIPE'
  )
    return 'connection';
  if (error.code?.startsWith('ERR_TLS') || error.code?.includes('CERT')) return 'tls';
  return 'other';
}

/** How the sender calls out: its deadline for a whole exchange, and whether reserved addresses are refused. */
export interface HttpWebhookSenderOptions {
  timeoutMs: number;
  blockReservedAddresses: boolean;
}

/** The keep-alive pools a sender reuses connections from, one per scheme. */
interface Agents {
  http: http.Agent;
  https: https.Agent;
}

export function httpWebhookSender(options: HttpWebhookSenderOptions): WebhookSender {
  const agentOptions = {
    keepAlive: true,
    maxSockets: WEBHOOK_SOCKETS_PER_ORIGIN_MAX,
    maxFreeSockets: WEBHOOK_SOCKETS_PER_ORIGIN_MAX,
    timeout: WEBHOOK_IDLE_SOCKET_MS,
    ...(options.blockReservedAddresses ? { lookup: publicOnlyLookup } : {}),
  };
  const agents: Agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
  return (url, body, headers) =>
    inOutboundSpan(
      url,
      'POST',
      () =>
        new Promise<SendResult>((resolve) => {
          post({ url, body, headers }, options, agents, exchangeOf(resolve));
        }),
      (result) => (result.kind === 'response' ? result.statusCode : undefined),
    );
}

/** One exchange's answer: the first result settles it and stops its deadline; any later one is dropped. */
interface Exchange {
  readonly settled: boolean;
  finish(result: SendResult): void;
  /** Settles it with what went wrong, classified. */
  failed(error: unknown): void;
  /** The timer of its deadline, stopped when it settles. */
  deadline(timer: NodeJS.Timeout): void;
}

function exchangeOf(resolve: (result: SendResult) => void): Exchange {
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  const finish = (result: SendResult) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    resolve(result);
  };
  return {
    get settled() {
      return settled;
    },
    finish,
    failed: (error: unknown) =>
      finish({
        kind: 'error',
        errorClass: classify(error as NodeJS.ErrnoException),
        message: error instanceof Error ? error.message : String(error),
      }),
    deadline: (t) => {
      timer = t;
    },
  };
}

/** Sends one POST and settles the exchange with its answer, whatever happens. */
function post(
  message: { url: string; body: string; headers: Record<string, string> },
  options: HttpWebhookSenderOptions,
  agents: Agents,
  exchange: Exchange,
): void {
  const { url, body, headers } = message;
  // Whatever throws here (a URL or a header value Node refuses) is an answer, never an exception.
  try {
    const target = new URL(url);
    // A literal address is never looked up, so the resolver's check would not see it: check it here.
    const host = urlHost(target);
    if (options.blockReservedAddresses && isIpAddress(host) && isReservedAddress(host)) {
      exchange.finish({
        kind: 'error',
        errorClass: 'blocked_address',
        message: `${host} is a reserved address`,
      });
      return;
    }
    const secure = target.protocol === 'https:';
    const request = (secure ? https : http).request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: secure ? agents.https : agents.http,
        ...(options.blockReservedAddresses ? { lookup: publicOnlyLookup } : {}),
      },
      (response) => readAnswer(response, request, exchange),
    );
    // One deadline for the whole exchange: connect, send, and read the answer.
    exchange.deadline(
      setTimeout(() => {
        request.destroy(new Error('timeout'));
        exchange.finish({
          kind: 'error',
          errorClass: 'timeout',
          message: `no complete answer within ${options.timeoutMs} ms`,
        });
      }, options.timeoutMs),
    );
    request.on('error', exchange.failed);
    request.end(body);
  } catch (error) {
    exchange.failed(error);
  }
}

/** Reads as much of the answer as the excerpt keeps, then settles the exchange with it. */
function readAnswer(response: http.IncomingMessage, request: http.ClientRequest, exchange: Exchange): void {
  const chunks: Buffer[] = [];
  let bytes = 0;
  const answer = () => {
    try {
      exchange.finish({
        kind: 'response',
        statusCode: response.statusCode ?? 0,
        body: responseExcerpt(Buffer.concat(chunks).subarray(0, WEBHOOK_RESPONSE_BODY_BYTES_READ_MAX)),
        retryAfterSeconds: retryAfterSeconds(response.headers['retry-after']),
      });
    } catch (error) {
      exchange.failed(error);
    }
  };
  response.on('data', (chunk: Buffer) => {
    if (exchange.settled) return;
    chunks.push(chunk);
    bytes += chunk.length;
    // Enough for the excerpt: the status is known, so the rest of the answer is not waited for.
    if (bytes >= WEBHOOK_RESPONSE_BODY_BYTES_READ_MAX) {
      answer();
      request.destroy();
    }
  });
  response.on('end', answer);
  response.on('error', (error) =>
    exchange.finish({ kind: 'error', errorClass: 'connection', message: error.message }),
  );
}
