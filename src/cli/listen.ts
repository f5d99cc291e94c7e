/**
 * `mkoba listen --forward-to URL`: forwards a server's live events to a local endpoint, so an integrator
 * can develop a webhook receiver against the sandbox without a public URL. It polls `GET /v1/events` with
 * an API key and POSTs each new event's envelope to the URL exactly as a webhook delivery looks:
 * `Content-Type: application/json`, `Service-Event-Id`, and `Service-Signature` made with a secret this
 * command generates and prints once at start (or the one given with --secret).
 *
 * Which events are new: ids sort by creation time only to the millisecond, and transactions commit in
 * any order, so a "last seen id" alone would skip an event committed late. Each poll therefore reads
 * every event created since the previous poll began, minus a look-back, by the server's clock (its Date
 * header); ids already seen are skipped, and forgotten once they fall out of the window. Events that
 * existed when the command started are never forwarded.
 *
 * Forwarding is in creation order, one event at a time; a failed forward (no answer, or not 2xx) is tried
 * again a bounded number of times with growing delays, then given up on (GET /v1/events still has it).
 */
import { randomBytes } from 'node:crypto';
import type { EventType } from '../domain/events.ts';
import { PAGE_SIZE_MAX } from '../domain/pagination.ts';
import { isPayloadVersion, PAYLOAD_VERSIONS, type PayloadVersion } from '../domain/payloadVersions.ts';
import {
  formatWebhookSecret,
  isWebhookSecret,
  signatureHeader,
  unixSeconds,
  WEBHOOK_EVENT_ID_HEADER,
  WEBHOOK_SECRET_RANDOM_BYTES,
  WEBHOOK_SIGNATURE_HEADER,
} from '../domain/signing.ts';
import { PAYLOAD_FORMATS, type PayloadFormat, toCamelCase } from '../domain/webhooks.ts';
import {
  ApiError,
  type ApiTarget,
  ApiUnreachableError,
  apiRequest,
  checkEventType,
  reasonOf,
} from './apiClient.ts';
import { UsageError } from './usageError.ts';

/** How often the server is asked for new events. */
export const LISTEN_POLL_INTERVAL_MS = 1_000;
/** Each poll also re-reads events created this long before the previous poll began: commits land late. */
export const LISTEN_LOOKBACK_MS = 30_000;
/** Pages of events one poll reads at most; beyond that the oldest of the window are skipped, with a warning. */
export const LISTEN_POLL_PAGES_MAX = 50;
/** One forward to the local endpoint, connection to answer. */
export const LISTEN_FORWARD_TIMEOUT_MS = 10_000;
/** Waits before each retry of a failed forward; its length is the number of retries. */
export const LISTEN_FORWARD_RETRY_DELAYS_MS: readonly number[] = [500, 1_000, 2_000];
/** How long the server may stay unreachable (or answer 5xx) before listen gives up and exits 1. */
export const LISTEN_SERVER_UNREACHABLE_MS_MAX = 300_000;

export interface ListenOptions {
  target: ApiTarget;
  forwardTo: string;
  /** Only these types are forwarded; all when undefined. */
  eventTypes: readonly EventType[] | undefined;
  /** Sign with this secret instead of a new one, so a receiver's configuration survives a restart. */
  secret: string | undefined;
  /** The spelling forwarded, as a subscription with this `payload_format` receives it. */
  payloadFormat: PayloadFormat;
  /** The payload version forwarded; the server's newest when undefined. */
  apiVersion: PayloadVersion | undefined;
}

export interface ListenIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** The wire form of an event, as `GET /v1/events` returns it and a delivery carries it. */
interface EventEnvelope {
  id: string;
  type: string;
  created_at: string;
  [field: string]: unknown;
}

interface EventList {
  data: EventEnvelope[];
  has_more: boolean;
  next_cursor: string | null;
}

export function listenOptionsOf(
  flags: {
    'forward-to'?: string | undefined;
    events?: string | undefined;
    secret?: string | undefined;
    'payload-format'?: string | undefined;
    'api-version'?: string | undefined;
  },
  target: ApiTarget,
): ListenOptions {
  const forwardTo = flags['forward-to'];
  if (forwardTo === undefined || forwardTo.trim() === '') {
    throw new UsageError('listen needs --forward-to URL, e.g. --forward-to http://localhost:3000/webhooks');
  }
  let url: URL;
  try {
    url = new URL(forwardTo.trim());
  } catch {
    throw new UsageError(`--forward-to must be an http(s) URL; got '${forwardTo}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--forward-to must be an http(s) URL; got '${forwardTo}'`);
  }
  let eventTypes: EventType[] | undefined;
  if (flags.events !== undefined) {
    const names = flags.events
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    if (names.length === 0) throw new UsageError('--events takes a comma-separated list of event types');
    eventTypes = [...new Set(names.map((name) => checkEventType(name, '--events')))];
  }
  if (flags.secret !== undefined && !isWebhookSecret(flags.secret)) {
    throw new UsageError('--secret must be a whsec_… secret as mkoba listen prints it');
  }
  const payloadFormat = flags['payload-format'] ?? 'snake_case';
  if (!(PAYLOAD_FORMATS as readonly string[]).includes(payloadFormat)) {
    throw new UsageError(`--payload-format is one of ${PAYLOAD_FORMATS.join(', ')}; got '${payloadFormat}'`);
  }
  const apiVersion = flags['api-version'];
  if (apiVersion !== undefined && !isPayloadVersion(apiVersion)) {
    throw new UsageError(`--api-version is one of ${PAYLOAD_VERSIONS.join(', ')}; got '${apiVersion}'`);
  }
  return {
    target,
    forwardTo: url.toString(),
    eventTypes,
    secret: flags.secret,
    payloadFormat: payloadFormat as PayloadFormat,
    apiVersion,
  };
}

/** Runs until Ctrl-C (SIGINT) or SIGTERM: 0 then, 1 when the server refuses the key or stays away. */
export async function runListen(options: ListenOptions, io: ListenIo): Promise<number> {
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await listen(options, io, controller.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

export async function listen(options: ListenOptions, io: ListenIo, signal: AbortSignal): Promise<number> {
  const { target } = options;
  const secret = options.secret ?? formatWebhookSecret(randomBytes(WEBHOOK_SECRET_RANDOM_BYTES));
  const wanted = (type: string) =>
    options.eventTypes === undefined || (options.eventTypes as readonly string[]).includes(type);

  // Learn the server's clock (and that it accepts the key), then take what exists now as already seen.
  const probe = await apiRequest(target, 'GET', '/events?limit=1', { signal }).catch((error: unknown) =>
    explain(error, target),
  );
  const seen = new Map<string, number>();
  let windowStartMs = probe.serverTimeMs;
  const existing = await readWindow(
    target,
    windowStartMs - LISTEN_LOOKBACK_MS,
    signal,
    options.apiVersion,
  ).catch((error: unknown) => explain(error, target));
  remember(seen, existing.events);
  windowStartMs = Math.max(windowStartMs, existing.serverTimeMs);

  io.out(`Webhook signing secret: ${secret}`);
  io.err(
    `mkoba listen: forwarding ${options.eventTypes ? options.eventTypes.join(', ') : 'all'} events from ${target.base} to ${options.forwardTo}, polling every ${LISTEN_POLL_INTERVAL_MS} ms; Ctrl-C to stop`,
  );

  let unreachableSinceMs: number | undefined;
  while (!signal.aborted) {
    await sleep(LISTEN_POLL_INTERVAL_MS, signal);
    if (signal.aborted) break;
    let window: Awaited<ReturnType<typeof readWindow>>;
    try {
      window = await readWindow(target, windowStartMs - LISTEN_LOOKBACK_MS, signal, options.apiVersion);
    } catch (error) {
      if (signal.aborted) break;
      if (!isTransient(error)) explain(error, target);
      const message = error instanceof Error ? error.message : String(error);
      if (unreachableSinceMs === undefined) {
        unreachableSinceMs = Date.now();
        io.err(`mkoba listen: ${message}; trying again every ${LISTEN_POLL_INTERVAL_MS} ms`);
      } else if (Date.now() - unreachableSinceMs > LISTEN_SERVER_UNREACHABLE_MS_MAX) {
        io.err(`mkoba listen: giving up after ${LISTEN_SERVER_UNREACHABLE_MS_MAX} ms: ${message}`);
        return 1;
      }
      continue;
    }
    if (unreachableSinceMs !== undefined) {
      io.err('mkoba listen: the server answers again');
      unreachableSinceMs = undefined;
    }
    if (window.truncated) {
      io.err(
        `mkoba listen: more than ${LISTEN_POLL_PAGES_MAX * PAGE_SIZE_MAX} events since the last poll; the oldest of them were not forwarded`,
      );
    }
    const fresh = window.events
      .filter((event) => !seen.has(event.id))
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    remember(seen, window.events);
    windowStartMs = Math.max(windowStartMs, window.serverTimeMs);
    forget(seen, windowStartMs - LISTEN_LOOKBACK_MS);
    for (const event of fresh) {
      if (signal.aborted) break;
      if (wanted(event.type)) await forwardWithRetries(event, secret, options, io, signal);
    }
  }
  io.err('mkoba listen: stopped');
  return 0;
}

/** Every event created at or after `sinceMs`, newest first, reading at most LISTEN_POLL_PAGES_MAX pages. */
async function readWindow(
  target: ApiTarget,
  sinceMs: number,
  signal: AbortSignal,
  apiVersion: PayloadVersion | undefined,
): Promise<{ events: EventEnvelope[]; serverTimeMs: number; truncated: boolean }> {
  const events: EventEnvelope[] = [];
  let serverTimeMs: number | undefined;
  let cursor: string | null = null;
  for (let page = 0; page < LISTEN_POLL_PAGES_MAX; page++) {
    const query = new URLSearchParams({
      limit: String(PAGE_SIZE_MAX),
      'created[gte]': new Date(sinceMs).toISOString(),
    });
    if (apiVersion !== undefined) query.set('api_version', apiVersion);
    if (cursor !== null) query.set('starting_after', cursor);
    const answer = await apiRequest(target, 'GET', `/events?${query}`, { signal });
    // The first page's time starts the next window: everything created before it has been read by now.
    serverTimeMs ??= answer.serverTimeMs;
    const list = answer.body as EventList;
    events.push(...list.data);
    if (!list.has_more || list.next_cursor === null) return { events, serverTimeMs, truncated: false };
    cursor = list.next_cursor;
  }
  return { events, serverTimeMs: serverTimeMs ?? Date.now(), truncated: true };
}

function remember(seen: Map<string, number>, events: readonly EventEnvelope[]): void {
  for (const event of events) seen.set(event.id, Date.parse(event.created_at));
}

/** Ids created before the next window's start can never be read again: drop them. */
function forget(seen: Map<string, number>, beforeMs: number): void {
  for (const [id, createdAtMs] of seen) if (createdAtMs < beforeMs) seen.delete(id);
}

function isTransient(error: unknown): boolean {
  return (
    error instanceof ApiUnreachableError ||
    (error instanceof ApiError && (error.status === 429 || error.status >= 500))
  );
}

/** Rethrows an API failure with what to do about it. */
function explain(error: unknown, target: ApiTarget): never {
  if (error instanceof ApiError && error.status === 404) {
    throw new Error(
      `${target.base}/events was not found: is --api-base the API's /v1 address? (${error.message})`,
    );
  }
  throw error;
}

type ForwardOutcome = { status: number; ms: number } | { error: string; ms: number };

async function forwardWithRetries(
  event: EventEnvelope,
  secret: string,
  { forwardTo, payloadFormat }: ListenOptions,
  io: ListenIo,
  signal: AbortSignal,
): Promise<void> {
  // The exact bytes that are signed and sent, in the spelling asked for (read in snake_case, whose
  // `created_at` the polling window keeps); every attempt is signed afresh, as the dispatcher does.
  const body = JSON.stringify(payloadFormat === 'camel_case' ? toCamelCase(event) : event);
  const attemptsMax = LISTEN_FORWARD_RETRY_DELAYS_MS.length + 1;
  for (let attempt = 1; attempt <= attemptsMax; attempt++) {
    const outcome = await forwardOnce(body, event.id, secret, forwardTo, signal);
    if (signal.aborted) return;
    const ok = 'status' in outcome && outcome.status >= 200 && outcome.status <= 299;
    const retryInMs = LISTEN_FORWARD_RETRY_DELAYS_MS[attempt - 1];
    const answer = 'status' in outcome ? String(outcome.status) : outcome.error;
    const next = ok
      ? ''
      : retryInMs === undefined
        ? `; gave up after ${attemptsMax} attempts`
        : `; retry ${attempt} of ${attemptsMax - 1} in ${retryInMs} ms`;
    io.out(`${new Date().toISOString()}  ${event.type}  ${event.id}  -> ${answer} (${outcome.ms} ms)${next}`);
    if (ok || retryInMs === undefined) return;
    await sleep(retryInMs, signal);
    if (signal.aborted) return;
  }
}

async function forwardOnce(
  body: string,
  eventId: string,
  secret: string,
  forwardTo: string,
  signal: AbortSignal,
): Promise<ForwardOutcome> {
  const startedAt = Date.now();
  try {
    const response = await fetch(forwardTo, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Mkoba-Listen/1',
        [WEBHOOK_EVENT_ID_HEADER.toLowerCase()]: eventId,
        [WEBHOOK_SIGNATURE_HEADER.toLowerCase()]: signatureHeader(body, [secret], unixSeconds(new Date())),
      },
      body,
      // A redirect is an answer, not a success: deliveries do not follow them either.
      redirect: 'manual',
      signal: AbortSignal.any([signal, AbortSignal.timeout(LISTEN_FORWARD_TIMEOUT_MS)]),
    });
    await response.body?.cancel();
    return { status: response.status, ms: Date.now() - startedAt };
  } catch (error) {
    return { error: reasonOf(error), ms: Date.now() - startedAt };
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
