/** RFC 9457 problem+json rendering for every failure: expected ones, framework ones, and bugs. */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { PG_TIMEOUT_RETRY_AFTER_SECONDS } from '../config.ts';
import { PHONE_PATTERN } from '../domain/customers.ts';
import {
  isDatabaseTimeout,
  isPoolTimeout,
  isTransactionConflict,
  SQLSTATE,
  sqlState,
} from '../domain/databaseErrors.ts';
import {
  AppError,
  type ErrorCode,
  type FieldError,
  problemDocument,
  validationErrors,
} from '../domain/errors.ts';
import { IDEMPOTENCY_KEY_LENGTH_MAX, IDEMPOTENCY_KEY_PATTERN } from '../domain/idempotency.ts';

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

interface AjvIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  /** Set by Ajv on an error inside `propertyNames`: the key that failed. */
  propertyName?: string;
}

const AJV_KEYWORD_CODES: Record<string, string> = {
  required: 'missing',
  additionalProperties: 'unknown_field',
  type: 'invalid_type',
  enum: 'invalid_value',
  const: 'invalid_value',
  pattern: 'invalid_format',
  format: 'invalid_format',
  minLength: 'too_short',
  maxLength: 'too_long',
  minimum: 'out_of_range',
  maximum: 'out_of_range',
  exclusiveMinimum: 'out_of_range',
  exclusiveMaximum: 'out_of_range',
  multipleOf: 'invalid_value',
  maxProperties: 'too_many',
  minProperties: 'too_few',
  maxItems: 'too_many',
  minItems: 'too_few',
  uniqueItems: 'invalid_value',
  propertyNames: 'invalid_key',
};

/** The canonical spelling of header names used as a `param`. */
const HEADER_PARAMS: Record<string, string> = { 'idempotency-key': 'Idempotency-Key' };

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/** Patterns that mean something to a reader, in words; any other pattern is quoted. */
const PATTERN_WORDING = new Map<string, string>([
  [
    IDEMPOTENCY_KEY_PATTERN,
    `must be 1 to ${IDEMPOTENCY_KEY_LENGTH_MAX} printable ASCII characters, without spaces`,
  ],
  [PHONE_PATTERN, 'must be in international format, e.g. +254712345678'],
  ['^\\S+$', 'must not contain spaces'],
]);

const FORMAT_WORDING: Record<string, string> = {
  'date-time': 'must be an RFC 3339 date-time, e.g. 2025-01-31T09:30:00Z',
  email: 'must be an email address',
  uri: 'must be a URL',
};

/** `^wallet_[…]{26}$` or `^(?:wallet|acct)_[…]{26}$`: an id pattern from idPattern(), its prefixes and length. */
const ID_PATTERN = /^\^(?:\(\?:)?([a-z|]+)\)?_\[0-9a-hjkmnp-tv-z\]\{(\d+)\}\$$/;

function listInWords(items: string[], conjunction: string): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} ${conjunction} ${items[items.length - 1]}`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function patternWording(pattern: string): string {
  const known = PATTERN_WORDING.get(pattern);
  if (known !== undefined) return known;
  const id = ID_PATTERN.exec(pattern);
  if (id?.[1] !== undefined) {
    const forms = id[1].split('|').map((prefix) => `${prefix}_<${id[2]} characters>`);
    return `must be an id of the form ${listInWords(forms, 'or')}`;
  }
  return `must match the pattern ${pattern}`;
}

/** What a failed keyword means, in our words: the predicate after the field's name. */
function ajvWording(issue: AjvIssue, isBody: boolean): string {
  const p = issue.params;
  const limit = Number(p.limit);
  switch (issue.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'type': {
      const types = Array.isArray(p.type) ? (p.type as string[]) : String(p.type).split(',');
      return `must be ${listInWords(
        types.map((t) => TYPE_NAMES[t] ?? t),
        'or',
      )}`;
    }
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'pattern':
      return patternWording(String(p.pattern));
    case 'format':
      return FORMAT_WORDING[String(p.format)] ?? `must be a valid ${String(p.format)}`;
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `must be at least ${plural(limit, 'character')}`;
    case 'maxLength':
      return `must be at most ${plural(limit, 'character')}`;
    case 'minimum':
      return `must be at least ${limit}`;
    case 'maximum':
      return `must be at most ${limit}`;
    case 'exclusiveMinimum':
      return `must be greater than ${limit}`;
    case 'exclusiveMaximum':
      return `must be less than ${limit}`;
    case 'multipleOf':
      return `must be a multiple of ${String(p.multipleOf)}`;
    case 'minProperties':
      return `must have at least ${plural(limit, isBody ? 'field' : 'key')}`;
    case 'maxProperties':
      return `may have at most ${plural(limit, isBody ? 'field' : 'key')}`;
    case 'minItems':
      return `must have at least ${plural(limit, 'item')}`;
    case 'maxItems':
      return `may have at most ${plural(limit, 'item')}`;
    case 'uniqueItems':
      return `must not repeat an item (items ${String(p.j)} and ${String(p.i)} are the same)`;
    case 'propertyNames':
      return 'is not an allowed key';
    case 'anyOf':
    case 'oneOf':
      return 'does not match any of the allowed forms';
    default:
      return 'is invalid';
  }
}

function fieldErrorFromAjv(issue: AjvIssue, context: string): FieldError {
  const segments = issue.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (issue.keyword === 'type' && segments.length === 0 && context === 'body') {
    return { param: 'body', code: 'invalid_type', message: 'The request body must be a JSON object.' };
  }
  const isBody = segments.length === 0 && context === 'body';
  let code = AJV_KEYWORD_CODES[issue.keyword] ?? 'invalid';
  let predicate = ajvWording(issue, isBody);
  const container = segments.join('.');
  if (issue.keyword === 'required') segments.push(String(issue.params.missingProperty));
  if (issue.keyword === 'additionalProperties') segments.push(String(issue.params.additionalProperty));
  if (issue.keyword === 'propertyNames') segments.push(String(issue.params.propertyName));
  if (issue.propertyName !== undefined) {
    // A rule on the keys of an object (metadata): the key is at fault, not the object.
    segments.push(issue.propertyName);
    code = 'invalid_key';
    predicate = `key ${JSON.stringify(issue.propertyName)} ${predicate}`;
  }
  let param = segments.join('.');
  if (context === 'headers') param = HEADER_PARAMS[param] ?? param;
  const subject = param === '' ? (context === 'body' ? 'body' : context) : param;
  const named = issue.propertyName !== undefined ? container || 'body' : subject;
  return { param: subject, code, message: `${named} ${predicate}` };
}

/**
 * Ajv reports a key that breaks `propertyNames` twice: the rule it broke, then "property name must be
 * valid". The first says why; the second is dropped.
 */
function withoutRepeatedKeyIssues(issues: AjvIssue[]): AjvIssue[] {
  // One pass to index the keys reported, one to drop: a body may bring tens of thousands of issues.
  const reportedKeys = new Set(
    issues.flatMap((issue) =>
      issue.propertyName === undefined ? [] : [JSON.stringify([issue.instancePath, issue.propertyName])],
    ),
  );
  return issues.filter(
    (issue) =>
      issue.keyword !== 'propertyNames' ||
      !reportedKeys.has(JSON.stringify([issue.instancePath, String(issue.params.propertyName)])),
  );
}

/** Each field error once, in order: linear, since a body may bring tens of thousands of them. */
function withoutRepeatedFieldErrors(errors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((error) => {
    const key = JSON.stringify([error.param, error.code]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * A `oneOf` told apart by a discriminator reports a missing or unknown tag twice: the tag's own rule
 * (`required`, `enum`), which names the field, then the discriminator's. The first says why; the second is
 * dropped.
 */
function withoutRepeatedTagIssues(issues: AjvIssue[]): AjvIssue[] {
  return issues.filter((issue) => {
    if (issue.keyword !== 'discriminator') return true;
    const tag = String(issue.params.tag);
    return !issues.some(
      (other) =>
        (other.instancePath === `${issue.instancePath}/${tag}` && other.keyword !== 'discriminator') ||
        (other.instancePath === issue.instancePath &&
          other.keyword === 'required' &&
          other.params.missingProperty === tag),
    );
  });
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
 * Maps anything thrown while handling a request to an AppError; unknown errors become a 500 without details.
 * `bodyBytesMax` is the route's body limit, named in a 413 so a client knows what to send instead.
 */
export function toAppError(thrown: unknown, bodyBytesMax?: number): AppError {
  const error = thrown instanceof Error ? thrown : new Error(String(thrown));
  if (error instanceof AppError) return error;
  if (isDatabaseTimeout(error)) {
    return notCarriedOut('The database did not answer in time (a lock or statement time-out)');
  }
  if (isPoolTimeout(error)) {
    return notCarriedOut('No database connection came free in time (the connection pool is exhausted)');
  }
  if (isTransactionConflict(error)) {
    return notCarriedOut(
      'The database rolled the request back to resolve a conflict with a concurrent one (a deadlock or serialization failure)',
    );
  }
  const fastifyError = error as FastifyError & { validation?: AjvIssue[]; validationContext?: string };
  if (Array.isArray(fastifyError.validation)) {
    const context = fastifyError.validationContext ?? 'body';
    // A field unknown both to the body and to the form its discriminator picked is named once.
    const errors = withoutRepeatedFieldErrors(
      withoutRepeatedTagIssues(withoutRepeatedKeyIssues(fastifyError.validation)).map((issue) =>
        fieldErrorFromAjv(issue, context),
      ),
    );
    return validationErrors(errors);
  }
  switch (fastifyError.code) {
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
  if (sqlState(error) === SQLSTATE.numericValueOutOfRange) {
    return new AppError({
      status: 422,
      code: 'limit_exceeded',
      title: 'Ledger limit reached',
      detail: 'A number this request would store is beyond what the ledger can hold; nothing was written.',
    });
  }
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
  503: 'The database is unreachable, had no free connection in time, did not answer in time (a lock or statement time-out), or rolled the request back to resolve a conflict with a concurrent one (`service_unavailable`, with `Retry-After`). Nothing was carried out; retry, with the same Idempotency-Key for a POST.',
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
