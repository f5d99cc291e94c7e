/**
 * The outbound address guard's resolving part, the one place every server-side call out goes through: the
 * resolver that refuses a forbidden address at connect time (`guardedLookup`, DNS rebinding cannot steer a
 * call after its URL was accepted), a `fetch` built on it for adapters (`guardedFetch`: rail partners, a
 * verification provider), and a host's addresses looked up, bounded in time, when a URL is configured
 * (`resolveWithin`). The rules themselves are pure, in src/domain/outboundAddresses.ts.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  checkOutboundUrl,
  isAddressAllowed,
  isIpAddress,
  type OutboundAddressPolicy,
  urlHost,
} from '../domain/outboundAddresses.ts';
import { inOutboundSpan } from '../telemetry/outbound.ts';

/** A call refused because of where it would go (a URL's form, a literal address, or what a name resolves to). */
export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = 'EBLOCKEDADDRESS';
}

/**
 * A resolver that refuses a name any of whose addresses the policy forbids; undefined when the policy
 * allows every address (`allow_private`), so Node's own resolver is used.
 */
export function guardedLookup(policy: OutboundAddressPolicy): LookupFunction | undefined {
  if (policy === 'allow_private') return undefined;
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as LookupAddress[];
      const blocked = list.find((a) => !isAddressAllowed(a.address, policy));
      if (blocked || list.length === 0) {
        return callback(
          new BlockedAddressError(
            `${hostname} resolves to ${blocked?.address ?? 'no address'}, which this deployment does not call`,
          ),
          '',
          0,
        );
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const first = list[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
}

/** The most of an answer's body a guarded fetch reads; a longer answer fails the call. */
export const OUTBOUND_RESPONSE_BYTES_MAX = 1024 * 1024;
/** Kept-alive connections per origin of one guarded fetch. */
export const OUTBOUND_SOCKETS_PER_ORIGIN_MAX = 64;
/** An idle kept-alive connection is closed after this long (a replaced adapter's connections close too). */
export const OUTBOUND_IDLE_SOCKET_MS = 4_000;

export interface OutboundRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** What adapters call instead of the global `fetch`: the same answer, through the guard. */
export type OutboundFetch = (url: string, init?: OutboundRequestInit) => Promise<Response>;

/** Statuses whose Response cannot carry a body. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * A fetch for server-side calls: the URL's form is checked under the policy at each call, a literal address
 * before connecting, a name's addresses when the connection opens (keep-alive connections are reused per
 * origin, each checked when it opened). Refusals reject with `BlockedAddressError`; a signal's abort
 * rejects with its `AbortError`, as `fetch` does.
 */
export function guardedFetch(policy: OutboundAddressPolicy): OutboundFetch {
  const lookup = guardedLookup(policy);
  const agentOptions = {
    keepAlive: true,
    maxSockets: OUTBOUND_SOCKETS_PER_ORIGIN_MAX,
    timeout: OUTBOUND_IDLE_SOCKET_MS,
    ...(lookup ? { lookup } : {}),
  };
  const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
  return (url, init = {}) =>
    inOutboundSpan(
      url,
      init.method ?? 'GET',
      () => guardedCall(url, init, policy, lookup, agents),
      answerStatus,
    );
}

function answerStatus(answer: Response): number {
  return answer.status;
}

/** One call through the guard's agents. */
function guardedCall(
  url: string,
  init: OutboundRequestInit,
  policy: OutboundAddressPolicy,
  lookup: LookupFunction | undefined,
  agents: { http: http.Agent; https: https.Agent },
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const verdict = checkOutboundUrl(url, policy);
    if (!verdict.ok) {
      reject(new BlockedAddressError(`${url} ${verdict.reason}`));
      return;
    }
    const target = new URL(url);
    const host = urlHost(target);
    // A literal address is never looked up, so the resolver's check would not see it: check it here.
    if (isIpAddress(host) && !isAddressAllowed(host, policy)) {
      reject(new BlockedAddressError(`${host} is an address this deployment does not call`));
      return;
    }
    const secure = target.protocol === 'https:';
    const headers: Record<string, string> = { ...init.headers };
    if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
    const request = (secure ? https : http).request(
      target,
      {
        method: init.method ?? 'GET',
        headers,
        agent: secure ? agents.https : agents.http,
        ...(lookup ? { lookup } : {}),
        ...(init.signal ? { signal: init.signal } : {}),
      },
      (response) => readAnswer(request, response, resolve, reject),
    );
    request.on('error', reject);
    request.end(init.body);
  });
}

/**
 * Reads an answer into a `Response`, up to OUTBOUND_RESPONSE_BYTES_MAX: a longer one destroys the request,
 * which fails the call.
 */
function readAnswer(
  request: http.ClientRequest,
  response: http.IncomingMessage,
  resolve: (answer: Response) => void,
  reject: (error: unknown) => void,
): void {
  const chunks: Buffer[] = [];
  let bytes = 0;
  response.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > OUTBOUND_RESPONSE_BYTES_MAX) {
      request.destroy(new Error(`the answer is longer than ${OUTBOUND_RESPONSE_BYTES_MAX} bytes`));
      return;
    }
    chunks.push(chunk);
  });
  response.on('error', reject);
  response.on('end', () => {
    const status = response.statusCode ?? 0;
    const headers = answerHeaders(response);
    try {
      resolve(
        new Response(NULL_BODY_STATUSES.has(status) ? null : Buffer.concat(chunks), {
          status,
          statusText: response.statusMessage ?? '',
          headers,
        }),
      );
    } catch (error) {
      reject(error);
    }
  });
}

function answerHeaders(response: http.IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return headers;
}

/**
 * Every address a host resolves to now, through `resolve`, within `timeoutMs`; rejects with the resolver's
 * error (its `code`, such as ENOTFOUND) or a time-out. Used when a URL is configured, before the
 * connect-time check.
 */
export async function resolveWithin(
  resolve: (hostname: string) => Promise<string[]>,
  host: string,
  timeoutMs: number,
): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([resolve(host), late]);
  } finally {
    clearTimeout(timer);
  }
}
