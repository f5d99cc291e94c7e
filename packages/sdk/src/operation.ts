/** The shapes the generated operation table and the client share. */

/** Per-call options every client method takes last. */
export interface RequestOptions {
  /**
   * Makes a POST safe to retry: a retry with the same key and body returns the original result. When not
   * given, the client makes one per call and reuses it for its own retries.
   */
  idempotencyKey?: string;
  /** Aborts the request (and any retries). */
  signal?: AbortSignal;
  /** Overrides the client's time-out for this call. */
  timeoutMs?: number;
  /** Overrides the client's retry count for this call. */
  maxRetries?: number;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What the client needs to know to call one operation of openapi.json. */
export interface OperationSpec {
  method: HttpMethod;
  path: string;
  /** Path parameters in the order the method takes them. */
  pathParams: readonly string[];
  /** Whether the method takes a body argument, and whether the body must be sent. */
  body: 'none' | 'optional' | 'required';
  /** Whether the method takes a query argument. */
  query: boolean;
  /** How the 2xx response is read. */
  response: 'json' | 'text';
}

/** One page of a list endpoint. */
export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  /** Pass as `starting_after` to get the next page; null on the last page. */
  next_cursor: string | null;
}
