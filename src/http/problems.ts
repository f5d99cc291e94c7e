/** RFC 9457 problem+json rendering for every failure: expected ones, framework ones, and bugs. */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { PG_TIMEOUT_RETRY_AFTER_SECONDS, PG_UNAVAILABLE_RETRY_AFTER_SECONDS } from '../config/postgres.ts';
import {
  isDatabaseTimeout,
  isDatabaseUnavailable,
  isPoolTimeout,
  isTransactionConflict,
  SQLSTATE,
  sqlState,
} from '../domain/databaseErrors.ts';
import { AppError, type ErrorCode, problemDocument } from '../domain/errors.ts';
import { type AjvIssue, validationProblem } from './validationProblems.ts';

export { problemType } from '../domain/errors.ts';
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The code of the problem each reply carried, for the request log line. */
const problemCodes = new WeakMap<FastifyReply, ErrorCode>();

export function problemCodeOf(reply: FastifyReply): ErrorCode | undefined {
  return problemCodes.get(reply);
}

/** For a problem sent as stored text (an idempotent replay), so its code is logged too. */
export function rememberProblemCode(reply: FastifyReply, code: ErrorCode): void {
  problemCodes.set(reply, code);
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  problemCodes.set(reply, error.code);
  const problem = problemDocument(error, request.id);
  if (error.retryAfterSeconds !== undefined) reply.header('Retry-After', String(error.retryAfterSeconds));
  if (error.replayed) reply.header('Idempotent-Replayed', 'true');
  // A string payload skips response serialisation: a problem is rendered exactly as built here.
  return reply.code(error.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}

/** A request the database rolled back whole: nothing of it was recorded, so the same request may be retried. */
function notCarriedOut(why: string): AppError {
  return new AppError({
    status: 503,
    code: 'service_unavailable',
    title: 'Service unavailable',
    detail: `${why}, so the request was not carried out. Retry it, with the same Idempotency-Key for a POST.`,
    retryAfterSeconds: PG_TIMEOUT_RETRY_AFTER_SECONDS,
  });
}

/**
 * The database's connection was refused or lost (a failover or restart): a commit in flight may or may not
 * have been carried out, which a retry under the same Idempotency-Key settles.
 */
function databaseUnavailable(): AppError {
  return new AppError({
    status: 503,
    code: 'service_unavailable',
    title: 'Service unavailable',
    detail:
      'The database is unavailable for a moment (a failover or restart). Retry the request, with the same Idempotency-Key for a POST: one already carried out is answered as it was.',
    retryAfterSeconds: PG_UNAVAILABLE_RETRY_AFTER_SECONDS,
  });
}

/**
 * Maps anything thrown while handling a request to an AppError; unknown errors become a 500 without details.
 * `bodyBytesMax` is the route's body limit, named in a 413 so a client knows what to send instead.
 */
export function toAppError(thrown: unknown, bodyBytesMax?: number): AppError {
  const error = thrown instanceof Error ? thrown : new Error(String(thrown));
  if (error instanceof AppError) return error;
  const rolledBack = rolledBackProblem(error);
  if (rolledBack) return rolledBack;
  const fastifyError = error as FastifyError & { validation?: AjvIssue[]; validationContext?: string };
  if (Array.isArray(fastifyError.validation)) {
    return validationProblem(fastifyError.validation, fastifyError.validationContext ?? 'body');
  }
  return (
    bodyParsingProblem(fastifyError.code, bodyBytesMax) ??
    ledgerOverflowProblem(error) ??
    requestProblem(error, fastifyError)
  );
}

/** A time-out or conflict the database rolled the whole request back for: a 503 to retry. */
function rolledBackProblem(error: Error): AppError | undefined {
  if (isDatabaseTimeout(error)) {
    return notCarriedOut('The database did not answer in time (a lock or statement time-out)');
  }
  if (isPoolTimeout(error)) {
    return notCarriedOut('No database connection came free in time (the connection pool is exhausted)');
  }
  if (isDatabaseUnavailable(error)) return databaseUnavailable();
  if (isTransactionConflict(error)) {
    return notCarriedOut(
      'The database rolled the request back to resolve a conflict with a concurrent one (a deadlock or serialization failure)',
    );
  }
  return undefined;
}

/** Fastify's refusals of a body before it was parsed: its media type, its size, or its absence. */
function bodyParsingProblem(
  code: string | undefined,
  bodyBytesMax: number | undefined,
): AppError | undefined {
  switch (code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError({
        status: 415,
        code: 'unsupported_media_type',
        title: 'Unsupported media type',
        detail: "Send request bodies as JSON with 'Content-Type: application/json'.",
        param: 'Content-Type',
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError({
        status: 413,
        code: 'payload_too_large',
        title: 'Payload too large',
        detail:
          bodyBytesMax === undefined
            ? 'The request body is larger than this route accepts.'
            : `The request body is larger than this route accepts (${bodyBytesMax} bytes).`,
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError({
        status: 400,
        code: 'malformed_json',
        title: 'Malformed JSON',
        detail: "The body is empty but 'Content-Type' says JSON: send a JSON object.",
      });
  }
  return undefined;
}

/** A number past what a ledger column holds (PostgreSQL's numeric overflow): the request wrote nothing. */
function ledgerOverflowProblem(error: Error): AppError | undefined {
  if (sqlState(error) !== SQLSTATE.numericValueOutOfRange) return undefined;
  return new AppError({
    status: 422,
    code: 'limit_exceeded',
    title: 'Ledger limit reached',
    detail: 'A number this request would store is beyond what the ledger can hold; nothing was written.',
  });
}

/** Any other error: a client error Fastify raised keeps its status (400 for bad JSON), the rest is a 500. */
function requestProblem(error: Error, fastifyError: FastifyError): AppError {
  const status = fastifyError.statusCode;
  if (status === 400 && (error instanceof SyntaxError || fastifyError.code?.startsWith('FST_ERR_CTP'))) {
    return new AppError({
      status: 400,
      code: 'malformed_json',
      title: 'Malformed JSON',
      detail: `The request body is not valid JSON: ${error.message}`,
    });
  }
  if (status !== undefined && status >= 400 && status < 500) {
    return new AppError({ status, code: 'validation_error', title: 'Bad request', detail: error.message });
  }
  return new AppError({
    status: 500,
    code: 'internal_error',
    title: 'Internal error',
    detail: 'Something went wrong on our side. Quote the request_id if you contact support.',
  });
}

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: a field, header or query parameter is wrong (`validation_error`, `malformed_json`).',
  401: 'The API key is missing, malformed, unknown, revoked or of the other environment. Each failure counts against the `auth_failures` limit of the client address (see `RateLimit`).',
  403: 'The API key lacks the scope this operation needs (`insufficient_permissions`).',
  404: 'No such resource in your organization (`resource_missing`).',
  409: 'A request with this Idempotency-Key is still in progress (`idempotency_key_in_flight`, with `Retry-After`), or the resource is in a state that does not allow the operation (`invalid_state_transition`, `wallet_not_active`, `wallet_not_empty`).',
  413: 'The body is over the size limit, as sent or once decoded (`payload_too_large`).',
  415: 'The body is not JSON, or its Content-Encoding is not gzip, deflate or br (`unsupported_media_type`).',
  422: 'The Idempotency-Key was used with a different request (`idempotency_key_reused`), or the operation was refused (`insufficient_funds`, `limit_exceeded`, `pilot_cap_exceeded`, `amount_not_supported`).',
  429: 'Too many requests (`rate_limited`): this API key or its organization is over its rate limit, or this address has failed key authentication too often. Wait `Retry-After` seconds; `RateLimit` and `RateLimit-Policy` describe the limits.',
  500: 'An unexpected error (`internal_error`).',
  503: 'The database is unreachable (a failover or restart), had no free connection in time, did not answer in time (a lock or statement time-out), or rolled the request back to resolve a conflict with a concurrent one (`service_unavailable`, with `Retry-After`). Retry, with the same Idempotency-Key for a POST: nothing was carried out, or, if the connection was lost as it committed, the retry answers as the first request was answered.',
};

const RETRY_AFTER_HEADER = {
  'Retry-After': {
    type: 'integer',
    minimum: 0,
    description: 'Seconds to wait before retrying the request.',
  },
} as const;

/** The IETF draft fields (draft-ietf-httpapi-ratelimit-headers) sent on rate-limited routes. */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': {
    type: 'string',
    description:
      'Each limit that applies: `"name";q=<burst>;w=<seconds for an empty bucket to refill>`, e.g. `"key";q=200;w=2, "organization";q=400;w=2`.',
  },
  RateLimit: {
    type: 'string',
    description:
      'Each limit\'s state: `"name";r=<requests left now>;t=<seconds until back to the full burst>`.',
  },
} as const;

/** Response headers sent with some problems (see sendProblem and auth.ts), by status. */
const PROBLEM_HEADERS: Record<number, Record<string, object>> = {
  401: {
    'WWW-Authenticate': {
      type: 'string',
      description:
        'The scheme to authenticate with (RFC 6750): `Bearer realm="mkoba"`, plus `error="invalid_token"` and an `error_description` when a key was sent but refused.',
      examples: [
        'Bearer realm="mkoba", error="invalid_token", error_description="The API key has been revoked."',
      ],
    },
  },
  403: {
    'WWW-Authenticate': {
      type: 'string',
      description:
        'For a key that lacks the scope (RFC 6750): `Bearer realm="mkoba", error="insufficient_scope", scope="<scope>"`.',
      examples: ['Bearer realm="mkoba", error="insufficient_scope", scope="write"'],
    },
  },
  409: RETRY_AFTER_HEADER,
  429: { ...RETRY_AFTER_HEADER, ...RATE_LIMIT_HEADERS },
  503: RETRY_AFTER_HEADER,
};

/**
 * The OpenAPI responses of the given problem statuses: each an `application/problem+json` body that
 * references the shared `Problem` schema, so the document names it as a component.
 */
export function problemResponses(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => {
      const description = PROBLEM_DESCRIPTIONS[status];
      if (description === undefined) throw new Error(`no problem description for HTTP status ${status}`);
      const headers = PROBLEM_HEADERS[status];
      return [
        status,
        {
          description,
          ...(headers === undefined ? {} : { headers }),
          content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: 'Problem#' } } },
        },
      ];
    }),
  );
}

export const READ_PROBLEMS = [400, 401, 403, 404, 429, 500, 503];
export const WRITE_PROBLEMS = [400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 503];
