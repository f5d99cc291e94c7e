/**
 * The typed API client: one method per operation of openapi.json (see `MkobaOperations` in generated.ts),
 * over the global `fetch`. Errors are thrown as `MkobaApiError` (an answer from the API, with its stable
 * `code`) or `MkobaConnectionError` (no answer). Every POST carries an `Idempotency-Key`, made per call
 * when you give none, so the client's own retries never repeat an effect.
 */
import { randomUUID } from 'node:crypto';
import { type MkobaOperations, OPERATIONS, type Problem } from './generated.ts';
import type { List, OperationSpec, RequestOptions } from './operation.ts';

export const TIMEOUT_MS_DEFAULT = 30_000;
export const MAX_RETRIES_DEFAULT = 2;
/** First retry delay; each later one doubles, up to the max, with jitter. */
export const RETRY_DELAY_MS_INITIAL = 500;
export const RETRY_DELAY_MS_MAX = 8_000;
/** A `Retry-After` longer than this is not waited for: the error is thrown instead. */
export const RETRY_AFTER_SECONDS_MAX = 10;

/** Answers worth another attempt: the key is still in flight, rate limited, or the server had a problem. */
const RETRYABLE_STATUSES = new Set([409, 429, 500, 502, 503, 504]);
const RETRYABLE_CONFLICT_CODE = 'idempotency_key_in_flight';
const API_PREFIX = '/v1';

export interface ClientOptions {
  /** The server's address, e.g. `http://127.0.0.1:8080`. A trailing `/v1` is accepted and ignored. */
  baseUrl: string;
  /** `sk_sandbox_…`, `sk_pilot_…` or `sk_live_…`. */
  apiKey: string;
  /** Default 30 s per attempt. */
  timeoutMs?: number;
  /** Retries after a network failure, a time-out, 409 in flight, 429 or 5xx. Default 2. */
  maxRetries?: number;
  /** A `fetch` to use instead of the global one (a proxy agent, a test double). */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

export type MkobaClient = MkobaOperations;

/** An error answer from the API: an RFC 9457 problem with a stable `code`. */
export class MkobaApiError extends Error {
  override readonly name = 'MkobaApiError';
  /** The HTTP status. */
  readonly status: number;
  /** Stable snake_case code, e.g. `insufficient_funds`, `validation_error`. */
  readonly code: string;
  /** The field, query parameter or header at fault, when there is one (e.g. `amount`). */
  readonly param: string | undefined;
  /** The request's id (the `Request-Id` header): quote it when you contact support. */
  readonly requestId: string | undefined;
  /** Every field problem, for validation errors. */
  readonly errors: Problem['errors'];
  /** The problem body as received, or null when the answer was not a problem document. */
  readonly problem: Problem | null;
  /** Seconds the server asked to wait before retrying, when it said. */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: {
    status: number;
    code: string;
    message: string;
    param?: string | undefined;
    requestId?: string | undefined;
    errors?: Problem['errors'];
    problem?: Problem | null;
    retryAfterSeconds?: number | undefined;
  }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.param = init.param;
    this.requestId = init.requestId;
    this.errors = init.errors ?? [];
    this.problem = init.problem ?? null;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** No answer from the API: the connection failed or the request timed out. */
export class MkobaConnectionError extends Error {
  override readonly name = 'MkobaConnectionError';
  readonly timedOut: boolean;

  constructor(message: string, options: { cause: unknown; timedOut: boolean }) {
    super(message, { cause: options.cause });
    this.timedOut = options.timedOut;
  }
}

export function createClient(options: ClientOptions): MkobaClient {
  if (!options.apiKey) throw new TypeError('createClient needs an apiKey (sk_sandbox_… or sk_live_…).');
  const baseUrl = normaliseBaseUrl(options.baseUrl);
  const send = options.fetch ?? globalThis.fetch;
  if (typeof send !== 'function') throw new TypeError('No fetch available: use Node 20 or later.');
  const settings = {
    baseUrl,
    apiKey: options.apiKey,
    send,
    timeoutMs: options.timeoutMs ?? TIMEOUT_MS_DEFAULT,
    maxRetries: options.maxRetries ?? MAX_RETRIES_DEFAULT,
    headers: options.headers ?? {},
  };
  const client: Record<string, unknown> = {};
  for (const [operationId, spec] of Object.entries(OPERATIONS) as [string, OperationSpec][]) {
    client[operationId] = (...args: unknown[]) => call(settings, spec, args);
  }
  return client as unknown as MkobaClient;
}

/**
 * Every item of a list, page after page: pass a function that fetches the page after a cursor.
 *
 *   for await (const transfer of paginate((after) => client.listTransfers({ starting_after: after }))) …
 */
export async function* paginate<T>(
  page: (startingAfter: string | undefined) => Promise<List<T>>,
): AsyncGenerator<T> {
  let cursor: string | undefined;
  for (;;) {
    const current = await page(cursor);
    yield* current.data;
    if (!current.has_more || current.next_cursor === null) return;
    cursor = current.next_cursor;
  }
}

interface Settings {
  baseUrl: string;
  apiKey: string;
  send: typeof fetch;
  timeoutMs: number;
  maxRetries: number;
  headers: Record<string, string>;
}

function normaliseBaseUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  let path = url.pathname.replace(/\/+$/, '');
  if (path.endsWith(API_PREFIX)) path = path.slice(0, -API_PREFIX.length);
  return `${url.origin}${path}`;
}

/** Arguments are: path parameters in order, then the body, then the query (each if the operation has one), then options. */
async function call(settings: Settings, spec: OperationSpec, args: unknown[]): Promise<unknown> {
  let index = 0;
  let path = spec.path;
  for (const name of spec.pathParams) {
    const value = args[index++];
    if (typeof value !== 'string' || value === '') throw new TypeError(`${name} must be a non-empty string`);
    path = path.replace(`{${name}}`, encodeURIComponent(value));
  }
  const body =
    spec.body === 'none' ? undefined : (args[index++] ?? (spec.body === 'optional' ? {} : undefined));
  if (spec.body === 'required' && (typeof body !== 'object' || body === null)) {
    throw new TypeError('this operation needs a body object');
  }
  const query = spec.query ? (args[index++] as Record<string, unknown> | undefined) : undefined;
  const options = (args[index] as RequestOptions | undefined) ?? {};

  const url = settings.baseUrl + path + queryString(query);
  const headers: Record<string, string> = {
    accept: 'application/json, application/problem+json',
    authorization: `Bearer ${settings.apiKey}`,
    ...settings.headers,
    ...options.headers,
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (spec.method === 'POST') headers['idempotency-key'] = options.idempotencyKey ?? randomUUID();
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const maxRetries = options.maxRetries ?? settings.maxRetries;
  const timeoutMs = options.timeoutMs ?? settings.timeoutMs;

  for (let attempt = 0; ; attempt++) {
    const outcome = await attemptOnce(settings, spec, url, headers, payload, timeoutMs, options.signal);
    if (outcome.ok) return outcome.value;
    const retryable = attempt < maxRetries && outcome.retryable && !options.signal?.aborted;
    const delayMs = retryable ? retryDelayMs(attempt, outcome.error) : null;
    if (delayMs === null) throw outcome.error;
    await sleep(delayMs, options.signal);
  }
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: Error; retryable: boolean };

async function attemptOnce(
  settings: Settings,
  spec: OperationSpec,
  url: string,
  headers: Record<string, string>,
  payload: string | undefined,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<Outcome> {
  const timeout = AbortSignal.timeout(timeoutMs);
  let response: Response;
  let text: string;
  try {
    response = await settings.send(url, {
      method: spec.method,
      headers,
      ...(payload === undefined ? {} : { body: payload }),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    text = await response.text();
  } catch (cause) {
    if (signal?.aborted) throw signal.reason ?? cause;
    const timedOut = timeout.aborted;
    const message = timedOut
      ? `${spec.method} ${url} timed out after ${timeoutMs} ms`
      : `${spec.method} ${url} failed: ${cause instanceof Error ? cause.message : String(cause)}`;
    return { ok: false, error: new MkobaConnectionError(message, { cause, timedOut }), retryable: true };
  }
  if (response.ok) {
    if (spec.response === 'text') return { ok: true, value: text };
    if (text === '') return { ok: true, value: undefined };
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch {
      const error = new MkobaApiError({
        status: response.status,
        code: 'invalid_response',
        message: `${spec.method} ${url} answered ${response.status} with a body that is not JSON`,
        requestId: response.headers.get('request-id') ?? undefined,
      });
      return { ok: false, error, retryable: false };
    }
  }
  const error = apiError(response, text);
  const retryable =
    RETRYABLE_STATUSES.has(response.status) &&
    (response.status !== 409 || error.code === RETRYABLE_CONFLICT_CODE);
  return { ok: false, error, retryable };
}

function apiError(response: Response, text: string): MkobaApiError {
  let problem: Problem | null = null;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as Problem).code === 'string') {
      problem = parsed as Problem;
    }
  } catch {
    problem = null;
  }
  const retryAfter = Number(response.headers.get('retry-after'));
  const requestId = problem?.request_id ?? response.headers.get('request-id') ?? undefined;
  const code = problem?.code ?? 'unexpected_response';
  const detail = problem?.detail ?? `HTTP ${response.status} ${response.statusText}`.trim();
  return new MkobaApiError({
    status: response.status,
    code,
    message: `${code}: ${detail}`,
    param: problem?.param,
    requestId,
    errors: problem?.errors ?? [],
    problem,
    retryAfterSeconds:
      response.headers.has('retry-after') && Number.isFinite(retryAfter) ? retryAfter : undefined,
  });
}

/** Exponential backoff with jitter, or the server's `Retry-After`; null when that is too long to wait. */
function retryDelayMs(attempt: number, error: Error): number | null {
  if (error instanceof MkobaApiError && error.retryAfterSeconds !== undefined) {
    return error.retryAfterSeconds > RETRY_AFTER_SECONDS_MAX ? null : error.retryAfterSeconds * 1000;
  }
  const ceiling = Math.min(RETRY_DELAY_MS_INITIAL * 2 ** attempt, RETRY_DELAY_MS_MAX);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    params.append(name, value instanceof Date ? value.toISOString() : String(value));
  }
  const encoded = params.toString();
  return encoded === '' ? '' : `?${encoded}`;
}
