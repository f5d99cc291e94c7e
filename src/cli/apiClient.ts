/**
 * The HTTP side of the CLI commands that talk to a running server (`mkoba listen`, `mkoba trigger`): where
 * the server is, which key to use, and one bounded JSON request. Nothing here opens a database.
 */
import { parseApiKey } from '../domain/apiKeys.ts';
import { EVENT_TYPES, type EventType } from '../domain/events.ts';
import { UsageError } from './usageError.ts';

export const API_BASE_DEFAULT = 'http://127.0.0.1:8080/v1';
/** One API call from the CLI, connection to last byte. */
export const CLI_API_TIMEOUT_MS = 10_000;
/** What an error message quotes of an answer that is not a problem document. */
const ANSWER_EXCERPT_CHARS_MAX = 200;

export interface ApiTarget {
  /** The base address including `/v1`, without a trailing slash. */
  base: string;
  key: string;
}

/** `--api-base` (or MKOBA_API_BASE) and `--api-key` (or MKOBA_API_KEY), checked before any request. */
export function apiTargetOf(
  flags: { 'api-base'?: string | undefined; 'api-key'?: string | undefined },
  env: NodeJS.ProcessEnv,
): ApiTarget {
  const key = (flags['api-key'] ?? env.MKOBA_API_KEY ?? '').trim();
  if (key === '') {
    throw new UsageError(
      'needs an API key: --api-key sk_sandbox_… or MKOBA_API_KEY (mkoba serve prints the sandbox key at its first start; mkoba keys create makes another)',
    );
  }
  const parsed = parseApiKey(key);
  if (!parsed.ok) throw new UsageError(`the API key is malformed: ${parsed.fault.message}`);
  const text = (flags['api-base'] ?? env.MKOBA_API_BASE ?? API_BASE_DEFAULT).trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--api-base must be an http(s) URL such as ${API_BASE_DEFAULT}; got '${text}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--api-base must be an http(s) URL such as ${API_BASE_DEFAULT}; got '${text}'`);
  }
  // The sandbox base address already includes /v1 (spec 1); a bare server address gets it added.
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith('/v1') ? path : `${path}/v1`;
  url.search = '';
  url.hash = '';
  return { base: url.toString().replace(/\/+$/, ''), key };
}

/** An event type named on the command line, refused with the list of known ones. */
export function checkEventType(type: string, what: string): EventType {
  if (!(EVENT_TYPES as readonly string[]).includes(type)) {
    throw new UsageError(`unknown event type '${type}' in ${what}; known types: ${EVENT_TYPES.join(', ')}`);
  }
  return type as EventType;
}

/** The server answered, but not with success. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    detail: string,
    /** The problem document, when the answer was one. */
    readonly problem?: unknown,
  ) {
    super(`the server answered ${status}${code ? ` ${code}` : ''}: ${detail}`);
    this.name = 'ApiError';
  }
}

/** No answer at all: refused, reset, timed out, or a name that does not resolve. */
export class ApiUnreachableError extends Error {
  constructor(base: string, cause: unknown) {
    super(`cannot reach ${base} (${reasonOf(cause)}); is mkoba serve running there? (--api-base)`, { cause });
    this.name = 'ApiUnreachableError';
  }
}

export function reasonOf(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return 'timed out';
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    // Node's own codes (ECONNREFUSED) say it best; fetch's (UND_ERR_SOCKET) less than its message.
    if (cause?.code && !cause.code.startsWith('UND_ERR')) return cause.code;
    if (cause?.message) return cause.message;
    return error.message;
  }
  return String(error);
}

export interface ApiAnswer {
  status: number;
  body: unknown;
  /** The server's clock when it answered (its Date header, whole seconds), or ours if it sent none. */
  serverTimeMs: number;
}

/** One request to the API; rejects with ApiError on a non-2xx answer and ApiUnreachableError on none. */
export async function apiRequest(
  target: ApiTarget,
  method: 'GET' | 'POST',
  path: string,
  options: {
    body?: unknown;
    /** A body sent as it is, with its content type (a CSV upload). */
    raw?: { contentType: string; text: string } | undefined;
    headers?: Record<string, string>;
    signal?: AbortSignal | undefined;
  } = {},
): Promise<ApiAnswer> {
  const headers: Record<string, string> = {
    ...options.headers,
    authorization: `Bearer ${target.key}`,
    accept: 'application/json',
  };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.raw !== undefined) headers['content-type'] = options.raw.contentType;
  const payload =
    options.raw?.text ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const timeout = AbortSignal.timeout(CLI_API_TIMEOUT_MS);
  let response: Response;
  let text: string;
  try {
    response = await fetch(`${target.base}${path}`, {
      method,
      headers,
      ...(payload === undefined ? {} : { body: payload }),
      signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
      redirect: 'error',
    });
    text = await response.text();
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw new ApiUnreachableError(target.base, error);
  }
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: quoted in the error below.
  }
  if (response.status < 200 || response.status > 299) {
    const problem = (typeof body === 'object' && body !== null ? body : {}) as {
      code?: unknown;
      detail?: unknown;
      title?: unknown;
    };
    const detail =
      typeof problem.detail === 'string'
        ? problem.detail
        : typeof problem.title === 'string'
          ? problem.title
          : text.slice(0, ANSWER_EXCERPT_CHARS_MAX);
    throw new ApiError(
      response.status,
      typeof problem.code === 'string' ? problem.code : undefined,
      detail,
      body,
    );
  }
  const date = Date.parse(response.headers.get('date') ?? '');
  return { status: response.status, body, serverTimeMs: Number.isNaN(date) ? Date.now() : date };
}
